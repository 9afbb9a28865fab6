package workload

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/inputerr"
)

// Answerer is an optional method of a Workload: it answers the queries W·x
// on a histogram x (length n) in W's row order, typically faster than the
// matrix–vector product. Identity, Total, Prefix, AllRange and WidthKRange
// answer from cumulative sums in O(m + n) without forming W; every
// Explicit workload can be answered through AnswerOf. A new workload type
// adds its fast path by implementing Answer — no caller changes.
type Answerer interface {
	Answer(x []float64) ([]float64, error)
}

// AnswerOf returns W·x for w: through w's Answer method when it has one,
// else through its explicit matrix. A workload known only by its Gram matrix
// cannot be answered (an error wrapping ErrInput).
func AnswerOf(w Workload, x []float64) ([]float64, error) {
	if w == nil {
		return nil, inputerr.Errorf("workload", "nil workload")
	}
	if err := checkHistogram(w, x); err != nil {
		return nil, err
	}
	if a, ok := w.(Answerer); ok {
		return a.Answer(x)
	}
	if e, ok := w.(Explicit); ok {
		wm := e.Matrix()
		m, n := wm.Dims()
		out := make([]float64, m)
		mat.NewVecDense(m, out).MulVec(wm, mat.NewVecDense(n, append([]float64(nil), x...)))
		return out, nil
	}
	return nil, inputerr.Errorf("workload", "workload %s has no query matrix (it is known only by its Gram): answers need W", w.Name())
}

// checkHistogram validates x for w: n finite values.
func checkHistogram(w Workload, x []float64) error {
	if n := w.Domain(); len(x) != n {
		return inputerr.Errorf("workload", "histogram has %d cells but workload %s has domain %d", len(x), w.Name(), n)
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return inputerr.Errorf("workload", "histogram cell %d is %v", i, v)
		}
	}
	return nil
}

// cumsum returns c with c[k] = x_0 + … + x_{k−1}: every range sum is one
// difference.
func cumsum(x []float64) []float64 {
	c := make([]float64, len(x)+1)
	for i, v := range x {
		c[i+1] = c[i] + v
	}
	return c
}

// Answer returns x itself.
func (w *Identity) Answer(x []float64) ([]float64, error) {
	if err := checkHistogram(w, x); err != nil {
		return nil, err
	}
	return append([]float64(nil), x...), nil
}

// Answer returns the total of x.
func (w *Total) Answer(x []float64) ([]float64, error) {
	if err := checkHistogram(w, x); err != nil {
		return nil, err
	}
	return []float64{cumsum(x)[w.N]}, nil
}

// Answer returns the prefix sums of x.
func (w *Prefix) Answer(x []float64) ([]float64, error) {
	if err := checkHistogram(w, x); err != nil {
		return nil, err
	}
	return cumsum(x)[1:], nil
}

// Answer returns every range sum [i, j], ordered by start i then end j (as
// Matrix).
func (w *AllRange) Answer(x []float64) ([]float64, error) {
	if err := checkHistogram(w, x); err != nil {
		return nil, err
	}
	c, n := cumsum(x), w.N
	out := make([]float64, 0, w.Queries())
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			out = append(out, c[j+1]-c[i])
		}
	}
	return out, nil
}

// Answer returns every width-K window sum, ordered by start (as Matrix).
func (w *WidthKRange) Answer(x []float64) ([]float64, error) {
	if err := checkHistogram(w, x); err != nil {
		return nil, err
	}
	c := cumsum(x)
	out := make([]float64, w.Queries())
	for r := range out {
		out[r] = c[r+w.K] - c[r]
	}
	return out, nil
}
