package records

import (
	"math"

	"github.com/dpsolve/dpsolve/internal/resources"
)

// AvailableMemory returns the memory this process may allocate, as every
// dpsolve command reads it (resources.Available: DPSOLVE_MEMORY_LIMIT when
// set, else the smaller of the cgroup limit and the physical memory). It is
// an upper bound — other processes share it — so callers refuse
// allocations that exceed it rather than trust allocations below it. ok is
// false when nothing could be read (not Linux).
func AvailableMemory() (m resources.Memory, ok bool) {
	m = resources.Available()
	return m, !math.IsInf(m.Bytes, 1)
}

// checkFits refuses an allocation of need bytes (what) that exceeds the
// limit: opt.MemoryLimit when set, else AvailableMemory. The refusal is
// worded by resources.Refusal, as every dpsolve memory refusal is (the
// whole limit is usable here: Share 1).
func checkFits(need float64, what string, opt *Options) error {
	var lim resources.Memory
	if opt != nil && opt.MemoryLimit > 0 {
		lim = resources.Memory{Bytes: float64(opt.MemoryLimit), Source: "Options.MemoryLimit"}
	} else if m, ok := AvailableMemory(); ok {
		lim = m
	} else {
		return nil // no figure to compare with: let the allocation decide
	}
	if need > lim.Bytes {
		return errorf("%w", &resources.Refusal{What: what, Need: need, Avail: lim,
			Hint: "use a plan that needs only marginal tables, or fewer attributes"})
	}
	return nil
}
