package mf

import (
	gblas "gonum.org/v1/gonum/blas"

	"github.com/dpsolve/dpsolve/blas"
)

// band is a symmetric n×n matrix with A_ij = 0 for |i − j| ≥ b, stored by
// its lower band: v[i·b + c] = A[i][i−c] for c = 0 … b−1 (entries with
// i − c < 0 are zero). The banded solver's iterate, step and conjugate-
// gradient vectors are bands, O(n·b) each instead of n×n.
type band struct {
	n, b int
	v    []float64
}

func newBand(n, b int) band { return band{n: n, b: b, v: make([]float64, n*b)} }

// at is A[i][j] (zero outside the band).
func (a band) at(i, j int) float64 {
	if i < j {
		i, j = j, i
	}
	if i-j >= a.b {
		return 0
	}
	return a.v[i*a.b+i-j]
}

// bandFactor is the upper Cholesky factor U (X = UᵀU) of a banded X. In
// blocks of s ≥ b rows X is block tridiagonal, so U is block upper
// bidiagonal: diag[k] (upper triangular) and sup[k] = U_{k,k+1}, each
// s×s (the last block may be smaller), 2·n·s numbers in all. Factoring
// costs about (7/3)·n·s² flops, and with it T = F·U⁻¹ and G = T·U⁻ᵀ cost
// O(n²·s) in GEMMs and triangular solves on n×s panels, where a dense
// factor costs n³/3 and its solves n³ each.
type bandFactor struct {
	n, s      int
	diag, sup [][]float64
}

func newBandFactor(n, b int) *bandFactor {
	s := min(n, max(b, 32))
	nb := (n + s - 1) / s
	f := &bandFactor{n: n, s: s, diag: make([][]float64, nb), sup: make([][]float64, nb)}
	for k := range f.diag {
		f.diag[k] = make([]float64, s*s)
		f.sup[k] = make([]float64, s*s)
	}
	return f
}

// blocks is the number of row blocks; size(k) the rows of block k.
func (f *bandFactor) blocks() int    { return len(f.diag) }
func (f *bandFactor) size(k int) int { return min(f.s, f.n-k*f.s) }

func (f *bandFactor) d(k int) blas.General {
	s := f.size(k)
	return blas.General{Rows: s, Cols: s, Stride: s, Data: f.diag[k][:s*s]}
}

func (f *bandFactor) u(k int) blas.General {
	s, t := f.size(k), f.size(k+1)
	return blas.General{Rows: s, Cols: t, Stride: t, Data: f.sup[k][:s*t]}
}

// factor computes U from x; false if X is not numerically definite.
func (f *bandFactor) factor(x band) bool {
	nb := f.blocks()
	for k := 0; k < nb; k++ {
		r0, d := k*f.s, f.d(k)
		for p := 0; p < d.Rows; p++ {
			for q := 0; q < d.Cols; q++ {
				d.Data[p*d.Stride+q] = x.at(r0+p, r0+q)
			}
		}
		if k > 0 {
			blas.Syrk(gblas.Trans, -1, f.u(k-1), 1, d)
		}
		if !blas.Cholesky(d) {
			return false
		}
		if k == nb-1 {
			break
		}
		u, c0 := f.u(k), r0+d.Rows
		for p := 0; p < u.Rows; p++ {
			for q := 0; q < u.Cols; q++ {
				u.Data[p*u.Stride+q] = x.at(r0+p, c0+q)
			}
		}
		blas.Trsm(gblas.Left, gblas.Upper, gblas.Trans, gblas.NonUnit, 1, d, u)
	}
	return true
}

// dense writes U into the n×n g (zeros off its band).
func (f *bandFactor) dense(g blas.General) {
	for i := range g.Rows {
		clear(g.Data[i*g.Stride : i*g.Stride+g.Cols])
	}
	for k := 0; k < f.blocks(); k++ {
		r0 := k * f.s
		blas.Copy(panel(g, r0, r0, f.size(k), f.size(k)), f.d(k))
		if k+1 < f.blocks() {
			blas.Copy(panel(g, r0, r0+f.s, f.size(k), f.size(k+1)), f.u(k))
		}
	}
}

// panel is the r×c view of g at (i, j).
func panel(g blas.General, i, j, r, c int) blas.General {
	return blas.General{Rows: r, Cols: c, Stride: g.Stride, Data: g.Data[i*g.Stride+j:]}
}

// rightSolve overwrites t, which holds the upper-triangular F, with
// T = F·U⁻¹ (upper triangular too): block column k of T·U = F reads
// T_k·U_kk = F_k − T_{k−1}·U_{k−1,k}, and T's rows below block k vanish.
// Rows are independent, so workers take row ranges (row i works in the
// blocks from i/s on: the ranges are cut for equal shares of that
// triangle).
func (f *bandFactor) rightSolve(t blas.General) {
	splitRows(t.Rows, true, func(lo, hi int) {
		for k := 0; k < f.blocks(); k++ {
			r0, s := k*f.s, f.size(k)
			if k > 0 {
				if rows := min(hi, r0) - lo; rows > 0 {
					prev := panel(t, lo, r0-f.s, rows, f.s)
					blas.Gemm(gblas.NoTrans, gblas.NoTrans, -1, prev, f.u(k-1), 1, panel(t, lo, r0, rows, s))
				}
			}
			if rows := min(hi, r0+s) - lo; rows > 0 {
				blas.Trsm(gblas.Right, gblas.Upper, gblas.NoTrans, gblas.NonUnit, 1, f.d(k), panel(t, lo, r0, rows, s))
			}
		}
	})
}

// rightSolveTrans overwrites t (n×n) with t·U⁻ᵀ: block column k of G·Uᵀ = T
// reads G_k·U_kkᵀ = T_k − G_{k+1}·U_{k,k+1}ᵀ, solved from the last block;
// workers take equal row ranges.
func (f *bandFactor) rightSolveTrans(t blas.General) {
	splitRows(t.Rows, false, func(lo, hi int) {
		rows := hi - lo
		for k := f.blocks() - 1; k >= 0; k-- {
			r0, s := k*f.s, f.size(k)
			tk := panel(t, lo, r0, rows, s)
			if k+1 < f.blocks() {
				next := panel(t, lo, r0+s, rows, f.size(k+1))
				blas.Gemm(gblas.NoTrans, gblas.Trans, -1, next, f.u(k), 1, tk)
			}
			blas.Trsm(gblas.Right, gblas.Upper, gblas.Trans, gblas.NonUnit, 1, f.d(k), tk)
		}
	})
}

// bandObjective returns tr(V X⁻¹) = ‖F·U⁻¹‖²_F for the banded x, leaving
// its factor in fac and F·U⁻¹ in t; false if X is not numerically definite.
func bandObjective(f blas.General, x band, fac *bandFactor, t blas.General) (float64, bool) {
	if !fac.factor(x) {
		return 0, false
	}
	blas.Copy(t, f)
	fac.rightSolve(t)
	s := 0.0
	for _, v := range t.Data {
		s += v * v
	}
	if s != s || s > 1e300 {
		return 0, false
	}
	return s, true
}
