package batch

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkJobOverhead measures what the batch adds to each job: the same
// 200 trivial jobs (/bin/true) run by exec in a loop and by a one-worker
// Runner, which also locks, reads and writes the status, and redirects
// stdout and stderr to files; "durable" adds Runner.Durable's fsyncs. The
// difference of the ms/job figures is the batch's own per-job overhead. The
// folders are under DPSOLVE_BENCH_DIR when set (default: the test's
// temporary folder): creating files costs very different amounts on
// different file systems, and even in different folders of one (on a
// machine that builds a lot, ext4 creates files in /tmp 20× slower than
// elsewhere, scanning its many recently deleted inodes).
func BenchmarkJobOverhead(b *testing.B) {
	const jobs = 200
	truePath, err := exec.LookPath("true")
	if err != nil {
		b.Skip("no true binary")
	}
	b.Run("exec", func(b *testing.B) {
		for b.Loop() {
			t0 := time.Now()
			for range jobs {
				if err := exec.Command(truePath).Run(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(time.Since(t0).Microseconds())/1e3/jobs, "ms/job")
		}
	})
	for _, durable := range []bool{false, true} {
		name := map[bool]string{false: "runner", true: "runner-durable"}[durable]
		b.Run(name, func(b *testing.B) { benchRunner(b, jobs, truePath, durable) })
	}
}

// benchRunner runs jobs /bin/true jobs through a one-worker Runner.
func benchRunner(b *testing.B, jobs int, truePath string, durable bool) {
	dir := b.TempDir()
	if base := os.Getenv("DPSOLVE_BENCH_DIR"); base != "" {
		var err error
		if dir, err = os.MkdirTemp(base, "overhead"); err != nil {
			b.Fatal(err)
		}
		defer os.RemoveAll(dir)
	}
	var lines []string
	for i := range jobs {
		lines = append(lines, fmt.Sprintf(`{"id":"j%d","command":"solve"}`, i))
	}
	p := filepath.Join(dir, "m.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		b.Fatal(err)
	}
	m, err := ReadManifest(p)
	if err != nil {
		b.Fatal(err)
	}
	round := 0
	for b.Loop() {
		r := &Runner{Exe: truePath, Manifest: m, Out: filepath.Join(dir, fmt.Sprint("out", round)), Workers: 1, Threads: 1, Durable: durable}
		round++
		t0 := time.Now()
		outs, err := r.Run(context.Background(), m.Jobs)
		if err != nil {
			b.Fatal(err)
		}
		for _, o := range outs {
			if o.Result != Ran {
				b.Fatalf("%+v", o)
			}
		}
		b.ReportMetric(float64(time.Since(t0).Microseconds())/1e3/float64(jobs), "ms/job")
	}
}
