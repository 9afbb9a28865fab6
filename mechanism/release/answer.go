package release

import (
	"fmt"
	"github.com/dpsolve/dpsolve/internal/inputerr"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/mechanism/workload"
)

// Answer returns the workload's answers W x on a histogram x (typically the
// reconstruction x̂), in the row order of w's query matrix. Identity, Total,
// Prefix, AllRange and WidthKRange are answered from cumulative sums in
// O(m + n) without forming W; any other workload that can form its matrix
// (workload.Explicit) is answered by a matrix–vector product. A workload
// known only by its Gram matrix cannot be answered.
func Answer(w workload.Workload, x []float64) ([]float64, error) {
	if w == nil {
		return nil, inputerr.Errorf("release", "nil workload")
	}
	n := w.Domain()
	if len(x) != n {
		return nil, inputerr.Errorf("release", "histogram has %d cells but workload %s has domain %d", len(x), w.Name(), n)
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, inputerr.Errorf("release", "histogram cell %d is %v", i, v)
		}
	}
	// c[k] = x_0 + … + x_{k−1}: every range sum is one difference.
	cum := func() []float64 {
		c := make([]float64, n+1)
		for i, v := range x {
			c[i+1] = c[i] + v
		}
		return c
	}
	switch w := w.(type) {
	case *workload.Identity:
		return append([]float64(nil), x...), nil
	case *workload.Total:
		return []float64{cum()[n]}, nil
	case *workload.Prefix:
		return cum()[1:], nil
	case *workload.AllRange:
		// Ranges [i, j], ordered by start i then end j (as AllRange.Matrix).
		c := cum()
		out := make([]float64, 0, w.Queries())
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				out = append(out, c[j+1]-c[i])
			}
		}
		return out, nil
	case *workload.WidthKRange:
		c := cum()
		out := make([]float64, w.Queries())
		for r := range out {
			out[r] = c[r+w.K] - c[r]
		}
		return out, nil
	case workload.Explicit:
		wm := w.Matrix()
		m, _ := wm.Dims()
		out := make([]float64, m)
		mat.NewVecDense(m, out).MulVec(wm, mat.NewVecDense(n, append([]float64(nil), x...)))
		return out, nil
	}
	return nil, inputerr.Errorf("release", "workload %s has no query matrix (it is known only by its Gram): answers need W", w.Name())
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
	var rinv mat.TriDense
	if err := rinv.InverseTri(m.r); err != nil {
		if _, ok := err.(mat.Condition); !ok {
			return ExpectedError{}, fmt.Errorf("release: inverting the strategy: %w", err)
		}
	}
	ri := mat.DenseCopyOf(&rinv)
	var vr mat.Dense
	vr.Mul(w.Gram(), ri)
	var tr float64
	for i := 0; i < m.n; i++ {
		a, b := ri.RawRowView(i), vr.RawRowView(i)
		for j := i; j < m.n; j++ { // R⁻¹ is upper triangular
			tr += a[j] * b[j]
		}
	}
	if math.IsNaN(tr) || math.IsInf(tr, 0) || tr < 0 {
		return ExpectedError{}, fmt.Errorf("release: expected error is %v: strategy too ill-conditioned", tr)
	}
	e := ExpectedError{TraceVXinv: tr, Total: m.cal.Variance * tr}
	e.PerQuery = e.Total / float64(w.Queries())
	e.RMSE = math.Sqrt(e.PerQuery)
	return e, nil
}
