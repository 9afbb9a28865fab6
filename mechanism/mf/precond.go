package mf

import (
	"math"

	gblas "gonum.org/v1/gonum/blas"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/internal/expsum"
)

// blockJacobi preconditions the multiplier system 𝒜ν = c with 𝒜's
// diagonal blocks over groups of consecutive patterns (each pattern's
// diagonal multiplier and its k(k−1)/2 off-diagonal ones; a group's block
// couples its patterns too). For a multiplier basis matrix B_α (Σ_p E_pp
// over a pattern, or E_ab + E_ba) 𝒜[α,β] = ⟨B_α, Z(K∘(ZᵀB_βZ))Zᵀ⟩, and
// ⟨E_ab, Z(K∘(Zᵀ E_cd Z))Zᵀ⟩ = Σ_ij z_a(i) z_c(i) K_ij z_b(j) z_d(j) for
// the rows z of Z. K is a Cauchy matrix: 1/(λi+λj) ≈ Σ_l w_l e^{−t_l λi}
// e^{−t_l λj} (expsum.Reciprocal, relative error precTol, positive weights), which
// turns every entry into Σ_l w_l G_l[a,c]·G_l[b,d] with G_l = Z·diag(e^{−t_l
// λ})·Zᵀ, needed only on the group's rows: for a group S of g·k steps each
// term costs one SYRK of |S| rows of n, about R·g·k·n² flops over all
// groups for R terms, where forming the exact blocks of single patterns
// cost (k+1)·n³. The blocks are
// within relative error precTol of 𝒜's own (every K entry is, and the
// quadratic form is Σ_ij K_ij·(ZᵀNZ)ij² with nonnegative weights), and
// positive definite.
type blockJacobi struct {
	e      *epochSolver
	group  int            // patterns per block
	blocks []blas.General // upper Cholesky factors, (group·m)² each
	// Per worker: the group's rows of Z, its scaled rows, and G_l on the
	// group's rows.
	zs, y, gl []blas.General
	ok        []bool // false: the block fell back to the identity
	inT       bool   // the blocks live in e.t
}

// precTol is the relative accuracy of the preconditioner's kernel; the
// preconditioned system's condition number is within (1+precTol)/(1−precTol)
// of that of the exact blocks.
const precTol = 0.05

// maxBlockDim caps a block's size g·m (g patterns of m multipliers; at
// least one pattern). Coupling consecutive patterns is what the momentum
// workloads' systems need: at n = 512, k = 4, momentum 0.9, CG took 261
// products with one pattern per block, 114 with blocks of 126 and 95 with
// 252 (36 patterns), in the same 9 Newton iterations (CG started from
// zero), while the blocks' SYRKs cost about R·g·k·n² flops (R ≈ 15 terms).
const maxBlockDim = 256

func newBlockJacobi(e *epochSolver) *blockJacobi {
	m := e.perPattern()
	g := max(1, min(e.b, maxBlockDim/m))
	pc := &blockJacobi{e: e, group: g}
	ng := (e.b + g - 1) / g
	pc.blocks = make([]blas.General, ng)
	pc.ok = make([]bool, ng)
	total := 0
	for i := range pc.blocks {
		d := min(g, e.b-i*g) * m
		total += d * d
	}
	// The blocks live in e.t (free from whiten to the next objective)
	// when they fit: they hold g·m·(b·m) = g·m²·n/k numbers.
	var store []float64
	if total <= len(e.t.Data) {
		store, pc.inT = e.t.Data[:total], true
	} else {
		store = make([]float64, total)
	}
	for i := range pc.blocks {
		d := min(g, e.b-i*g) * m
		pc.blocks[i] = blas.General{Rows: d, Cols: d, Stride: d, Data: store[:d*d]}
		store = store[d*d:]
	}
	sk := g * e.k
	for range kernelWorkers(ng) {
		pc.zs = append(pc.zs, blas.NewGeneral(sk, e.n))
		pc.y = append(pc.y, blas.NewGeneral(sk, e.n))
		pc.gl = append(pc.gl, blas.NewGeneral(sk, sk))
	}
	return pc
}

// build forms the blocks from Z and the eigenvalues λ of the current
// whitening.
func (pc *blockJacobi) build() {
	e := pc.e
	lo := 2 * math.Max(e.lam[0], 1e-300)
	ts, ws := expsum.Reciprocal(lo, 2*e.lam[e.n-1], precTol)
	// The groups are independent (each writes its own block, with its own
	// worker's scratch), and their SYRKs (g·k rows of n: 144×512 at
	// n = 512, k = 4) are below the gate's threading size.
	eachUnit(len(pc.zs), len(pc.blocks), func(w, gi int) { pc.buildGroup(w, gi, ts, ws) })
}

