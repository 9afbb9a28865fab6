// Package resources tells a command how much memory it may use, so that it
// can refuse a problem that would not fit before allocating it: in Go an
// allocation that the machine cannot satisfy is a fatal runtime error (not
// a recoverable panic) that prints a long stack dump, which is never an
// acceptable answer to a size typed on a command line.
package resources

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// EnvLimit names the environment variable that overrides the detected
// limit, e.g. DPSOLVE_MEMORY_LIMIT=512MiB (tests use it to exercise the
// refusal path on any machine; operators to leave room for other jobs).
const EnvLimit = "DPSOLVE_MEMORY_LIMIT"

// Memory is the memory available to the process.
type Memory struct {
	// Bytes is the limit, in bytes.
	Bytes float64
	// Source says where the figure comes from, for messages: "cgroup limit",
	// "physical memory" or the environment variable.
	Source string
}

// String renders e.g. "24 GiB (physical memory)".
func (m Memory) String() string { return FormatBytes(m.Bytes) + " (" + m.Source + ")" }

// Available returns the smallest of the cgroup memory limit (v2 memory.max,
// or v1 memory.limit_in_bytes) and the physical memory, or the value of
// DPSOLVE_MEMORY_LIMIT when that is set and valid. When nothing can be read
// (a non-Linux system) it returns +Inf with Source "unknown", so callers
// check only what they can know.
func Available() Memory {
	if s := os.Getenv(EnvLimit); s != "" {
		if b, err := ParseBytes(s); err == nil {
			return Memory{Bytes: b, Source: EnvLimit}
		}
	}
	best := Memory{Bytes: math.Inf(1), Source: "unknown"}
	if b, ok := physical(); ok {
		best = Memory{Bytes: b, Source: "physical memory"}
	}
	if b, ok := cgroupLimit(); ok && b < best.Bytes {
		best = Memory{Bytes: b, Source: "cgroup limit"}
	}
	return best
}

// physical reads MemTotal from /proc/meminfo.
func physical() (float64, bool) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseFloat(fields[1], 64)
			if err != nil || !(kb > 0) {
				return 0, false
			}
			return kb * 1024, true
		}
	}
	return 0, false
}

// cgroupLimit returns the tightest memory limit among the cgroup files that
// describe this process. Unlimited cgroups report "max" (v2) or a value
// near 2^63 (v1); both mean no limit.
func cgroupLimit() (float64, bool) {
	candidates := []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}
	if b, err := os.ReadFile("/proc/self/cgroup"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			parts := strings.SplitN(line, ":", 3)
			if len(parts) != 3 || parts[2] == "/" {
				continue
			}
			switch {
			case parts[0] == "0" && parts[1] == "":
				candidates = append(candidates, filepath.Join("/sys/fs/cgroup", parts[2], "memory.max"))
			case strings.Contains(parts[1], "memory"):
				candidates = append(candidates, filepath.Join("/sys/fs/cgroup/memory", parts[2], "memory.limit_in_bytes"))
			}
		}
	}
	best, ok := math.Inf(1), false
	for _, p := range candidates {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		s := strings.TrimSpace(string(b))
		if s == "max" {
			continue
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v > 0) || v >= 1<<62 {
			continue
		}
		if v < best {
			best, ok = v, true
		}
	}
	return best, ok
}

// ParseBytes reads a size such as "1073741824", "512MiB", "2GiB", "1.5G"
// (K, M, G, T with or without "iB" are powers of 1024; "B" is optional).
func ParseBytes(s string) (float64, error) {
	t := strings.TrimSpace(s)
	mult := 1.0
	upper := strings.ToUpper(t)
	for _, u := range []struct {
		suffix string
		mult   float64
	}{{"TIB", 1 << 40}, {"GIB", 1 << 30}, {"MIB", 1 << 20}, {"KIB", 1 << 10},
		{"TB", 1 << 40}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10},
		{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(upper, u.suffix) {
			t, mult = strings.TrimSpace(t[:len(t)-len(u.suffix)]), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("resources: bad memory size %q (want e.g. 512MiB or 2GiB)", s)
	}
	return v * mult, nil
}

// FormatBytes renders a byte count with a binary unit and three significant
// digits, e.g. "74.5 GiB"; sizes beyond exbibytes use exponent notation.
func FormatBytes(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f B", b)
	}
	return fmt.Sprintf("%.3g %s", b, units[i])
}

// Usable is the fraction of the available memory a command plans to use:
// the rest covers the Go runtime, the kernel libraries' buffers and the
// error of the estimates.
const Usable = 0.85

// Check returns a *Refusal when need bytes do not fit in Usable·avail.
// what names the problem ("solve at n = 100000"); the message gives the
// need, the usable share of the limit, the limit and its source, and the
// override (Refusal).
func Check(need float64, avail Memory, what string) error {
	if need <= Usable*avail.Bytes {
		return nil
	}
	return &Refusal{What: what, Need: need, Avail: avail, Share: Usable}
}

