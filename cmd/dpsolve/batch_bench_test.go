package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
)

// BenchmarkBatchSolves times the benchmark: 1000 solves of n = 64
// (prefix and all-range alternating) per way of running them, as 5 rounds
// of 200 (DPSOLVE_BENCH_JOBS changes the 200). Each round runs the jobs five
// ways, interleaved so that a change in the machine's load hits every way
// alike: one after another by exec (the jobs themselves, with their process
// start), dpsolve batch with one and with two workers, and the same with
// --in-process, all with one kernel thread per job. It reports the median
// ms per job of each, the batch's overhead per job over plain exec, and the
// two-worker speedups.
//
//	go test -run XXX -bench BatchSolves -benchtime 1x ./cmd/dpsolve
func BenchmarkBatchSolves(b *testing.B) {
	jobs, rounds := 200, 5
	if v, err := strconv.Atoi(os.Getenv("DPSOLVE_BENCH_JOBS")); err == nil && v > 0 {
		jobs = v
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
	oneThread := []string{"OPENBLAS_NUM_THREADS=1", "GOMAXPROCS=1"}
	out := 0
	batchRun := func(workers int, extra ...string) {
		out++
		c := dpsolveCmd(b, dir, nil, append([]string{"batch", "--manifest", manifest, "--out", filepath.Join(dir, fmt.Sprint("out", out)),
			"--workers", strconv.Itoa(workers), "--threads", "1", "--quiet"}, extra...)...)
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
				if err := dpsolveCmd(b, dir, oneThread, args...).Run(); err != nil {
					b.Fatal(err)
				}
			}
		}},
		{"w1", func() { batchRun(1) }},
		{"w2", func() { batchRun(2) }},
		{"w1-inproc", func() { batchRun(1, "--in-process") }},
		{"w2-inproc", func() { batchRun(2, "--in-process") }},
	}
	for b.Loop() {
		ms := map[string][]float64{}
		for range rounds {
			for _, w := range ways {
				t0 := time.Now()
				w.run()
				ms[w.name] = append(ms[w.name], time.Since(t0).Seconds()*1e3/float64(jobs))
			}
		}
		med := map[string]float64{}
		for _, w := range ways {
			s := ms[w.name]
			slices.Sort(s)
			med[w.name] = s[len(s)/2]
			b.ReportMetric(med[w.name], w.name+"-ms/job")
		}
		b.ReportMetric(med["w1"]-med["exec"], "overhead-ms/job")
		b.ReportMetric(med["w1"]/med["w2"], "speedup-w2")
		b.ReportMetric(med["w1-inproc"]/med["w2-inproc"], "speedup-w2-inproc")
	}
}
