package records

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/dpsolve/dpsolve/internal/resources"
)

// Memory is the memory a process may use, and where that figure came from.
type Memory struct {
	// Bytes is the limit in bytes.
	Bytes uint64
	// Source says where Bytes was read ("cgroup memory.max", "physical
	// memory (/proc/meminfo MemTotal)", or "Options.MemoryLimit").
	Source string
}

// String formats the limit, e.g. "24.0 GiB (physical memory (/proc/meminfo MemTotal))".
func (m Memory) String() string { return fmt.Sprintf("%s (%s)", FormatBytes(m.Bytes), m.Source) }

// AvailableMemory returns the memory this process may allocate: the cgroup
// v2 limit /sys/fs/cgroup/memory.max when one is set and smaller than the
// physical memory, else the physical memory (MemTotal in /proc/meminfo). It
// is an upper bound — other processes share it — so callers refuse
// allocations that exceed it rather than trust allocations below it. ok is
// false when neither file could be read (not Linux). DPSOLVE_MEMORY_LIMIT,
// when set, overrides both, as for every dpsolve command.
func AvailableMemory() (m Memory, ok bool) {
	// The override every dpsolve command honours (internal/resources), so a
	// release and the other commands plan against the same limit.
	if v := os.Getenv(resources.EnvLimit); v != "" {
		if b, err := resources.ParseBytes(v); err == nil && b < 1<<63 {
			return Memory{Bytes: uint64(b), Source: resources.EnvLimit}, true
		}
	}
	phys, physOK := memTotal("/proc/meminfo")
	cg, cgOK := cgroupMax("/sys/fs/cgroup/memory.max")
	switch {
	case cgOK && (!physOK || cg < phys):
		return Memory{Bytes: cg, Source: "cgroup memory.max"}, true
	case physOK:
		return Memory{Bytes: phys, Source: "physical memory (/proc/meminfo MemTotal)"}, true
	}
	return Memory{}, false
}

// cgroupMax reads a cgroup v2 memory.max file ("max" means no limit).
func cgroupMax(path string) (uint64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return 0, false
	}
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil && v > 0
}

// memTotal reads MemTotal (kB) from /proc/meminfo.
func memTotal(path string) (uint64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseUint(fields[1], 10, 64)
			return kb * 1024, err == nil
		}
	}
	return 0, false
}

// FormatBytes formats a byte count with a binary unit, e.g. "2.0 GiB".
func FormatBytes(b uint64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	v, u := float64(b), 0
	for v >= unit && u < 5 {
		v /= unit
		u++
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGTPE"[u-1])
}

// checkFits refuses an allocation of need bytes (what) that exceeds the
// limit: opt.MemoryLimit when set, else AvailableMemory. The refusal is
// worded by resources.Refusal, as every dpsolve memory refusal is (the
// whole limit is usable here: Share 1).
func checkFits(need float64, what string, opt *Options) error {
	lim := Memory{Bytes: 0}
	if opt != nil && opt.MemoryLimit > 0 {
		lim = Memory{Bytes: opt.MemoryLimit, Source: "Options.MemoryLimit"}
	} else if m, ok := AvailableMemory(); ok {
		lim = m
	} else {
		return nil // no figure to compare with: let the allocation decide
	}
	if need > float64(lim.Bytes) {
		return errorf("%w", &resources.Refusal{What: what, Need: need, Avail: resources.Memory{Bytes: float64(lim.Bytes), Source: lim.Source},
			Hint: "use a plan that needs only marginal tables, or fewer attributes"})
	}
	return nil
}