func (pc *blockJacobi) buildGroup(w, gi int, ts, ws []float64) {
	e := pc.e
	n, b, k := e.n, e.b, e.k
	r0 := gi * pc.group
	g := min(pc.group, b-r0)
	sk := g * k
	zs := blas.General{Rows: sk, Cols: n, Stride: n, Data: pc.zs[w].Data[:sk*n]}
	for ri := 0; ri < g; ri++ {
		for p := 0; p < k; p++ {
			copy(row(zs, ri*k+p), row(e.z, r0+ri+p*b))
		}
	}
	blk := pc.blocks[gi]
	clear(blk.Data)
	gl := blas.General{Rows: sk, Cols: sk, Stride: sk, Data: pc.gl[w].Data[:sk*sk]}
	scale := make([]float64, n)
	for l := range ts {
		// Term l weighs column i by e^{−t_l λi}; λ is ascending, so only
		// the columns with t_l·λi ≤ 40 (the rest below e^{−40} of the
		// kernel entries they feed) enter the SYRK.
		cols := 0
		for i := 0; i < n; i++ {
			x := ts[l] * e.lam[i]
			scale[i] = math.Sqrt(math.Sqrt(ws[l]) * math.Exp(-x))
			if x <= 40 {
				cols = i + 1
			}
		}
		if cols == 0 {
			continue
		}
		y := blas.General{Rows: sk, Cols: cols, Stride: n, Data: pc.y[w].Data[:sk*n]}
		for s := 0; s < sk; s++ {
			zr, yr := row(zs, s)[:cols], y.Data[s*n:s*n+cols]
			for i, z := range zr {
				yr[i] = z * scale[i]
			}
		}
		blas.Syrk(gblas.NoTrans, 1, y, 0, gl)
		blas.Symmetrize(gl)
		pc.accumulate(blk, gl, g)
	}
	pc.ok[gi] = blas.Cholesky(blk)
}

// accumulate adds one term's entries to the group's block (upper triangle):
// with G = √w_l·G_l on the group's steps (local index ri·k + p),
//
//	𝒜[d_r, d_s]   += Σ_{p,q} G[rp, sq]²,
//	𝒜[d_r, cd_s]  += 2·Σ_p G[rp, sc]·G[rp, sd],
//	𝒜[ab_r, cd_s] += 2·(G[ra, sc]·G[rb, sd] + G[ra, sd]·G[rb, sc]).
func (pc *blockJacobi) accumulate(blk, gl blas.General, g int) {
	k, m := pc.e.k, pc.e.perPattern()
	d := blk.Cols
	at := func(r, p, s, q int) float64 { return gl.Data[(r*k+p)*gl.Stride+s*k+q] }
	for r := 0; r < g; r++ {
		for s := r; s < g; s++ {
			base := (r*m)*d + s*m
			acc := 0.0
			for p := 0; p < k; p++ {
				for q := 0; q < k; q++ {
					v := at(r, p, s, q)
					acc += v * v
				}
			}
			blk.Data[base] += acc
			for c := 0; c < k; c++ {
				for dd := c + 1; dd < k; dd++ {
					j := pairIndex(c, dd, k)
					acc, acc2 := 0.0, 0.0
					for p := 0; p < k; p++ {
						acc += at(r, p, s, c) * at(r, p, s, dd)
						acc2 += at(s, p, r, c) * at(s, p, r, dd)
					}
					blk.Data[base+j] += 2 * acc
					if s != r { // 𝒜[cd_r, d_s], also in the upper triangle
						blk.Data[(r*m+j)*d+s*m] += 2 * acc2
					}
					for a := 0; a < k; a++ {
						for bb := a + 1; bb < k; bb++ {
							i := pairIndex(a, bb, k)
							if s == r && i > j {
								continue
							}
							blk.Data[(r*m+i)*d+s*m+j] += 2 * (at(r, a, s, c)*at(r, bb, s, dd) + at(r, a, s, dd)*at(r, bb, s, c))
						}
					}
				}
			}
		}
	}
}

// apply solves each block's system.
func (pc *blockJacobi) apply(r, x []float64) {
	copy(x, r)
	off := 0
	for gi, u := range pc.blocks {
		d := u.Rows
		if pc.ok[gi] {
			xb := x[off : off+d] // UᵀU·x = r by two triangular solves
			blas.Trsv(gblas.Upper, gblas.Trans, gblas.NonUnit, u, xb)
			blas.Trsv(gblas.Upper, gblas.NoTrans, gblas.NonUnit, u, xb)
		}
		off += d
	}
}
