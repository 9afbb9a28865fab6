package mf

import (
	"math"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/blas"
)

// Certified lower bounds by weak duality (see the package doc). For any
// Λ ⪰ 0 supported on the constraint pattern and X ≻ 0,
//
//	tr(V X⁻¹) + tr(Λ X) ≥ 2·tr((Λ^{1/2} V Λ^{1/2})^{1/2}) =: 2·T(Λ),
//
// (minimize the left side over X: the minimizer is
// X = Λ^{-1/2}(Λ^{1/2}VΛ^{1/2})^{1/2}Λ^{-1/2}), and on the feasible set
// tr(ΛX) ≤ Σ y (the diagonal multipliers), so 2·T(Λ) − Σy is a lower bound;
// scaling Λ by the best t > 0 gives T(Λ)²/Σy. T(Λ) is the nuclear norm of
// F·R for V = FᵀF and Λ = R·Rᵀ, taken from singular values (accurate to
// ε·σ_max each, where square roots of eigenvalues near zero are not).

// epochDual builds the dual point of the fixed-epoch schema from the
// pattern blocks of M = X⁻¹VX⁻¹ (blocks[r] is k×k, row-major: the entries
// (r+p·b, r+q·b)): off-diagonal entries kept, the diagonal replaced by its
// mean y_r, and y_r raised until the block is positive semidefinite. It
// returns the blocks' lower Cholesky factors (in place) and y.
func epochDual(blocks [][]float64, k int) ([]float64, bool) {
	y := make([]float64, len(blocks))
	for r, blk := range blocks {
		mean := 0.0
		for p := 0; p < k; p++ {
			mean += blk[p*k+p]
		}
		mean /= float64(k)
		if !(mean > 0) {
			return nil, false
		}
		for p := 0; p < k; p++ {
			blk[p*k+p] = mean
		}
		lo := minEig(blk, k)
		shift := 0.0
		if lo < 1e-13*mean {
			shift = 1e-13*mean - lo + 1e-15*mean
		}
		yr := mean + shift
		for p := 0; p < k; p++ {
			blk[p*k+p] = yr
		}
		for try := 0; ; try++ {
			c := append([]float64(nil), blk...)
			if lowerChol(c, k) {
				copy(blk, c)
				break
			}
			if try == 20 {
				return nil, false
			}
			yr += 1e-12 * mean * math.Pow(10, float64(try))
			for p := 0; p < k; p++ {
				blk[p*k+p] = yr
			}
		}
		y[r] = yr
	}
	return y, true
}

// minEig is the smallest eigenvalue of the symmetric k×k a.
func minEig(a []float64, k int) float64 {
	if k == 1 {
		return a[0]
	}
	var ev mat.EigenSym
	if !ev.Factorize(mat.NewSymDense(k, append([]float64(nil), a...)), false) {
		return math.Inf(-1)
	}
	return ev.Values(nil)[0]
}

// lowerChol overwrites the SPD k×k a with L, a = L·Lᵀ (upper part zeroed).
func lowerChol(a []float64, k int) bool {
	for j := 0; j < k; j++ {
		d := a[j*k+j]
		for p := 0; p < j; p++ {
			d -= a[j*k+p] * a[j*k+p]
		}
		if !(d > 0) {
			return false
		}
		d = math.Sqrt(d)
		a[j*k+j] = d
		for i := j + 1; i < k; i++ {
			s := a[i*k+j]
			for p := 0; p < j; p++ {
				s -= a[i*k+p] * a[j*k+p]
			}
			a[i*k+j] = s / d
		}
		for i := 0; i < j; i++ {
			a[i*k+j] = 0
		}
	}
	return true
}

// epochBoundIn is T(Λ)²/Σy for the block-diagonal (in the pattern basis) Λ
// whose blocks' Cholesky factors are chol and diagonal multipliers y; f is
// an upper factor of V.
// fr (n×n, overwritten) holds F·R.
func epochBoundIn(fr, f blas.General, chol [][]float64, y []float64, k int) (float64, bool) {
	n, b := f.Rows, len(chol)
	// F·R: column r+q·b = Σ_p F[:, r+p·b]·L_r[p][q]
	for i := 0; i < n; i++ {
		frow, out := row(f, i), row(fr, i)
		for r := 0; r < b; r++ {
			l := chol[r]
			for q := 0; q < k; q++ {
				s := 0.0
				for p := q; p < k; p++ {
					s += frow[r+p*b] * l[p*k+q]
				}
				out[r+q*b] = s
			}
		}
	}
	return nuclearBound(fr, y)
}

func nuclearBound(fr blas.General, y []float64) (float64, bool) {
	sv := make([]float64, fr.Rows)
	if !blas.SingularValues(fr, sv) {
		return 0, false
	}
	t, sy := 0.0, 0.0
	for _, s := range sv {
		t += s
	}
	for _, v := range y {
		sy += v
	}
	return t * t / sy, true
}

// inverseGramFactor returns G = T·U⁻ᵀ, whose Gram GᵀG is X⁻¹VX⁻¹, given
// T = F·U⁻¹ and X = UᵀU (t is overwritten).
func inverseGramFactor(t, u blas.General) blas.General {
	blas.Trsm(gblas.Right, gblas.Upper, gblas.Trans, gblas.NonUnit, 1, u, t)
	return t
}

// patternBlocks returns the k×k blocks of GᵀG on the fixed-epoch patterns.
func patternBlocks(g blas.General, b, k int) [][]float64 {
	n := g.Rows
	blocks := make([][]float64, b)
	for r := range blocks {
		blocks[r] = make([]float64, k*k)
	}
	for s := 0; s < n; s++ {
		gs := row(g, s)
		for r := 0; r < b; r++ {
			blk := blocks[r]
			for p := 0; p < k; p++ {
				a := gs[r+p*b]
				if a == 0 {
					continue
				}
				for q := p; q < k; q++ {
					blk[p*k+q] += a * gs[r+q*b]
				}
			}
		}
	}
	for _, blk := range blocks {
		for p := 0; p < k; p++ {
			for q := p + 1; q < k; q++ {
				blk[q*k+p] = blk[p*k+q]
			}
		}
	}
	return blocks
}
