package basis

import (
	"math"
)

// Expansion is the truncated series h(x) = Σ_k Coef[k] φ_k(x) in a basis.
// Its methods allocate a workspace per call unless one is supplied through
// Evaluator; an Expansion is safe for concurrent use as long as nobody mutates
// Coef.
type Expansion struct {
	Basis *Basis
	Coef  []float64
}

// NewExpansion checks that coef has one finite entry per basis function and
// returns the expansion (sharing coef).
func NewExpansion(b *Basis, coef []float64) (*Expansion, error) {
	if b == nil {
		return nil, inputErrorf("nil basis")
	}
	if len(coef) != b.Len() {
		return nil, inputErrorf("got %d coefficients, basis has %d functions", len(coef), b.Len())
	}
	for k, c := range coef {
		if math.IsNaN(c) || math.IsInf(c, 0) {
			return nil, inputErrorf("coefficient %d is not finite: %v", k, c)
		}
	}
	return &Expansion{Basis: b, Coef: coef}, nil
}

// Evaluator evaluates one expansion repeatedly without allocating. It is not
// safe for concurrent use; make one per goroutine.
type Evaluator struct {
	e               *Expansion
	w               *Workspace
	phi, grad, hess []float64
}

// Evaluator returns a reusable evaluator of e.
func (e *Expansion) Evaluator() *Evaluator {
	b := e.Basis
	d := b.Dim()
	return &Evaluator{
		e:    e,
		w:    b.NewWorkspace(),
		phi:  make([]float64, b.Len()),
		grad: make([]float64, b.Len()*d),
		hess: make([]float64, b.Len()*d*d),
	}
}

// Eval returns h(x) and, when grad (length d) or hess (length d², row-major) is
// non-nil, writes ∇h(x) and ∇²h(x) into them.
func (ev *Evaluator) Eval(x, grad, hess []float64) (float64, error) {
	b := ev.e.Basis
	d := b.Dim()
	if grad != nil && len(grad) != d {
		return 0, inputErrorf("gradient buffer has length %d, want %d", len(grad), d)
	}
	if hess != nil && len(hess) != d*d {
		return 0, inputErrorf("Hessian buffer has length %d, want %d", len(hess), d*d)
	}
	var g, h []float64
	if grad != nil {
		g = ev.grad
	}
	if hess != nil {
		h = ev.hess
	}
	if err := b.Derivatives(ev.w, x, ev.phi, g, h); err != nil {
		return 0, err
	}
	val := 0.0
	for k, c := range ev.e.Coef {
		val += c * ev.phi[k]
	}
	if grad != nil {
		for i := range grad {
			grad[i] = 0
		}
		for k, c := range ev.e.Coef {
			for i := 0; i < d; i++ {
				grad[i] += c * g[k*d+i]
			}
		}
	}
	if hess != nil {
		for i := range hess {
			hess[i] = 0
		}
		dd := d * d
		for k, c := range ev.e.Coef {
			for i := 0; i < dd; i++ {
				hess[i] += c * h[k*dd+i]
			}
		}
	}
	return val, nil
}

// Gradient writes ∇h(x) into grad (length d) without computing the value.
func (ev *Evaluator) Gradient(x, grad []float64) error {
	b := ev.e.Basis
	d := b.Dim()
	if len(grad) != d {
		return inputErrorf("gradient buffer has length %d, want %d", len(grad), d)
	}
	if err := b.Derivatives(ev.w, x, nil, ev.grad, nil); err != nil {
		return err
	}
	for i := range grad {
		grad[i] = 0
	}
	for k, c := range ev.e.Coef {
		for i := 0; i < d; i++ {
			grad[i] += c * ev.grad[k*d+i]
		}
	}
	return nil
}

// Value returns h(x).
func (e *Expansion) Value(x []float64) (float64, error) {
	return e.Evaluator().Eval(x, nil, nil)
}

// Gradient returns ∇h(x).
func (e *Expansion) Gradient(x []float64) ([]float64, error) {
	g := make([]float64, e.Basis.Dim())
	_, err := e.Evaluator().Eval(x, g, nil)
	return g, err
}

// Hessian returns ∇²h(x) as a row-major d×d slice.
func (e *Expansion) Hessian(x []float64) ([]float64, error) {
	d := e.Basis.Dim()
	h := make([]float64, d*d)
	_, err := e.Evaluator().Eval(x, nil, h)
	return h, err
}
