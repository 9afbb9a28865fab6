package mf

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/inputerr"
)

// ErrInput is wrapped by every error this package returns for input the
// caller can fix (the module-wide sentinel, see internal/inputerr).
var ErrInput = inputerr.ErrInput

func inputErr(format string, a ...any) error { return inputerr.Errorf("mf", format, a...) }

// MaxSteps caps n: the dense solvers hold a few n×n matrices, and at
// n = 16384 one of them is 2 GiB.
const MaxSteps = 16384

// Workload is the lower-triangular n×n matrix A whose rows are the linear
// functionals of the gradients g₁…gₙ that training releases (row t: the
// model after step t), with its Gram V = AᵀA.
type Workload struct {
	// Name describes the workload ("prefix", "momentum:0.9", …).
	Name string
	// A is the workload (n×n, lower triangular for the built-in ones; any
	// matrix with n columns for a user W). Nil when only a Gram was given.
	A *mat.Dense
	// V is AᵀA.
	V *mat.SymDense
}

// N is the number of steps.
func (w *Workload) N() int { return w.V.SymmetricDim() }

func checkSteps(n int) error {
	if n < 1 || n > MaxSteps {
		return inputErr("number of steps n = %d outside [1, %d]", n, MaxSteps)
	}
	return nil
}

// Prefix is SGD's workload: the model after step t is the sum of the first
// t gradients, A = lower-triangular ones.
func Prefix(n int) (*Workload, error) {
	return Momentum(n, 0, nil)
}

// Momentum is SGD with heavy-ball momentum β ∈ [0, 1) and per-step learning
// rates η (nil: all 1): with mₛ = β·mₛ₋₁ + gₛ and θₜ = θₜ₋₁ − ηₜ·mₜ, the
// model after step t is −Σ_{u≤t} A_tu·g_u with
//
//	A_tu = Σ_{s=u}^{t} ηₛ·β^{s−u},
//
// which for constant η = 1 is (1 − β^{t−u+1})/(1 − β) (Denisov et al.,
// NeurIPS 2022, §5; the learning rates enter as in jax_privacy's momentum
// workload, a prefix sum of diag(η) times the momentum recursion).
func Momentum(n int, beta float64, lr []float64) (*Workload, error) {
	if err := checkSteps(n); err != nil {
		return nil, err
	}
	if !(beta >= 0 && beta < 1) {
		return nil, inputErr("momentum β = %v outside [0, 1)", beta)
	}
	if lr != nil && len(lr) != n {
		return nil, inputErr("%d learning rates for n = %d steps", len(lr), n)
	}
	for t, e := range lr {
		if !(e > 0) || math.IsInf(e, 0) {
			return nil, inputErr("learning rate %d is %v, want finite and positive", t, e)
		}
	}
	a := mat.NewDense(n, n, nil)
	for u := 0; u < n; u++ {
		acc, pw := 0.0, 1.0 // acc = Σ_{s=u}^{t} ηₛ β^{s−u}
		for t := u; t < n; t++ {
			eta := 1.0
			if lr != nil {
				eta = lr[t]
			}
			acc += eta * pw
			pw *= beta
			a.Set(t, u, acc)
		}
	}
	name := "prefix"
	if beta != 0 || lr != nil {
		name = fmt.Sprintf("momentum:%g", beta)
		if lr != nil {
			name += ",lr"
		}
	}
	return fromA(name, a), nil
}

// LinearCooldown returns n learning rates equal to 1 except over the last
// steps steps, where they fall linearly to final (the last step's rate):
// a common schedule whose lower late weights the optimal factorization
// exploits.
func LinearCooldown(n, steps int, final float64) ([]float64, error) {
	if err := checkSteps(n); err != nil {
		return nil, err
	}
	if steps < 1 || steps > n {
		return nil, inputErr("cooldown of %d steps for n = %d, want 1…n", steps, n)
	}
	if !(final > 0 && final <= 1) {
		return nil, inputErr("cooldown final rate %v outside (0, 1]", final)
	}
	lr := make([]float64, n)
	for t := range lr {
		lr[t] = 1
	}
	for j := 0; j < steps; j++ { // j = 0 … steps−1 ↦ rate from 1 down to final
		frac := 1.0
		if steps > 1 {
			frac = float64(j) / float64(steps-1)
		}
		lr[n-steps+j] = 1 - frac*(1-final)
	}
	if steps == 1 {
		lr[n-1] = final
	}
	return lr, nil
}

// FromMatrix wraps a user workload W (any rows, n columns, finite).
func FromMatrix(name string, w *mat.Dense) (*Workload, error) {
	if w == nil {
		return nil, inputErr("nil workload")
	}
	r, n := w.Dims()
	if err := checkSteps(n); err != nil {
		return nil, err
	}
	for i := 0; i < r; i++ {
		for j := 0; j < n; j++ {
			if x := w.At(i, j); math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, inputErr("workload entry (%d,%d) is %v", i, j, x)
			}
		}
	}
	wl := fromA(name, w)
	return wl, checkGram(wl.V)
}

// FromGram wraps a user Gram V = WᵀW (symmetric positive semidefinite, finite,
// positive diagonal: every step's gradient reaches some released quantity).
func FromGram(name string, v *mat.SymDense) (*Workload, error) {
	if v == nil {
		return nil, inputErr("nil Gram")
	}
	if err := checkSteps(v.SymmetricDim()); err != nil {
		return nil, err
	}
	if err := checkGram(v); err != nil {
		return nil, err
	}
	c := mat.NewSymDense(v.SymmetricDim(), nil)
	c.CopySym(v)
	return &Workload{Name: name, V: c}, nil
}

func checkGram(v *mat.SymDense) error {
	n := v.SymmetricDim()
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			if x := v.At(i, j); math.IsNaN(x) || math.IsInf(x, 0) {
				return inputErr("Gram entry (%d,%d) is %v", i, j, x)
			}
		}
		if !(v.At(i, i) > 0) {
			return inputErr("Gram diagonal entry %d is %v: step %d reaches no released quantity", i, v.At(i, i), i)
		}
	}
	var ev mat.EigenSym
	if !ev.Factorize(v, false) {
		return inputErr("Gram eigendecomposition failed")
	}
	vals := ev.Values(nil)
	if vals[0] < -1e-10*math.Abs(vals[n-1]) {
		return inputErr("Gram is not positive semidefinite (eigenvalue %.3g)", vals[0])
	}
	return nil
}

func fromA(name string, a *mat.Dense) *Workload {
	_, n := a.Dims()
	v := mat.NewSymDense(n, nil)
	v.SymOuterK(1, a.T())
	return &Workload{Name: name, A: a, V: v}
}
