package sdp

import (
	"errors"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/model/workload"
)

// Where a Formulation's W comes from (ForWorkload's second result).
const (
	// SourceMatrix: the workload's own matrix W, so the program is
	// literally the paper's.
	SourceMatrix = "matrix"
	// SourceGramFactor: an n×n factor R of V = WᵀW (FactorGram), with the
	// same optimum and a block of size 2n instead of n+m.
	SourceGramFactor = "gram-factor"
)

// ForWorkload builds form f for wl: from W itself when wl has an explicit
// matrix with m ≤ n, otherwise (m > n, or a workload known only by its
// Gram) from an n×n factor of V (see FromGram). It returns where the
// program's W came from, SourceMatrix or SourceGramFactor.
func ForWorkload(f Form, wl workload.Workload) (*Formulation, string, error) {
	if e, ok := wl.(workload.Explicit); ok && wl.Queries() <= wl.Domain() {
		fm, err := Build(f, e.Matrix())
		return fm, SourceMatrix, err
	}
	fm, err := FromGram(f, wl.Gram())
	return fm, SourceGramFactor, err
}

// StrategyMatrix returns the strategy the point stands for: A = chol(X)
// (upper triangular, AᵀA = X) for the Approx form, whose only variable is
// X, and the A variable itself for the exact forms.
func (pt *Point) StrategyMatrix(f Form) (*mat.Dense, error) {
	if f != Approx {
		return pt.A, nil
	}
	var ch mat.Cholesky
	if !ch.Factorize(pt.X) {
		return nil, errors.New("the SDP's X is not positive definite; no Cholesky strategy to write")
	}
	var u mat.TriDense
	ch.UTo(&u)
	return mat.DenseCopyOf(&u), nil
}
