package mf

import (
	gblas "gonum.org/v1/gonum/blas"

	"github.com/dpsolve/dpsolve/blas"
)

// blockJacobi preconditions the multiplier system 𝒜ν = c with 𝒜's
// diagonal blocks, one per pattern (its diagonal multiplier and its
// k(k−1)/2 off-diagonal ones). With u_pq = z_p∘z_q (rows of Z for two steps
// of the pattern) and Γ(pq, st) = u_pqᵀ·K·u_st, the entries are
//
//	𝒜[d,d]   = Σ_{p,q} Γ(pq, pq),
//	𝒜[d,cd]  = 2·Σ_p Γ(pc, pd),
//	𝒜[ab,cd] = 2·(Γ(ac, bd) + Γ(ad, bc)),
//
// from ⟨z_a z_bᵀ, K∘(z_c z_dᵀ)⟩ = (z_a∘z_c)ᵀK(z_b∘z_d). Building them costs
// about (k+1)/2 n×n GEMMs.
type blockJacobi struct {
	e      *epochSolver
	blocks [][]float64 // lower Cholesky factors, m×m each
}

func newBlockJacobi(e *epochSolver) *blockJacobi { return &blockJacobi{e: e} }

// symPair indexes unordered pairs p ≤ q of one pattern.
func symPair(p, q, k int) int {
	if p > q {
		p, q = q, p
	}
	return p*k - p*(p-1)/2 + (q - p)
}

// build forms the blocks from Z and K, writing K into e.s and the row
// blocks u and K·u into e.w and e.t where they fit (all three are free
// between whiten and the first product of the multiplier system).
func (pc *blockJacobi) build() {
	e := pc.e
	e.kInto(e.s)
	n, b, k, m := e.n, e.b, e.k, e.perPattern()
	np := k * (k + 1) / 2
	group := max(1, 512/np)
	pc.blocks = make([][]float64, b)
	for r0 := 0; r0 < b; r0 += group {
		g := min(group, b-r0)
		u := rowsIn(e.w, g*np, n)
		for gi := 0; gi < g; gi++ {
			r := r0 + gi
			for p := 0; p < k; p++ {
				zp := row(e.z, r+p*b)
				for q := p; q < k; q++ {
					zq, out := row(e.z, r+q*b), row(u, gi*np+symPair(p, q, k))
					for c := range out {
						out[c] = zp[c] * zq[c]
					}
				}
			}
		}
		ku := rowsIn(e.t, g*np, n)
		blas.Gemm(gblas.NoTrans, gblas.NoTrans, 1, u, e.s, 0, ku)
		for gi := 0; gi < g; gi++ {
			ur := blas.General{Rows: np, Cols: n, Stride: n, Data: u.Data[gi*np*n:]}
			kr := blas.General{Rows: np, Cols: n, Stride: n, Data: ku.Data[gi*np*n:]}
			gam := blas.NewGeneral(np, np)
			blas.Gemm(gblas.NoTrans, gblas.Trans, 1, kr, ur, 0, gam)
			pc.blocks[r0+gi] = pc.block(gam, k, m, np)
		}
	}
}

func (pc *blockJacobi) block(gam blas.General, k, m, np int) []float64 {
	G := func(a, c, b2, d int) float64 { return gam.Data[symPair(a, c, k)*np+symPair(b2, d, k)] }
	blk := make([]float64, m*m)
	for p := 0; p < k; p++ {
		for q := 0; q < k; q++ {
			blk[0] += G(p, q, p, q)
		}
	}
	for c := 0; c < k; c++ {
		for d := c + 1; d < k; d++ {
			j := pairIndex(c, d, k)
			s := 0.0
			for p := 0; p < k; p++ {
				s += G(p, c, p, d)
			}
			blk[j] = 2 * s
			blk[j*m] = 2 * s
			for a := 0; a < k; a++ {
				for b2 := a + 1; b2 < k; b2++ {
					i := pairIndex(a, b2, k)
					blk[i*m+j] = 2 * (G(a, c, b2, d) + G(a, d, b2, c))
				}
			}
		}
	}
	if !lowerChol(blk, m) {
		for i := range blk { // fall back on the diagonal
			blk[i] = 0
		}
		for i := 0; i < m; i++ {
			blk[i*m+i] = 1
		}
	}
	return blk
}

// apply solves each block's L·Lᵀ·x = r.
func (pc *blockJacobi) apply(r, x []float64) {
	m := pc.e.perPattern()
	for bi, l := range pc.blocks {
		xx := x[bi*m : (bi+1)*m]
		copy(xx, r[bi*m:(bi+1)*m])
		lowerCholSolve(l, m, xx)
	}
}

// rowsIn is an r×n matrix in the storage of the free n×n a when it fits,
// else a new one (r > n: small n or k > 31).
func rowsIn(a blas.General, r, n int) blas.General {
	if r > a.Rows {
		return blas.NewGeneral(r, n)
	}
	return blas.General{Rows: r, Cols: n, Stride: n, Data: a.Data[:r*n]}
}
