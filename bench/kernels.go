package bench

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/dpsolve/dpsolve/blas"
	gblas "gonum.org/v1/gonum/blas"
)

// Kernel names, in the order of the kernel table.
const (
	kernelDGEMM       = "dgemm"            // C = A·B, 2n³ flops
	kernelCholesky    = "cholesky"         // A = UᵀU (dpotrf), n³/3 flops
	kernelCholInverse = "cholesky_inverse" // A⁻¹ from U (dpotri), 2n³/3 flops
	kernelEigValues   = "eig_values"       // eigenvalues only, 4n³/3 flops
	kernelEigVectors  = "eig_vectors"      // eigenvalues and vectors, 9n³ flops
	kernelHessian     = "hessian_product"  // H[S] = −(M + Mᵀ), M = X⁻¹·S·G: two GEMMs, 4n³ flops
)

// kernelFlops is the nominal flop count of each kernel at size n. The
// eigensolver counts are the conventional ones of Golub & Van Loan (Matrix
// Computations, §8.3: 4n³/3 for the tridiagonal reduction behind
// eigenvalues, 9n³ with eigenvectors); the DGEMM-equivalents column does not
// depend on any convention.
func kernelFlops(kernel string, n int) float64 {
	c := float64(n) * float64(n) * float64(n)
	switch kernel {
	case kernelDGEMM:
		return 2 * c
	case kernelCholesky:
		return c / 3
	case kernelCholInverse:
		return 2 * c / 3
	case kernelEigValues:
		return 4 * c / 3
	case kernelEigVectors:
		return 9 * c
	case kernelHessian:
		return 4 * c
	}
	return 0
}

// KernelResult is one row of the kernel table.
type KernelResult struct {
	Backend string `json:"backend"`
	Core    string `json:"core"`
	Threads int    `json:"threads"`
	N       int    `json:"n"`
	Kernel  string `json:"kernel"`
	// Seconds is the median over the samples.
	Seconds Num `json:"seconds"`
	// Flops is the nominal flop count (see the Kernel constants).
	Flops float64 `json:"flops"`
	// GFlops is Flops / Seconds / 1e9.
	GFlops Num `json:"gflops"`
	// DGEMMEquivalents is Seconds over the DGEMM's seconds at the same n.
	DGEMMEquivalents Num `json:"dgemm_equivalents"`
	// RateVsDGEMM is GFlops over the DGEMM's GFlops (the H[S] target is ≥ 0.85).
	RateVsDGEMM Num `json:"rate_vs_dgemm"`
}

// seededInsecureSPD returns a random symmetric positive definite n×n matrix
// B·Bᵀ/n + I from a fixed seed. The randomness is for timing inputs only.
func seededInsecureSPD(n int, seed uint64) blas.General {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	b := blas.NewSquare(n)
	for i := range b.Data {
		b.Data[i] = r.NormFloat64()
	}
	a := blas.NewSquare(n)
	for i := 0; i < n; i++ {
		a.Data[i*n+i] = 1
	}
	blas.Gemm(gblas.NoTrans, gblas.Trans, 1/float64(n), b, b, 1, a)
	return a
}

// timeMedian runs prepare (untimed) then work (timed) samples times and
// returns the median seconds; work reports failure with an error.
func timeMedian(samples int, prepare func(), work func() error) (float64, error) {
	ts := make([]float64, 0, samples)
	for i := 0; i < samples; i++ {
		prepare()
		start := time.Now()
		if err := work(); err != nil {
			return 0, err
		}
		ts = append(ts, time.Since(start).Seconds())
	}
	return median(ts), nil
}

// dgemmSeconds returns the median wall time of one n×n DGEMM, C = A·B, over
// samples runs (at least one) after one warm-up, with the kernel backend in
// use.
func dgemmSeconds(n, samples int) float64 { return median(dgemmTimes(n, samples)) }

// dgemmTimes times samples n×n DGEMMs after one warm-up. The operands live
// only during the call.
func dgemmTimes(n, samples int) []float64 {
	r := rand.New(rand.NewPCG(uint64(n), 1)) // timing inputs only
	a, b, c := blas.NewSquare(n), blas.NewSquare(n), blas.NewSquare(n)
	for i := range a.Data {
		a.Data[i], b.Data[i], c.Data[i] = r.Float64()-0.5, r.Float64()-0.5, 1 // c touched: no page faults in the timing
	}
	blas.Gemm(gblas.NoTrans, gblas.NoTrans, 1, a, b, 0, c)
	ts := make([]float64, max(1, samples))
	for i := range ts {
		start := time.Now()
		blas.Gemm(gblas.NoTrans, gblas.NoTrans, 1, a, b, 0, c)
		ts[i] = time.Since(start).Seconds()
	}
	return ts
}