// Refusal is a refusal for memory, worded the same way wherever a size is
// refused (the commands' preflight, the record readers, the release, the
// dense Gram of a spec): what needs how much, how much of the limit may be
// used and why, where the limit comes from, what to do instead (Hint), and
// the override (EnvLimit) with the value this problem would need (omitted
// from 1 PiB on, which no override could provide). Only the wording is shared: each caller keeps its own estimate and its own share.
type Refusal struct {
	// What names the problem: "dpsolve solve at n = 100000".
	What string
	// Need is the estimated peak, in bytes.
	Need float64
	// AtLeast says Need is a lower bound ("needs at least") rather than
	// an estimate ("needs about").
	AtLeast bool
	// Avail is the limit and where it comes from.
	Avail Memory
	// Share is the fraction of Avail the check allows: Usable for the
	// commands' peak models, 1 where a need is compared with the whole
	// limit. 0 means 1.
	Share float64
	// Hint says what would fit instead ("the largest n that fits is about
	// 13510"), or is empty.
	Hint string
}

// Error words the refusal, e.g. "dpsolve solve at n = 100000 needs about
// 745 GiB of memory, but only 20 GiB is available to it: 85% of the 23.5
// GiB this machine has (physical memory), the rest left for the Go
// runtime, the kernel libraries and the estimate's error; the largest n
// that fits is about 13510; to plan for another limit set
// DPSOLVE_MEMORY_LIMIT (this needs DPSOLVE_MEMORY_LIMIT=877GiB or more, if
// that much memory is free)".
func (r *Refusal) Error() string {
	share := r.Share
	if !(share > 0 && share < 1) {
		share = 1
	}
	var b strings.Builder
	qual := "about"
	if r.AtLeast {
		qual = "at least"
	}
	fmt.Fprintf(&b, "%s needs %s %s of memory, but only %s is available to it: ", r.What, qual, FormatBytes(r.Need), FormatBytes(share*r.Avail.Bytes))
	limit := fmt.Sprintf("the %s this machine has (%s)", FormatBytes(r.Avail.Bytes), r.Avail.Source)
	if r.Avail.Source == EnvLimit || strings.HasPrefix(r.Avail.Source, "Options.") {
		limit = fmt.Sprintf("the %s limit set by %s", FormatBytes(r.Avail.Bytes), r.Avail.Source)
	}
	if share < 1 {
		fmt.Fprintf(&b, "%.0f%% of %s, the rest left for the Go runtime, the kernel libraries and the estimate's error", 100*share, limit)
	} else {
		b.WriteString(limit)
	}
	if r.Hint != "" {
		b.WriteString("; " + r.Hint)
	}
	if strings.HasPrefix(r.Avail.Source, "Options.") { // a library caller's own limit, which the variable does not change
		fmt.Fprintf(&b, "; to allow more raise %s (this needs %.0f bytes or more)", r.Avail.Source, math.Ceil(r.Need/share))
		return b.String()
	}
	// Beyond 1 PiB no override could help: no value is suggested at all.
	if v, ok := envValue(r.Need / share); ok {
		fmt.Fprintf(&b, "; to plan for another limit set %s (this needs %s=%s or more, if that much memory is free)", EnvLimit, EnvLimit, v)
	}
	return b.String()
}

// WithHint returns err with hint added: to the Refusal's Hint when err is
// a *Refusal, else after err's message.
func WithHint(err error, hint string) error {
	var r *Refusal
	if errors.As(err, &r) && err == error(r) {
		c := *r
		if c.Hint != "" {
			hint = c.Hint + "; " + hint
		}
		c.Hint = hint
		return &c
	}
	return fmt.Errorf("%w; %s", err, hint)
}

// envValue formats b bytes as a value of EnvLimit that ParseBytes reads and
// that is at least b: whole bytes below 1 KiB, else KiB, MiB, GiB or TiB
// rounded up to three significant digits. ok is false from 1024 TiB on,
// which no machine has.
func envValue(b float64) (string, bool) {
	if !(b > 0) || b >= 1<<50 {
		return "", false
	}
	if b < 1<<10 {
		return strconv.FormatFloat(math.Ceil(b), 'f', 0, 64), true
	}
	unit, div := "KiB", float64(1<<10)
	for _, u := range []struct {
		name string
		div  float64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}} {
		if b >= u.div {
			unit, div = u.name, u.div
			break
		}
	}
	v := b / div // in [1, 1024)
	scale := math.Pow(10, 2-math.Floor(math.Log10(v)))
	up := math.Ceil(v*scale-1e-9) / scale // the guard keeps an exact 877.0000000001 at 877…
	if up*div < b {
		up = math.Ceil(v*scale) / scale // …unless that is below b
	}
	return strconv.FormatFloat(up, 'f', -1, 64) + unit, true
}

// LargestN returns the largest n ≥ 0 with need(n) ≤ Usable·avail.Bytes, for
// a need that increases with n (found by doubling and bisection, so any
// polynomial estimate works).
func LargestN(need func(n float64) float64, avail Memory) int {
	budget := Usable * avail.Bytes
	if need(1) > budget {
		return 0
	}
	if math.IsInf(budget, 1) {
		return math.MaxInt
	}
	lo, hi := 1.0, 2.0
	for need(hi) <= budget && hi < 1<<62 {
		lo, hi = hi, hi*2
	}
	for hi-lo > 1 {
		mid := math.Floor((lo + hi) / 2)
		if need(mid) <= budget {
			lo = mid
		} else {
			hi = mid
		}
	}
	return int(lo)
}
