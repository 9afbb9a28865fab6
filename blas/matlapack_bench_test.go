//go:build cgo && !purego

package blas_test

import (
	"fmt"
	"testing"

	"gonum.org/v1/gonum/lapack/gonum"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/internal/testkit"
)

// BenchmarkMatFactorizations times gonum/mat's factorizations as dpsolve
// uses them, on gonum's pure-Go LAPACK and on OpenBLAS's (the installed
// default), with OpenBLAS's BLAS under both: EigenSym at the sizes of a
// plan's per-attribute blocks (85–115 in examples/) and of a dense solve,
// the thin SVD of release's pseudo-inverse, and the Cholesky factorization
// of lrm and plan. Besides ns/op it reports the process's CPU time per
// operation (cpu-ms/op), the figure to compare on a shared machine.
func BenchmarkMatFactorizations(b *testing.B) {
	impls := []struct {
		name string
		use  func()
	}{
		{"gonum-lapack", func() { lapack64.Use(gonum.Implementation{}) }},
		{"openblas-lapack", func() { lapack64.Use(blas.Current().GonumLAPACK()) }},
	}
	defer lapack64.Use(blas.Current().GonumLAPACK())
	for _, n := range []int{100, 512} {
		a := spd(n)
		g := general(n, n)
		for _, im := range impls {
			b.Run(fmt.Sprintf("EigenSym/n=%d/%s", n, im.name), func(b *testing.B) {
				im.use()
				var e mat.EigenSym
				defer cpuPerOp(b)()
				for b.Loop() {
					if !e.Factorize(a, true) {
						b.Fatal("EigenSym failed")
					}
				}
			})
			b.Run(fmt.Sprintf("SVD/n=%d/%s", n, im.name), func(b *testing.B) {
				im.use()
				var s mat.SVD
				defer cpuPerOp(b)()
				for b.Loop() {
					if !s.Factorize(g, mat.SVDThin) {
						b.Fatal("SVD failed")
					}
				}
			})
			b.Run(fmt.Sprintf("Cholesky/n=%d/%s", n, im.name), func(b *testing.B) {
				im.use()
				var c mat.Cholesky
				defer cpuPerOp(b)()
				for b.Loop() {
					if !c.Factorize(a) {
						b.Fatal("Cholesky failed")
					}
				}
			})
		}
	}
}

// cpuPerOp starts measuring the process's CPU time; the returned function
// reports it per operation.
func cpuPerOp(b *testing.B) func() {
	c0 := testkit.ProcessCPU()
	return func() {
		b.ReportMetric(float64((testkit.ProcessCPU()-c0).Microseconds())/1e3/float64(b.N), "cpu-ms/op")
	}
}
