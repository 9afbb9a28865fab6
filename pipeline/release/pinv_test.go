package release

import (
	"context"
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/testkit/budgettest"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/newton"
)

// The optimum for a singular Gram (width-k ranges) is a rank-deficient
// strategy: the mechanism must reconstruct through A⁺, answer the workload
// without bias, and report v·tr(V X⁺) — the solver's own objective.
func TestRankDeficientStrategyAnswersItsWorkload(t *testing.T) {
	w, err := workload.NewWidthKRange(12, 4)
	if err != nil {
		t.Fatal(err)
	}
	res, err := newton.Solve(context.Background(), w.Gram(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Rank >= 12 {
		t.Fatalf("width-4 ranges over 12 cells have a singular Gram; the solver returned rank %d", res.Rank)
	}
	m, err := New(res.A, budgettest.ZCDP(1))
	if err != nil {
		t.Fatal(err)
	}
	if m.Rank() != res.Rank {
		t.Fatalf("mechanism rank %d, solver rank %d", m.Rank(), res.Rank)
	}
	exp, err := m.ExpectedError(w)
	if err != nil {
		t.Fatal(err)
	}
	// Independent: newton computes tr(V X⁺) from its own factorization; here
	// it comes from an SVD of A. 1e-9 relative: both are backward stable and
	// the solver's X is well conditioned on range(V).
	if d := math.Abs(exp.TraceVXinv-res.Objective) / res.Objective; d > 1e-9 {
		t.Fatalf("tr(V X⁺) = %.15g from A⁺, solver says %.15g (rel. diff %.2g)", exp.TraceVXinv, res.Objective, d)
	}
	// Noise-free measurements: W·A⁺·A·x = W·x exactly (to rounding), even
	// though x itself is not identified.
	x := make([]float64, 12)
	for i := range x {
		x[i] = float64((i*7)%5 + i)
	}
	var y mat.VecDense
	y.MulVec(m.a, mat.NewVecDense(12, x))
	xhat, err := m.Reconstruct(y.RawVector().Data)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := Answer(w, xhat)
	want, _ := Answer(w, x)
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-9*(1+math.Abs(want[i])) {
			t.Fatalf("answer %d: %v from x̂, %v from x", i, got[i], want[i])
		}
	}
	// A workload asking for a direction the strategy does not measure is
	// refused, not answered with bias.
	id, _ := workload.NewIdentity(12)
	if _, err := m.ExpectedError(id); !errors.Is(err, ErrInput) {
		t.Fatalf("identity from a rank-%d strategy: got %v, want a bad-input error", m.Rank(), err)
	}
}
