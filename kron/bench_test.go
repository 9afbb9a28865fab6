package kron

import (
	gblas "gonum.org/v1/gonum/blas"

	"github.com/dpsolve/dpsolve/blas"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/testkit"
)

// peakRSS returns the process's peak resident set (VmHWM) in bytes, or 0.
func peakRSS() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb * 1024
		}
	}
	return 0
}

// BenchmarkLeastSquares270M measures Kronecker least squares
// x̂ = (⊗Aᵢ⁺)y on a 64×64×64×64×16 = 2.68·10⁸-cell histogram (2.15 GB a
// vector) in ≤ 10 s with peak memory ≤ 4 vectors. It allocates ~4.3 GB, so
// it runs only with DPSOLVE_KRON_BIG=1 (the development machine is shared):
//
//	DPSOLVE_KRON_BIG=1 go test ./kron -run '^$' -bench LeastSquares270M -benchtime 1x
func BenchmarkLeastSquares270M(b *testing.B) {
	if os.Getenv("DPSOLVE_KRON_BIG") != "1" {
		b.Skip("set DPSOLVE_KRON_BIG=1 to run (allocates ~4.3 GB)")
	}
	rng := rand.New(rand.NewPCG(1, 1))
	sizes := []int{64, 64, 64, 64, 16}
	fs := make([]mat.Matrix, len(sizes))
	for i, d := range sizes {
		// A well-conditioned square strategy factor: identity plus noise.
		f := randDense(rng, d, d)
		f.Scale(0.1/float64(d), f)
		for j := 0; j < d; j++ {
			f.Set(j, j, f.At(j, j)+1)
		}
		fs[i] = f
	}
	p, err := New(fs...)
	if err != nil {
		b.Fatal(err)
	}
	pi, err := p.PseudoInverse()
	if err != nil {
		b.Fatal(err)
	}
	_, n := p.Dims()
	y := make([]float64, n)
	for i := range y {
		y[i] = float64(i % 1000)
	}
	debug.FreeOSMemory()
	b.ResetTimer()
	cpu := 0.0
	for b.Loop() {
		c0 := testkit.CPUSeconds()
		x, err := pi.MulVecOverwrite(y)
		cpu += testkit.CPUSeconds() - c0
		if err != nil {
			b.Fatal(err)
		}
		// Keep one vector between calls and hand the other back to the
		// OS, so the peak RSS measures one call: y plus one buffer.
		b.StopTimer()
		y = x[:cap(x)][:n]
		debug.FreeOSMemory()
		b.StartTimer()
	}
	b.StopTimer()
	vec := 8 * float64(n)
	b.ReportMetric(peakRSS()/vec, "peak-vectors")
	b.ReportMetric(cpu/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(n), "cells")
}

// BenchmarkMulVec64x4 applies four 64×64 factors to a 64⁴ = 1.7·10⁷-cell
// vector (134 MB) and reports the achieved GFLOP/s (2·n·Σdᵢ flops), to
// compare the factor-wise GEMMs with the machine's GEMM rate.
func BenchmarkMulVec64x4(b *testing.B) {
	rng := rand.New(rand.NewPCG(2, 2))
	fs := []mat.Matrix{randDense(rng, 64, 64), randDense(rng, 64, 64), randDense(rng, 64, 64), randDense(rng, 64, 64)}
	p, _ := New(fs...)
	_, n := p.Dims()
	x := randVec(rng, n)
	c0 := testkit.CPUSeconds()
	for b.Loop() {
		y, err := p.MulVecOverwrite(x)
		if err != nil {
			b.Fatal(err)
		}
		x = y
	}
	b.ReportMetric(2*float64(n)*4*64*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	b.ReportMetric((testkit.CPUSeconds()-c0)/float64(b.N), "cpu-s/op")
}

// BenchmarkSquareGemm is a plain 1024² GEMM through package blas (the
// same flop count per call as one factor of BenchmarkMulVec64x4, ×8), for
// the machine's GEMM rate under the same conditions.
func BenchmarkSquareGemm(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 3))
	a := blas.NewSquare(1024)
	c := blas.NewSquare(1024)
	for i := range a.Data {
		a.Data[i] = rng.NormFloat64()
	}
	for b.Loop() {
		blas.Gemm(gblas.NoTrans, gblas.NoTrans, 1, a, a, 0, c)
	}
	b.ReportMetric(2*1024*1024*1024*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
