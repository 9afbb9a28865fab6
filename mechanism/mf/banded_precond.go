package mf

import (
	"math"

	"github.com/dpsolve/dpsolve/blas"
)

// columnPrecond preconditions the banded Newton system by its diagonal
// blocks, one per column j of the band (the unknowns u_ij, j < i < j+b, of
// D = Σ u_ij (e_i e_jᵀ + e_j e_iᵀ)): with P = X⁻¹ the Hessian's bilinear
// form is
//
//	h(E_ij, E_kl) = 2·(P_jk M_li + P_jl M_ki + P_ik M_lj + P_il M_kj),
//
// so within column j (l = j) the block is
// 2·(P_jk M_ji + P_jj M_ki + P_ik M_jj + P_ij M_kj). A Jacobi
// preconditioner keeps only its diagonal; the blocks also capture the
// strong coupling of entries sharing a column (measured on prefix and
// momentum at n = 96, b = 12: CG products to a 1e-6 residual 45 against
// Jacobi's 60, and 231 against 331).
//
// The blocks' inverses are stored, so that applying one is a single
// matrix–vector product (measured: about half the time of two triangular
// solves per block). Whole blocks take n·(b−1)² numbers; where that
// exceeds max(n², precondFloor) each column is split into chunks of
// q = ⌊max(n², precondFloor)/(n·(b−1))⌋ entries, so the preconditioner
// never holds more than one n×n matrix's worth or 4 MiB. (Measured at
// n = 512, b = 64, prefix, after the Hessian product was parallelized:
// chunks of q = 8 entries (the n² cap) took 112 CG products and 0.67–0.72
// s, q = 16 (the 4 MiB floor) 102 and 0.60–0.64 s, q = 32 98 and
// 0.67–0.76 s, whole blocks 91 and 0.90 s: larger blocks cost more to
// build and apply than the products they save.)
type columnPrecond struct {
	n, bw, q int
	inv      []float64 // per column, its chunks' inverses in order
	off      []int     // column j's inverses start at inv[off[j]]
}

// precondFloor is the preconditioner's storage allowed below n = 724,
// where n² is under it: 2¹⁹ numbers (4 MiB).
const precondFloor = 1 << 19

func newColumnPrecond(n, bw int) *columnPrecond {
	q := max(1, bw-1)
	if budget := max(n*n, precondFloor); n*(bw-1)*q > budget {
		q = max(1, budget/(n*max(1, bw-1)))
	}
	pc := &columnPrecond{n: n, bw: bw, q: q, off: make([]int, n+1)}
	for j := 0; j < n; j++ {
		sz := max(0, min(bw-1, n-1-j))
		words := 0
		for a0 := 0; a0 < sz; a0 += q {
			c := min(q, sz-a0)
			words += c * c
		}
		pc.off[j+1] = pc.off[j] + words
	}
	pc.inv = make([]float64, pc.off[n])
	return pc
}

// build fills the blocks from X⁻¹ and M.
func (pc *columnPrecond) build(xinv, m blas.General) {
	n, bw, q := pc.n, pc.bw, pc.q
	p, md := xinv.Data, m.Data
	for j := 0; j < n; j++ {
		sz := max(0, min(bw-1, n-1-j))
		blk := pc.inv[pc.off[j]:pc.off[j+1]]
		for a0 := 0; a0 < sz; a0 += q {
			c := min(q, sz-a0)
			g := blas.General{Rows: c, Cols: c, Stride: c, Data: blk[:c*c]}
			for a := 0; a < c; a++ {
				i := j + 1 + a0 + a
				for e := a; e < c; e++ {
					k := j + 1 + a0 + e
					g.Data[a*c+e] = 2 * (p[j*n+k]*md[j*n+i] + p[j*n+j]*md[k*n+i] + p[i*n+k]*md[j*n+j] + p[i*n+j]*md[k*n+j])
				}
			}
			if !blas.Cholesky(g) || !blas.CholInverse(g) { // Jacobi on this chunk
				clear(g.Data)
				for a := 0; a < c; a++ {
					i := j + 1 + a0 + a
					d := 2 * (p[i*n+i]*md[j*n+j] + p[j*n+j]*md[i*n+i] + 2*p[i*n+j]*md[i*n+j])
					g.Data[a*c+a] = 1 / math.Max(d, 1e-300)
				}
			}
			blk = blk[c*c:]
		}
	}
}

// apply sets z = B⁻¹(2r) on the band's free entries (r and z are bands,
// zero on the diagonal). Columns are independent (column j's block reads
// and writes only its own entries of r and z), so workers take column
// ranges (splitRows).
func (pc *columnPrecond) apply(r, z []float64) {
	n, bw, q := pc.n, pc.bw, pc.q
	clear(z)
	splitRows(n, false, func(lo, hi int) {
		x, y := make([]float64, q), make([]float64, q)
		for j := lo; j < hi; j++ {
			sz := max(0, min(bw-1, n-1-j))
			blk := pc.inv[pc.off[j]:pc.off[j+1]]
			for a0 := 0; a0 < sz; a0 += q {
				c := min(q, sz-a0)
				x, y := x[:c], y[:c]
				for a := 0; a < c; a++ {
					i := j + 1 + a0 + a
					x[a] = 2 * r[i*bw+i-j]
				}
				// A c×c matrix–vector product in Go: c ≤ b − 1, and a kernel
				// call per chunk (4,000 per application at n = 512, b = 64,
				// c = 8) cost more in cgo and gate overhead than its 2c² flops.
				for a := range y {
					y[a] = dot(blk[a*c:(a+1)*c], x)
				}
				for a := 0; a < c; a++ {
					i := j + 1 + a0 + a
					z[i*bw+i-j] = y[a]
				}
				blk = blk[c*c:]
			}
		}
	})
}
