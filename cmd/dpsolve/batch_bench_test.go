//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dpsolve/dpsolve/internal/testkit"
)

// BenchmarkBatchSolves times the benchmark: 1000 solves of n = 64
// (prefix and all-range alternating) per way of running them, as 5 rounds
// of 200 (DPSOLVE_BENCH_JOBS changes the 200, DPSOLVE_BENCH_ROUNDS the 5).
// Every way runs the dpsolve binary TestMain built (what users run, not
// this test binary), with one kernel thread per job, and each round runs
// the ways interleaved so that a change in the machine's load hits all of
// them alike:
//
//   - exec: the jobs one after another by exec (the jobs themselves, with
//     their process start, and nothing else);
//   - exec2: the same from two goroutines at once: what two cores give these
//     very processes without any batch, the ceiling for the batch's ratio;
//   - w1, w2: dpsolve batch --workers 1 and 2 --threads 1;
//   - w1-inproc, w2-inproc: the same with --in-process.
//
// It reports the median ms per job of each way, the batch's overhead per job
// over plain exec (w1 − exec), the two-worker speedup (w1/w2, the issue's
// ratio) next to its ceiling (exec/exec2), the CPU time (user + system, of
// the batch and its jobs) per job of exec and of one and two workers — the
// batch's own CPU per job is w1 − exec, and w2 equals w1 when the batch
// itself scales, whatever the load — and the 1-minute load
// average before and after, since other jobs on the machine take cores the
// second worker would use.
//
//	go test -run XXX -bench BatchSolves -benchtime 1x ./cmd/dpsolve
func BenchmarkBatchSolves(b *testing.B) {
	if binErr != nil {
		b.Fatalf("no dpsolve binary: %v", binErr)
	}
	jobs, rounds := 200, 5
	if v, err := strconv.Atoi(os.Getenv("DPSOLVE_BENCH_JOBS")); err == nil && v > 0 {
		jobs = v
	}
	if v, err := strconv.Atoi(os.Getenv("DPSOLVE_BENCH_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	dir := b.TempDir()
	var buf bytes.Buffer
	var all [][]string
	for i := range jobs {
		w := []string{"prefix", "allrange"}[i%2]
		args := []string{"solve", "--workload", w, "--n", "64", "--json", "--quiet"}
		all = append(all, args)
		line, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("s%04d", i), "command": args[0], "args": args[1:]})
		buf.Write(append(line, '\n'))
	}
	manifest := filepath.Join(dir, "m.jsonl")
	if err := os.WriteFile(manifest, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	// The children of a batch get these from --threads 1; the plain exec
	// ways set them by hand, so every way runs the same processes.
	env := append(os.Environ(), "OPENBLAS_NUM_THREADS=1", "GOMAXPROCS=1")
	execJob := func(args []string) {
		c := exec.Command(dpsolveBin, args...)
		c.Dir, c.Env = dir, env
		if out, err := c.CombinedOutput(); err != nil {
			b.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	out := 0
	batchRun := func(workers int, extra ...string) {
		out++
		c := exec.Command(dpsolveBin, append([]string{"batch", "--manifest", manifest, "--out", filepath.Join(dir, fmt.Sprint("out", out)),
			"--workers", strconv.Itoa(workers), "--threads", "1", "--quiet"}, extra...)...)
		c.Dir = dir
		var se bytes.Buffer
		c.Stderr = &se
		if err := c.Run(); err != nil {
			b.Fatalf("batch: %v\n%s", err, se.String())
		}
	}
	ways := []struct {
		name string
		run  func()
	}{
		{"exec", func() {
			for _, args := range all {
				execJob(args)
			}
		}},
		{"exec2", func() {
			var wg sync.WaitGroup
			for g := range 2 {
				wg.Go(func() {
					for i := g; i < len(all); i += 2 {
						execJob(all[i])
					}
				})
			}
			wg.Wait()
		}},
		{"w1", func() { batchRun(1) }},
		{"w2", func() { batchRun(2) }},
		{"w1-inproc", func() { batchRun(1, "--in-process") }},
		{"w2-inproc", func() { batchRun(2, "--in-process") }},
	}
	for b.Loop() {
		load0 := loadAverage()
		ms := map[string][]float64{}
		cpu := map[string][]float64{}
		for range rounds {
			for _, w := range ways {
				c0 := testkit.ChildrenCPU()
				t0 := time.Now()
				w.run()
				ms[w.name] = append(ms[w.name], time.Since(t0).Seconds()*1e3/float64(jobs))
				cpu[w.name] = append(cpu[w.name], (testkit.ChildrenCPU()-c0).Seconds()*1e3/float64(jobs))
			}
		}
		med := map[string]float64{}
		for _, w := range ways {
			med[w.name] = median(ms[w.name])
			b.ReportMetric(med[w.name], w.name+"-ms/job")
		}
		for _, w := range []string{"exec", "w1", "w2"} {
			b.ReportMetric(median(cpu[w]), w+"-cpu-ms/job")
		}
		b.ReportMetric(med["w1"]-med["exec"], "overhead-ms/job")
		b.ReportMetric(med["w1"]/med["w2"], "speedup-w2")
		b.ReportMetric(med["exec"]/med["exec2"], "ceiling-exec2")
		b.ReportMetric(med["w1-inproc"]/med["w2-inproc"], "speedup-w2-inproc")
		b.ReportMetric(load0, "load-before")
		b.ReportMetric(loadAverage(), "load-after")
	}
}

// median returns the median of s (sorting it).
func median(s []float64) float64 {
	slices.Sort(s)
	return s[len(s)/2]
}

// loadAverage returns the 1-minute load average (-1 where /proc/loadavg is
// missing).
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	return v
}
