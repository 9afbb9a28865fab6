package release

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/internal/pinv"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/privacy/accounting"
)

// Rank-deficient strategies. For a singular workload Gram V the optimal
// strategy is the limit of definite ones: X = AᵀA is singular with
// range(V) ⊆ range(X) (newton's exact singular solve returns it). Such an A
// does not identify x, but it identifies W·x for every workload whose rows
// lie in A's row space, and the minimum-norm least-squares estimate
// x̂ = A⁺y answers those without bias: W·A⁺·A = W. Its error is
// v·tr(V X⁺), X⁺ = A⁺A⁺ᵀ.

// factorPinv computes A⁺ with pinv.Dense (dpsolve's one pseudo-inverse:
// the thin SVD A = UΣVᵀ, dropping singular values at or below
// max(p,n)·ε·σ₁, the usual numerical-rank threshold).
func (m *Mechanism) factorPinv() error {
	p, r, err := pinv.Dense(m.a)
	if err != nil {
		return fmt.Errorf("release: the SVD of the rank-deficient strategy did not converge")
	}
	if r == 0 {
		return inputerr.Errorf("release", "the strategy matrix is zero")
	}
	m.pinv = p
	m.rank = r
	return nil
}

// reconstructPinv returns x̂ = A⁺y.
func (m *Mechanism) reconstructPinv(y *mat.VecDense) ([]float64, error) {
	xhat := mat.NewVecDense(m.n, nil)
	xhat.MulVec(m.pinv, y)
	out := xhat.RawVector().Data
	for i, v := range out {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("release: reconstruction overflowed at cell %d", i)
		}
	}
	return out, nil
}

// Rank returns the rank of the strategy: n when it identifies the whole
// histogram, less for the optimum of a singular workload (which identifies
// the workload's answers only).
func (m *Mechanism) Rank() int { return m.rank }

// expectedErrorPinv returns v·tr(V X⁺), X = AᵀA, through dpsolve's one
// tr(V X⁺) routine (accounting.TraceGramPinv), which also refuses a
// workload with weight outside A's row space: its answers W·A⁺·y would be
// biased.
func (m *Mechanism) expectedErrorPinv(w workload.Workload) (ExpectedError, error) {
	x := mat.NewSymDense(m.n, nil)
	x.SymOuterK(1, m.a.T())
	tr, err := accounting.TraceGramPinv(w.Gram(), x)
	if errors.Is(err, accounting.ErrUnsupported) {
		return ExpectedError{}, inputerr.Errorf("release", "the strategy (rank %d of %d) cannot answer workload %s without bias: %w", m.rank, m.n, w.Name(), err)
	}
	if err != nil {
		return ExpectedError{}, fmt.Errorf("release: %w", err)
	}
	e := ExpectedError{TraceVXinv: tr, Total: m.cal.Variance * tr}
	e.PerQuery = e.Total / float64(w.Queries())
	e.RMSE = math.Sqrt(e.PerQuery)
	return e, nil
}
