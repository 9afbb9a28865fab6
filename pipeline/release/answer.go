package release

import (
	"fmt"
	"math"

	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/privacy/accounting"
)

// Answer returns the workload's answers W x on a histogram x (typically the
// reconstruction x̂), in the row order of w's query matrix: through the
// workload's own Answer method where it has one (cumulative sums in O(m + n)
// for identity, total, prefix, all-range and width-k workloads), else by a
// matrix–vector product with its explicit W (workload.AnswerOf). A workload
// known only by its Gram matrix cannot be answered.
func Answer(w workload.Workload, x []float64) ([]float64, error) {
	return workload.AnswerOf(w, x)
}

// ExpectedError is the expected error of a mechanism's workload answers,
// before any post-processing.
type ExpectedError struct {
	// Total is E‖W x̂ − W x‖² = v·tr(V (AᵀA)⁻¹), v the noise variance.
	Total float64
	// PerQuery is Total / m, the expected mean squared error per query.
	PerQuery float64
	// RMSE is √PerQuery.
	RMSE float64
	// TraceVXinv is tr(V (AᵀA)⁻¹), the strategy's unit-variance error.
	TraceVXinv float64
}

// ExpectedError returns the expected error of answering w from this
// mechanism's reconstruction: v·tr(V X⁻¹) with X = AᵀA = RᵀR, computed as
// Σᵢⱼ (R⁻¹)ᵢⱼ (V R⁻¹)ᵢⱼ = tr(R⁻ᵀ V R⁻¹) from the triangular factor.
func (m *Mechanism) ExpectedError(w workload.Workload) (ExpectedError, error) {
	if w == nil {
		return ExpectedError{}, inputerr.Errorf("release", "nil workload")
	}
	if w.Domain() != m.n {
		return ExpectedError{}, inputerr.Errorf("release", "workload %s has domain %d but the strategy has %d columns", w.Name(), w.Domain(), m.n)
	}
	if m.pinv != nil {
		return m.expectedErrorPinv(w)
	}
	tr, err := accounting.TraceFactor(w.Gram(), m.r) // dpsolve's one tr(V X⁻¹), factored form
	if err != nil {
		return ExpectedError{}, fmt.Errorf("release: %w", err)
	}
	e := ExpectedError{TraceVXinv: tr, Total: m.cal.Variance * tr}
	e.PerQuery = e.Total / float64(w.Queries())
	e.RMSE = math.Sqrt(e.PerQuery)
	return e, nil
}
