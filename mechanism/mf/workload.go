package mf

import (
	"fmt"
	"math"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/internal/inputerr"
)

// ErrInput is wrapped by every error this package returns for input the
// caller can fix (the module-wide sentinel, see internal/inputerr).
var ErrInput = inputerr.ErrInput

func inputErr(format string, a ...any) error { return inputerr.Errorf("mf", format, a...) }

// MaxSteps caps n: the dense solvers hold a few n×n matrices, and at
// n = 16384 one of them is 2 GiB.
const MaxSteps = 16384

// Workload is the matrix A whose rows are the linear functionals of the
// gradients g₁…gₙ that training releases (row t of a built-in workload:
// the model after step t), with its Gram V = AᵀA.
//
// Only V is stored as an n×n matrix for the built-in workloads: their
// rows are generated when needed (Matrix, Evaluate), so that a plan for
// n steps holds one n×n matrix fewer while it solves (at n = 8192, 512
// MiB).
type Workload struct {
	// Name describes the workload ("prefix", "momentum:0.9", …).
	Name string
	// V is AᵀA (plus μ·mean(diag AᵀA)·I for a ridged workload, see Ridge).
	V *mat.SymDense

	// a is a user W; rows generates a built-in workload's rows. Both
	// are nil when only a Gram was given.
	a    *mat.Dense
	rows rowGenerator
}

// Ridge returns the workload planned with V + μ·d̄·I, d̄ the mean of V's
// diagonal: as if every step's gradient were also released, with weight
// √(μ·d̄). A rank-deficient workload (RankError) has no invertible optimal
// strategy; its ridged version has one, and its certified objective
// tr(V_μ X⁻¹) bounds the released quantities' error tr(V X⁻¹) from above
// by μ·d̄·tr(X⁻¹). The rows stay the original ones, so Evaluate's per-step
// errors are those of the released quantities. On rank-deficient
// workloads of 64 steps (12 random rows; the final model; 4 evenly spaced
// models) μ = 1e-2 … 1e-6 certified to 1e-8 in every schema, in 1–78
// Newton iterations, more as μ shrinks; at μ = 1e-8 most hit the
// 100-iteration cap (measured with dpsolve mf --gram, 2026-12-02).
func (w *Workload) Ridge(mu float64) (*Workload, error) {
	if !(mu > 0) || math.IsInf(mu, 0) {
		return nil, inputErr("ridge μ = %v, want finite and positive", mu)
	}
	n := w.N()
	mean := 0.0
	for i := 0; i < n; i++ {
		mean += w.V.At(i, i) / float64(n)
	}
	v := mat.NewSymDense(n, nil)
	v.CopySym(w.V)
	for i := 0; i < n; i++ {
		v.SetSym(i, i, v.At(i, i)+mu*mean)
	}
	return &Workload{Name: fmt.Sprintf("%s,ridge:%g", w.Name, mu), V: v, a: w.a, rows: w.rows}, nil
}

// rowGenerator writes rows i0 … i0+dst.Rows−1 of A into dst (n columns).
type rowGenerator func(i0 int, dst blas.General)

// N is the number of steps.
func (w *Workload) N() int { return w.V.SymmetricDim() }

// Released is the number of released quantities (rows of A), 0 when only
// the Gram is known.
func (w *Workload) Released() int {
	switch {
	case w.a != nil:
		r, _ := w.a.Dims()
		return r
	case w.rows != nil:
		return w.N()
	}
	return 0
}

// Matrix returns A (Released()×n, a new matrix for the built-in
// workloads, the user's W otherwise), or nil when only the Gram is known.
func (w *Workload) Matrix() *mat.Dense {
	switch {
	case w.a != nil:
		return w.a
	case w.rows != nil:
		n := w.N()
		a := blas.NewSquare(n)
		w.rows(0, a)
		return mat.NewDense(n, n, a.Data)
	}
	return nil
}

// rowsInto writes rows i0 … i0+dst.Rows−1 of A into dst.
func (w *Workload) rowsInto(i0 int, dst blas.General) {
	if w.rows != nil {
		w.rows(i0, dst)
		return
	}
	for i := 0; i < dst.Rows; i++ {
		mat.Row(dst.Data[i*dst.Stride:i*dst.Stride+dst.Cols], i0+i, w.a)
	}
}

// rowBlock is the number of rows of A generated at a time (V's Gram and
// the decoder's errors): 256 rows keep the products BLAS-3 (a 256×n block
// times an n×n triangle runs at GEMM speed) in 256·n numbers, an eighth
// of an n×n matrix at n = 2048.
const rowBlock = 256

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
	name := "prefix"
	if beta != 0 || lr != nil {
		name = fmt.Sprintf("momentum:%g", beta)
		if lr != nil {
			name += ",lr"
		}
	}
	rows := momentumRows(n, beta, lr)
	return &Workload{Name: name, V: gramOf(n, n, rows), rows: rows}, nil
}

// momentumRows generates A's rows by the recursion A_tt = η_t,
// A_tu = η_u + β·A_t,u+1 (the sum Σ_{s=u}^{t} ηₛ β^{s−u} split at its first
// term), zero above the diagonal.
func momentumRows(n int, beta float64, lr []float64) rowGenerator {
	return func(i0 int, dst blas.General) {
		for i := 0; i < dst.Rows; i++ {
			t, r := i0+i, dst.Data[i*dst.Stride:i*dst.Stride+n]
			clear(r[t+1:])
			acc := 0.0
			for u := t; u >= 0; u-- {
				eta := 1.0
				if lr != nil {
					eta = lr[u]
				}
				acc = eta + beta*acc
				r[u] = acc
			}
		}
	}
}

// gramOf returns V = AᵀA for the m×n A that rows generates, summed over
// blocks of rowBlock rows so that A itself is never held.
func gramOf(m, n int, rows rowGenerator) *mat.SymDense {
	v := blas.NewSquare(n)
	blk := blas.NewGeneral(min(rowBlock, m), n)
	for i0 := 0; i0 < m; i0 += blk.Rows {
		b := blk
		b.Rows = min(blk.Rows, m-i0)
		rows(i0, b)
		blas.Syrk(gblas.Trans, 1, b, 1, v)
	}
	blas.Symmetrize(v)
	return mat.NewSymDense(n, v.Data)
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
	r, n := a.Dims()
	w := &Workload{Name: name, a: a}
	w.V = gramOf(r, n, w.rowsInto)
	return w
}