// Kernels times every kernel of the table at each n with the backend in use,
// median of samples runs (after a warm-up DGEMM).
func Kernels(ns []int, samples int) ([]KernelResult, error) {
	be := blas.Current()
	var out []KernelResult
	for _, n := range ns {
		if n <= 0 {
			return nil, fmt.Errorf("kernel size must be positive, got %d", n)
		}
		spd := seededInsecureSPD(n, 3)
		work := blas.NewSquare(n)
		w := make([]float64, n)
		reset := func() { blas.Copy(work, spd) }
		var factor blas.General // the Cholesky factor, input of dpotri
		// H[S] operands: X⁻¹ (SPD), S (symmetric, zero diagonal), G (symmetric).
		xinv := spd
		s := seededInsecureSPD(n, 4)
		for i := 0; i < n; i++ {
			s.Data[i*n+i] = 0
		}
		g := seededInsecureSPD(n, 5)
		t, m := blas.NewSquare(n), blas.NewSquare(n)

		kernels := []struct {
			name    string
			prepare func()
			run     func() error
		}{
			{kernelDGEMM, func() {}, func() error {
				blas.Gemm(gblas.NoTrans, gblas.NoTrans, 1, spd, g, 0, work)
				return nil
			}},
			{kernelCholesky, reset, func() error { return ok(blas.Cholesky(work), "Cholesky") }},
			{kernelCholInverse, func() {
				if factor.Data == nil {
					factor = blas.NewSquare(n)
					blas.Copy(factor, spd)
					blas.Cholesky(factor)
				}
				blas.Copy(work, factor)
			}, func() error { return ok(blas.CholInverse(work), "Cholesky inverse") }},
			{kernelEigValues, reset, func() error { return ok(blas.SymEig(work, w, false), "eigenvalues") }},
			{kernelEigVectors, reset, func() error { return ok(blas.SymEig(work, w, true), "eigendecomposition") }},
			{kernelHessian, func() {}, func() error {
				hessianProduct(xinv, s, g, t, m)
				return nil
			}},
		}
		var dgemm float64
		blas.Gemm(gblas.NoTrans, gblas.NoTrans, 1, spd, g, 0, work) // warm-up
		for _, k := range kernels {
			secs, err := timeMedian(max(1, samples), k.prepare, k.run)
			if err != nil {
				return nil, fmt.Errorf("%s backend, n = %d: %w", be.Name(), n, err)
			}
			if k.name == kernelDGEMM {
				dgemm = secs
			}
			fl := kernelFlops(k.name, n)
			out = append(out, KernelResult{
				Backend: be.Name(), Core: be.CoreName(), Threads: be.Threads(), N: n, Kernel: k.name,
				Seconds: Num(secs), Flops: fl, GFlops: Num(fl / secs / 1e9),
				DGEMMEquivalents: Num(secs / dgemm),
				RateVsDGEMM:      Num((fl / secs) / (kernelFlops(kernelDGEMM, n) / dgemm)),
			})
		}
	}
	return out, nil
}

// hessianProduct computes H[S] = X⁻¹SX⁻¹VX⁻¹ + X⁻¹VX⁻¹SX⁻¹ = −(M + Mᵀ) with
// M = X⁻¹·S·G, G = −X⁻¹VX⁻¹, the product the Newton-CG inner loop repeats:
// two GEMMs (t = X⁻¹S, m = t·G) and a symmetric sum, written into m.
func hessianProduct(xinv, s, g, t, m blas.General) {
	blas.Gemm(gblas.NoTrans, gblas.NoTrans, 1, xinv, s, 0, t)
	blas.Gemm(gblas.NoTrans, gblas.NoTrans, 1, t, g, 0, m)
	// −(M + Mᵀ) in 64×64 tiles so the transposed reads stay in cache.
	const tile = 64
	n, ld := m.Rows, m.Stride
	for ii := 0; ii < n; ii += tile {
		for jj := ii; jj < n; jj += tile {
			for i := ii; i < min(ii+tile, n); i++ {
				for j := max(jj, i); j < min(jj+tile, n); j++ {
					h := -(m.Data[i*ld+j] + m.Data[j*ld+i])
					m.Data[i*ld+j], m.Data[j*ld+i] = h, h
				}
			}
		}
	}
}

func ok(success bool, what string) error {
	if !success {
		return fmt.Errorf("%s failed", what)
	}
	return nil
}
