package plan

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/mechanism/lrm"
	"github.com/dpsolve/dpsolve/newton"
)

// blockTol is the certified relative gap asked of every per-attribute newton
// solve: block coordinate descent judges sweeps by a relative change of
// 1e-10, so each block must be solved well below that; newton reaches gaps of
// 1e-12–1e-14 at these sizes in one extra quadratic step, and reports
// Stalled (with its certificate) where rounding stops it first.
const blockTol = 1e-12

// block is one attribute's strategy: A (p×d, unit max column norm in the
// privacy's norm), its Gram X = AᵀA, and X⁺ for error evaluation.
type block struct {
	a    *mat.Dense
	x    *mat.SymDense
	pinv []float64 // X⁺, d×d row-major
	// obj and lb are the objective tr(G X⁺) and a certified lower bound on
	// min tr(G X⁺) over all d×d strategies of sensitivity 1, for the Gram G
	// the block was solved for.
	obj, lb float64
	theta   float64 // newton's regularization, 0 when exact
	how     string  // "identity", "total", "newton", "pidentity"
}

// trace returns tr(V X⁺) = Σᵢⱼ Vᵢⱼ X⁺ᵢⱼ.
func (b *block) trace(v *mat.SymDense) float64 {
	d := v.SymmetricDim()
	raw := v.RawSymmetric()
	s := 0.0
	for i := 0; i < d; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+d]
		p := b.pinv[i*d : i*d+d]
		s += row[i] * p[i]
		off := 0.0
		for j := i + 1; j < d; j++ {
			off += row[j] * p[j]
		}
		s += 2 * off
	}
	return s
}

// identityBlock is A = I.
func identityBlock(d int) *block {
	a := mat.NewDense(d, d, nil)
	x := mat.NewSymDense(d, nil)
	p := make([]float64, d*d)
	for i := 0; i < d; i++ {
		a.Set(i, i, 1)
		x.SetSym(i, i, 1)
		p[i*d+i] = 1
	}
	return &block{a: a, x: x, pinv: p, how: "identity"}
}

// totalBlock is the 1×d strategy of ones: X = J, X⁺ = J/d².
func totalBlock(d int) *block {
	a := mat.NewDense(1, d, nil)
	x := mat.NewSymDense(d, nil)
	p := make([]float64, d*d)
	for i := 0; i < d; i++ {
		a.Set(0, i, 1)
		for j := i; j < d; j++ {
			x.SetSym(i, j, 1)
		}
	}
	for i := range p {
		p[i] = 1 / float64(d*d)
	}
	return &block{a: a, x: x, pinv: p, how: "total"}
}

// gramShape classifies G: diagonal, a positive multiple of J (all entries
// equal), or general.
func gramShape(g *mat.SymDense) (diagonal, allEqual bool) {
	d := g.SymmetricDim()
	raw := g.RawSymmetric()
	g00 := raw.Data[0]
	diagonal, allEqual = true, g00 > 0
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			v := raw.Data[i*raw.Stride+j]
			if i != j && v != 0 {
				diagonal = false
			}
			// Equality within 1e-14 relative: the weighted sums Σ cⱼ·J of a
			// total that every term shares are equal up to rounding of the
			// additions (≈ terms·1e-16).
			if math.Abs(v-g00) > 1e-14*g00 {
				allEqual = false
			}
		}
	}
	return diagonal, allEqual
}

