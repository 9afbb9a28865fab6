package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// BenchmarkBatchSolves times the benchmark: 1000 solves of n = 64
// (prefix and all-range alternating; DPSOLVE_BENCH_JOBS changes the count)
// run five ways — one after another by exec (the jobs themselves, with
// their process start), dpsolve batch with one and with two workers, and
// the same with --in-process — all with one kernel thread per job. It
// reports ms per job for each, the batch's overhead per job over plain exec,
// and the two-worker speedups.
//
//	go test -run XXX -bench BatchSolves -benchtime 1x ./cmd/dpsolve
func BenchmarkBatchSolves(b *testing.B) {
	jobs := 1000
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
	round := 0
	for b.Loop() {
		t0 := time.Now()
		for _, args := range all {
			c := dpsolveCmd(&testing.T{}, dir, oneThread, args...)
			if err := c.Run(); err != nil {
				b.Fatal(err)
			}
		}
		direct := time.Since(t0).Seconds() * 1e3 / float64(jobs)
		perJob := func(workers int, extra ...string) float64 {
			round++
			c := dpsolveCmd(&testing.T{}, dir, nil, append([]string{"batch", "--manifest", manifest, "--out", filepath.Join(dir, fmt.Sprint("out", round)),
				"--workers", strconv.Itoa(workers), "--threads", "1", "--quiet"}, extra...)...)
			var se bytes.Buffer
			c.Stderr = &se
			t0 := time.Now()
			if err := c.Run(); err != nil {
				b.Fatalf("batch: %v\n%s", err, se.String())
			}
			return time.Since(t0).Seconds() * 1e3 / float64(jobs)
		}
		w1 := perJob(1)
		w2 := perJob(2)
		in1 := perJob(1, "--in-process")
		in2 := perJob(2, "--in-process")
		b.ReportMetric(in1, "w1-inproc-ms/job")
		b.ReportMetric(in2, "w2-inproc-ms/job")
		b.ReportMetric(in1/in2, "speedup-w2-inproc")
		b.ReportMetric(direct, "exec-ms/job")
		b.ReportMetric(w1, "w1-ms/job")
		b.ReportMetric(w2, "w2-ms/job")
		b.ReportMetric(w1-direct, "overhead-ms/job")
		b.ReportMetric(w1/w2, "speedup-w2")
	}
}
