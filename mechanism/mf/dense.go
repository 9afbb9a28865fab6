package mf

import (
	"math"
	"runtime"
	"sync"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/internal/psd"
)

// Dense helpers over blas.General (row-major, full symmetric storage).

// symInto writes v in full storage into the n×n g.
func symInto(g blas.General, v *mat.SymDense) {
	n := v.SymmetricDim()
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			x := v.At(i, j)
			g.Data[i*n+j], g.Data[j*n+i] = x, x
		}
	}
}

// upperFactor returns an upper-triangular F with FᵀF = V: internal/psd's
// factor (V's Cholesky factor when V is definite, else diag(√μ)·Qᵀ over
// the eigenvalues above psd.Tol = 32·n·ε·μ_max, which lowers V, so a dual
// bound computed with it stays a bound), made triangular by a QR.
func upperFactor(v blas.General) (blas.General, bool) {
	f := blas.NewSquare(v.Rows)
	_, ok := upperFactorInto(v, f, blas.General{})
	return f, ok
}

// upperFactorInto is upperFactor writing F into f; q (n×n, or empty to
// allocate one when needed) holds the eigenvectors on the eigenvalue path.
// v is read only. rank is V's numerical rank (psd.FactorInto's); ok is
// false if V is not positive semidefinite by psd.Tol or the
// eigendecomposition fails.
func upperFactorInto(v, f, q blas.General) (rank int, ok bool) {
	rank, err := psd.FactorInto(v, f, q)
	if err != nil {
		return 0, false
	}
	n := f.Rows
	for i := 1; i < n; i++ { // the Cholesky factor is triangular already
		for _, x := range f.Data[i*f.Stride : i*f.Stride+i] {
			if x != 0 {
				return rank, blas.UpperTrapezoid(f)
			}
		}
	}
	return rank, true
}

// objective returns tr(V X⁻¹) = ‖F U⁻¹‖²_F for X = UᵀU, leaving U (upper)
// in u and F·U⁻¹ in t; ok is false if X is not numerically definite.
func objective(f, x, u, t blas.General) (float64, bool) {
	blas.Copy(u, x)
	if !blas.Cholesky(u) {
		return math.Inf(1), false
	}
	blas.Copy(t, f)
	upperRightSolve(u, t)
	s := 0.0
	for _, v := range t.Data {
		s += v * v
	}
	if math.IsNaN(s) || math.IsInf(s, 0) {
		return math.Inf(1), false
	}
	return s, true
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i, x := range a {
		s += x * b[i]
	}
	return s
}

func row(g blas.General, i int) []float64 { return g.Data[i*g.Stride : i*g.Stride+g.Cols] }

// kernelWorkers is how many goroutines share a phase of independent small
// kernel calls (the banded Hessian product's blocks, the band solves'
// rows, the fixed-epoch preconditioner's groups) given units of work.
// Such calls are below the size at which the kernel gate lets one call
// use more than one thread (native.minParallelFlops), so a phase of them
// ran on one core; workers, each call single-threaded, use the others
// (measured on the banded n = 512, b = 64 and fixed-epoch n = 512, k = 4
// prefix solves; see the commits). The gate admits as many concurrent
// calls as it has threads, so more workers than that only queue.
func kernelWorkers(units int) int { return max(1, min(units, runtime.GOMAXPROCS(0), 4)) }

// eachUnit runs f(worker, unit) for units 0 … units−1 on workers
// goroutines, worker w taking units w, w+workers, …, and waits for all.
func eachUnit(workers, units int, f func(w, u int)) {
	if workers <= 1 {
		for u := 0; u < units; u++ {
			f(0, u)
		}
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for u := w; u < units; u += workers {
				f(w, u)
			}
		}()
	}
	wg.Wait()
}

// splitRows runs f on consecutive row ranges [lo, hi) covering 0 … n−1,
// one per worker (kernelWorkers), concurrently (eachUnit), and waits. With
// triangular the ranges hold equal shares of work that falls linearly
// from row 0 (range j ends at n·(1 − √(1 − j/W))), else equal numbers of
// rows.
func splitRows(n int, triangular bool, f func(lo, hi int)) {
	w := kernelWorkers(n / 64)
	ends := make([]int, w+1)
	for j := 1; j <= w; j++ {
		ends[j] = n * j / w
		if triangular && j < w {
			ends[j] = max(ends[j-1], int(float64(n)*(1-math.Sqrt(1-float64(j)/float64(w)))))
		}
	}
	eachUnit(w, w, func(_, j int) {
		if ends[j+1] > ends[j] {
			f(ends[j], ends[j+1])
		}
	})
}

// upperRightSolve overwrites the upper-triangular t (n×n, zero below the
// diagonal, as F is) with T = t·U⁻¹ for the upper-triangular U. Row i of t
// is zero left of column i, and so is row i of T (forward substitution
// on zeros), so a block of rows from i0 is solved on the trailing columns
// i0 … n−1 only, against U's trailing block: about n³/3 flops instead of
// a general solve's n³. The row blocks are independent; their solves are
// shared by kernelWorkers. (Measured on the fixed-epoch n = 512, k = 4
// prefix solve, SkylakeX: see the commit.)
func upperRightSolve(u, t blas.General) {
	const rows = 32
	n := t.Rows
	blocks := (n + rows - 1) / rows
	eachUnit(kernelWorkers(blocks), blocks, func(_, bi int) {
		i0 := bi * rows
		tr := panel(t, i0, i0, min(rows, n-i0), n-i0)
		blas.Trsm(gblas.Right, gblas.Upper, gblas.NoTrans, gblas.NonUnit, 1, panel(u, i0, i0, n-i0, n-i0), tr)
	})
}
