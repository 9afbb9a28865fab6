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
// Runner, which also locks, reads and writes the status twice, and
// redirects stdout and stderr to files. The difference of the two ms/job
// figures is the batch's own per-job overhead.
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
	b.Run("runner", func(b *testing.B) {
		dir := b.TempDir()
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
			r := &Runner{Exe: truePath, Manifest: m, Out: filepath.Join(dir, fmt.Sprint("out", round)), Workers: 1, Threads: 1}
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
			b.ReportMetric(float64(time.Since(t0).Microseconds())/1e3/jobs, "ms/job")
		}
	})
}