// solveBlock returns the optimal strategy for one attribute's Gram G (d×d,
// positive semidefinite, positive diagonal) under the privacy's norm.
//
// Exact closed forms first: d = 1; G diagonal (X = I is optimal: the dual
// point y = diag G certifies tr G); G = c·J, a total shared by every term
// (A = 1ᵀ, X = J, tr(G X⁺) = c, equal to the SVD bound (tr G^{1/2})²/d = c,
// so optimal and certified even though G is singular, for L1 and L2 alike:
// the 1×d ones row has unit L1 and L2 column norms). Otherwise newton.Solve
// (Gaussian) certifies the optimum; a singular G is regularized by newton
// (θ reported; objective and bound are for G itself). For Pure privacy the
// block is HDMM's p-Identity strategy optimized by lrm, and its lower bound
// is newton's L2 certificate (the L1 unit ball lies inside the L2 one, so no
// L1 strategy beats the L2 optimum).
func solveBlock(ctx context.Context, g *mat.SymDense, privacy Privacy) (*block, error) {
	d := g.SymmetricDim()
	diagonal, allEqual := gramShape(g)
	switch {
	case d == 1 || diagonal:
		b := identityBlock(d)
		b.obj = mat.Trace(g)
		b.lb = b.obj
		return b, nil
	case allEqual:
		b := totalBlock(d)
		b.obj = g.At(0, 0)
		b.lb = b.obj
		return b, nil
	}
	res, err := newton.Solve(ctx, g, &newton.Options{Tol: blockTol})
	if err != nil {
		return nil, err
	}
	if privacy == Pure {
		return pureBlock(ctx, g, res)
	}
	b := &block{x: res.X, obj: res.Objective, lb: res.LowerBound, theta: res.Regularization, how: "newton"}
	b.a = mat.NewDense(d, d, nil)
	b.a.Copy(res.A)
	if b.pinv, err = inverse(res.X); err != nil {
		return nil, err
	}
	// The objective for the caller's G from our own inverse (newton's raw
	// objective is the same number; this keeps every error in the plan
	// computed by one formula).
	b.obj = b.trace(g)
	return b, nil
}

// pureBlock optimizes HDMM's p-Identity strategy for G under the L1 ball
// with lrm (from G's factor F, FᵀF = G), and keeps newton's L2 certificate
// as the lower bound.
func pureBlock(ctx context.Context, g *mat.SymDense, l2 *newton.Result) (*block, error) {
	f, err := lrm.GramFactor(g)
	if err != nil {
		return nil, err
	}
	res, err := lrm.Solve(ctx, f, &lrm.Options{Ball: lrm.L1, Start: lrm.StartPIdentity})
	if err != nil {
		return nil, err
	}
	// Normalize to unit max L1 column norm exactly.
	l := mat.DenseCopyOf(res.L)
	r, d := l.Dims()
	mx := 0.0
	for j := 0; j < d; j++ {
		s := 0.0
		for i := 0; i < r; i++ {
			s += math.Abs(l.At(i, j))
		}
		mx = math.Max(mx, s)
	}
	if !(mx > 0) {
		return nil, fmt.Errorf("plan: the p-Identity strategy is zero")
	}
	l.Scale(1/mx, l)
	x := mat.NewSymDense(d, nil)
	x.SymOuterK(1, l.T())
	b := &block{a: l, x: x, lb: l2.LowerBound, how: "pidentity"}
	if b.pinv, err = inverse(x); err != nil {
		// lrm fell back to a rank-deficient decomposition: Identity is
		// always feasible and answers everything.
		ib := identityBlock(d)
		ib.obj, ib.lb = mat.Trace(g), l2.LowerBound
		return ib, nil
	}
	b.obj = b.trace(g)
	// Identity is feasible under L1 too; keep it when it is better (lrm
	// returns its own Identity fallback for the factor, but the factor's
	// objective is only G's when F has full row rank).
	if id := mat.Trace(g); id < b.obj {
		ib := identityBlock(d)
		ib.obj, ib.lb = id, b.lb
		return ib, nil
	}
	return b, nil
}

// inverse returns X⁻¹ (row-major) of a positive definite X.
func inverse(x *mat.SymDense) ([]float64, error) {
	var c mat.Cholesky
	if !c.Factorize(x) {
		return nil, fmt.Errorf("plan: a block strategy is not positive definite")
	}
	var inv mat.SymDense
	if err := c.InverseTo(&inv); err != nil {
		return nil, fmt.Errorf("plan: inverting a block strategy: %v", err)
	}
	d := x.SymmetricDim()
	p := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			v := inv.At(i, j)
			p[i*d+j], p[j*d+i] = v, v
		}
	}
	return p, nil
}
