package kron

import (
	"context"
	"math"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/cg"
	"github.com/dpsolve/dpsolve/status"
)

// Part is one weighted Kronecker product of a union strategy: its
// measurements are y = Weight·(⊗Aᵢ)x + z.
type Part struct {
	Weight float64
	A      *Product
}

// Union is a stack of weighted Kronecker products over one domain,
// A = [w₁A⁽¹⁾; w₂A⁽²⁾; …]. It is never formed.
type Union struct {
	parts []Part
	grams []*Product // A⁽ᵏ⁾ᵀA⁽ᵏ⁾
	trans []*Product // A⁽ᵏ⁾ᵀ
	n     int
}

// NewUnion validates the parts: at least one, positive finite weights, the
// same number of columns.
func NewUnion(parts ...Part) (*Union, error) {
	if len(parts) == 0 {
		return nil, errorf("a union needs at least one part")
	}
	u := &Union{parts: append([]Part(nil), parts...)}
	for k, p := range parts {
		if p.A == nil {
			return nil, errorf("part %d has no strategy", k+1)
		}
		if math.IsNaN(p.Weight) || math.IsInf(p.Weight, 0) || p.Weight <= 0 {
			return nil, errorf("part %d has weight %v; weights must be positive and finite", k+1, p.Weight)
		}
		_, c := p.A.Dims()
		if k == 0 {
			u.n = c
		} else if c != u.n {
			return nil, errorf("part %d has %d columns but part 1 has %d", k+1, c, u.n)
		}
		u.grams = append(u.grams, p.A.Gram())
		u.trans = append(u.trans, p.A.Transpose())
	}
	return u, nil
}

// Parts returns the parts.
func (u *Union) Parts() []Part { return append([]Part(nil), u.parts...) }

// Cols returns the number of cells n.
func (u *Union) Cols() int { return u.n }

// MulVec returns each part's noiseless measurements wₖ·A⁽ᵏ⁾x.
func (u *Union) MulVec(x []float64) ([][]float64, error) {
	out := make([][]float64, len(u.parts))
	for k, p := range u.parts {
		y, err := p.A.MulVec(x)
		if err != nil {
			return nil, err
		}
		for i := range y {
			y[i] *= p.Weight
		}
		out[k] = y
	}
	return out, nil
}

// ColumnNorm returns the union's largest column 2-norm,
// √(Σₖ wₖ²·Πᵢ‖column of Aᵢ⁽ᵏ⁾‖²) maximised per cell. Since the maximum of a
// sum is at most the sum of the maxima, this returns the exact value when
// every part's column norms are constant across cells (as for the plans'
// unit-column-norm factors) and an upper bound otherwise — safe for
// calibrating noise.
func (u *Union) ColumnNorm() float64 {
	s := 0.0
	for _, p := range u.parts {
		c := p.A.ColumnNorm(2)
		s += p.Weight * p.Weight * c * c
	}
	return math.Sqrt(s)
}

// CGOptions configures Union.LeastSquares.
type CGOptions struct {
	// Tol is the relative residual of the normal equations to reach;
	// 0 means 1e-12.
	Tol float64
	// MaxIter caps the CG iterations; 0 means 10·(number of cells) capped
	// at 10,000.
	MaxIter int
}

// LeastSquares returns x̂ minimising Σₖ‖wₖA⁽ᵏ⁾x̂ − yₖ‖² by conjugate
// gradients (package cg) on the implicit normal equations
// (Σₖ wₖ²A⁽ᵏ⁾ᵀA⁽ᵏ⁾)x̂ = Σₖ wₖA⁽ᵏ⁾ᵀyₖ, every product applied factor by
// factor. From x = 0 the iterates stay in the range of the normal matrix,
// so for a rank-deficient stack CG converges to the minimum-norm solution.
// It checks ctx every 50 iterations (CG restarts from the current iterate
// there, which keeps its convergence) and returns ctx's error when
// cancelled. The cg.Result reports the iterations and final residual.
func (u *Union) LeastSquares(ctx context.Context, ys [][]float64, opt CGOptions) ([]float64, cg.Result, error) {
	if len(ys) != len(u.parts) {
		return nil, cg.Result{}, errorf("%d measurement vectors for %d parts", len(ys), len(u.parts))
	}
	b := blas.NewGeneral(1, u.n)
	for k, p := range u.parts {
		r, _ := p.A.Dims()
		if len(ys[k]) != r {
			return nil, cg.Result{}, errorf("part %d: %d measurements for %d rows", k+1, len(ys[k]), r)
		}
		t, err := u.trans[k].MulVec(ys[k])
		if err != nil {
			return nil, cg.Result{}, err
		}
		for i, v := range t {
			b.Data[i] += p.Weight * v
		}
	}
	var opErr error
	op := func(dst, src blas.General) {
		clear(dst.Data)
		for k, p := range u.parts {
			g, err := u.grams[k].MulVec(src.Data)
			if err != nil {
				opErr = err
				return
			}
			w2 := p.Weight * p.Weight
			for i, v := range g {
				dst.Data[i] += w2 * v
			}
		}
	}
	tol := opt.Tol
	if tol <= 0 {
		tol = 1e-12
	}
	maxIter := opt.MaxIter
	if maxIter <= 0 {
		maxIter = min(10*u.n, 10000)
	}
	x := blas.NewGeneral(1, u.n)
	var total cg.Result
	bnorm := math.Sqrt(dotv(b.Data, b.Data))
	for total.Iterations < maxIter {
		if err := ctx.Err(); err != nil {
			return nil, total, err
		}
		// Solve for the correction from the current iterate: b − A x.
		chunk := min(50, maxIter-total.Iterations)
		res, err := cg.Solve(op, b, x, cg.Options{MaxIter: chunk, AbsTol: tol * bnorm})
		total.Iterations += res.Iterations
		if opErr != nil {
			return nil, total, opErr
		}
		if err != nil {
			return nil, total, err
		}
		total.Residual, total.Status = res.Residual, res.Status
		if res.Status == status.Converged {
			break
		}
	}
	return x.Data, total, nil
}

func dotv(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
