package main

// Memory models beyond the per-n² ones of preflight.go: sdp --solve, whose
// solver (CSDP, a child process on the same machine) grows with n⁴, and
// batch, whose concurrent jobs share one machine.

import (
	"fmt"
	"io"
	"math"
	"os"
	"strconv"

	"github.com/dpsolve/dpsolve/internal/resources"
)

// memCSDP is CSDP's peak in float64s per entry of its Schur complement,
// which is m×m for the m = n(n+1)/2 variables of X. Measured with
// /usr/bin/time (maximum RSS of dpsolve and its csdp child) on prefix:
// n = 48: 59 MB, n = 64: 159 MB, i.e. 3.5 and 4.6 per m² entry above the
// 20 MB base; rounded up to 5 for CSDP's other m-sized work arrays.
const memCSDP = 5

// sdpSolveNeed is the estimated peak of dpsolve sdp --solve at domain n:
// the formulation (memSDP per n², W included) plus CSDP.
func sdpSolveNeed(n float64) float64 {
	m := n * (n + 1) / 2
	return memNeed(memSDP, n, n, 0, true) + 8*memCSDP*m*m
}

// checkSDPSolveMemory refuses an sdp --solve that CSDP could not hold, with
// the largest n that fits (CSDP's time grows even faster: n⁶).
func checkSDPSolveMemory(n int) error {
	avail := resources.Available()
	what := fmt.Sprintf("dpsolve sdp --solve at n = %d (CSDP holds a %.0f×%.0f Schur complement)", n, float64(n)*float64(n+1)/2, float64(n)*float64(n+1)/2)
	err := resources.Check(sdpSolveNeed(float64(n)), avail, what)
	if err == nil {
		return nil
	}
	return resources.WithHint(err, fmt.Sprintf("the largest n that fits is about %d (--export alone needs far less)", resources.LargestN(sdpSolveNeed, avail)))
}

// shareMemory gives each of k concurrent batch jobs 1/k of the memory: it
// sets DPSOLVE_MEMORY_LIMIT for the jobs (children inherit it; in-process
// jobs read it), so each job's own preflight refuses a size that fits the
// machine alone but not beside k-1 others. A DPSOLVE_MEMORY_LIMIT the user
// set is the whole batch's budget and is divided the same way. The returned
// function restores the variable (the batch may itself run in-process, in
// a test).
func shareMemory(k int, stderr io.Writer) (restore func()) {
	avail := resources.Available()
	if k <= 1 || math.IsInf(avail.Bytes, 1) {
		return func() {}
	}
	old, had := os.LookupEnv(resources.EnvLimit)
	restore = func() {
		if had {
			os.Setenv(resources.EnvLimit, old)
		} else {
			os.Unsetenv(resources.EnvLimit)
		}
	}
	per := math.Floor(avail.Bytes / float64(k))
	os.Setenv(resources.EnvLimit, strconv.FormatFloat(per, 'f', 0, 64))
	fmt.Fprintf(stderr, "dpsolve batch: each of the %d concurrent jobs plans for at most %s (1/%d of %s, passed as %s)\n",
		k, resources.FormatBytes(per), k, avail, resources.EnvLimit)
	return restore
}
