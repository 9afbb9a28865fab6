package bench

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
)

// memoryProbe measures the peak resident set size (RSS) of this process over
// a stretch of work, from Linux's /proc/self/status (VmHWM, the high-water
// mark, and VmRSS). Before the work it collects garbage, returns freed memory
// to the OS and resets the high-water mark through /proc/self/clear_refs
// (Linux ≥ 4.0); where the reset is refused, the peak is the process's peak
// since it started, which is still the peak of the work when sizes are run in
// increasing order (Resettable reports which).
type memoryProbe struct {
	// Baseline is the RSS in bytes when Start was called.
	Baseline int64
	// Resettable is true if the high-water mark was reset by Start.
	Resettable bool
}

// errNoProc is returned where /proc/self/status is missing (not Linux).
var errNoProc = errors.New("peak memory needs /proc/self/status (Linux)")

// startMemoryProbe frees what the Go runtime can, resets the high-water mark
// and records the baseline RSS.
func startMemoryProbe() (*memoryProbe, error) {
	runtime.GC()
	debug.FreeOSMemory()
	reset := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
	rss, _, err := readStatus()
	if err != nil {
		return nil, err
	}
	return &memoryProbe{Baseline: rss, Resettable: reset}, nil
}

// Peak returns the high-water RSS in bytes since Start (or since the process
// started, if the reset was refused).
func (p *memoryProbe) Peak() (int64, error) {
	_, hwm, err := readStatus()
	return hwm, err
}

// readStatus returns VmRSS and VmHWM in bytes.
func readStatus() (rss, hwm int64, err error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, 0, errNoProc
	}
	defer f.Close()
	rss, hwm = -1, -1
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var dst *int64
		switch {
		case strings.HasPrefix(line, "VmRSS:"):
			dst = &rss
		case strings.HasPrefix(line, "VmHWM:"):
			dst = &hwm
		default:
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 3 || fields[2] != "kB" {
			return 0, 0, fmt.Errorf("unexpected /proc/self/status line %q", line)
		}
		kb, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("unexpected /proc/self/status line %q", line)
		}
		*dst = kb * 1024
	}
	if err := sc.Err(); err != nil {
		return 0, 0, err
	}
	if rss < 0 || hwm < 0 {
		return 0, 0, errors.New("/proc/self/status lacks VmRSS or VmHWM")
	}
	return rss, hwm, nil
}
