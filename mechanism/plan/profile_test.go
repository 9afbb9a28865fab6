package plan

import (
	"context"
	"os"
	"testing"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/internal/testkit"
	"github.com/dpsolve/dpsolve/internal/testkit/kronwork"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

// TestProfileUnionPairs is a profiling aid (skipped unless DPSOLVE_PROFILE is set).
func TestProfileUnionPairs(t *testing.T) {
	if os.Getenv("DPSOLVE_PROFILE") == "" {
		t.Skip("profiling aid")
	}
	w, err := kronwork.Pairs(kronwork.AdultSizes, kronwork.AdultOrdinal)
	if err != nil {
		t.Fatal(err)
	}
	pr := calibrate.Gaussian
	if os.Getenv("DPSOLVE_PROFILE") == "pure" {
		pr = calibrate.Laplace
	}
	blas.Current().SetThreads(1)
	c0 := testkit.ProcessCPU()
	r, err := Union{}.Plan(context.Background(), w, Options{Noise: pr})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %.6g in %.2fs cpu, %d parts", pr, r.Objective, (testkit.ProcessCPU() - c0).Seconds(), len(r.Strategy.Parts))
}
