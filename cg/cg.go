// Package cg solves symmetric positive definite linear systems A(x) = b whose
// unknowns are matrices, by the (preconditioned) conjugate gradient method
// with the Frobenius inner product ⟨X,Y⟩ = Σᵢⱼ XᵢⱼYᵢⱼ.
//
// Constraints that restrict the unknowns to a subspace — in dpsolve, search
// directions with zero diagonal — are imposed by a projection applied to the
// right-hand side, residuals and preconditioned residuals: CG then runs on
// the operator P·A·P restricted to the subspace, which is positive definite
// there when A is.
package cg

import (
	"errors"
	"math"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/status"
)

// Operator computes dst = A(src) for a symmetric positive definite A. It
// must not retain or modify src.
type Operator func(dst, src blas.General)

// Options configures Solve.
type Options struct {
	// MaxIter caps the number of iterations (operator applications); it
	// must be positive.
	MaxIter int
	// Tol stops when ‖r‖ ≤ Tol·‖b‖ (relative residual); 0 disables it.
	Tol float64
	// AbsTol stops when ‖r‖ ≤ AbsTol; 0 disables it.
	AbsTol float64
	// Project, if non-nil, projects a matrix onto the constraint subspace in
	// place (for example, zeroing the diagonal).
	Project func(blas.General)
	// Precondition, if non-nil, computes dst = M⁻¹·src for a symmetric
	// positive definite preconditioner M.
	Precondition func(dst, src blas.General)
	// Inner, if non-nil, replaces the Frobenius inner product Σ aᵢⱼbᵢⱼ
	// (for example to reproduce another program's summation order).
	Inner func(a, b blas.General) float64
}

// Result reports how Solve ended.
type Result struct {
	// Iterations is the number of operator applications performed.
	Iterations int
	// Residual is the final relative residual ‖r‖/‖b‖ (0 if b = 0).
	Residual float64
	// Status is status.Converged when a tolerance was met within MaxIter,
	// status.IterationLimit when MaxIter steps ran first, and status.Failed
	// when the operator proved not positive definite.
	Status status.Status
}

// ErrNotPositiveDefinite is returned when a search direction p has
// ⟨p, A(p)⟩ ≤ 0, so A is not positive definite on the subspace.
var ErrNotPositiveDefinite = errors.New("cg: operator is not positive definite")

func dot(a, b blas.General) float64 {
	s := 0.0
	for i := range a.Data {
		s += a.Data[i] * b.Data[i]
	}
	return s
}

// Solve runs CG from the initial guess in x (overwritten with the solution)
// for A(x) = b. x should satisfy the constraint (Project(x) = x).
//
// b and x must be contiguous (Stride == Cols, len(Data) == Rows·Cols): the
// iteration works on the flat Data slices (inner products, updates), which
// for a strided view would include the padding between rows. A strided
// argument is an error, not a silent wrong answer; copy it first.
func Solve(a Operator, b, x blas.General, opt Options) (Result, error) {
	if err := checkArgs(b, x, opt); err != nil {
		return Result{}, err
	}
	it := newIteration(a, b, x, opt)
	res := Result{}
	if it.done() {
		res.Status, res.Residual = status.Converged, it.relres()
		return res, nil
	}
	it.precondition()
	blas.Copy(it.p, it.z)
	rz := it.dot(it.r, it.z)
	for res.Iterations < opt.MaxIter {
		a(it.ap, it.p)
		res.Iterations++
		pap := it.dot(it.p, it.ap)
		if !(pap > 0) {
			res.Status, res.Residual = status.Failed, it.relres()
			return res, ErrNotPositiveDefinite
		}
		if it.advance(x, rz/pap) {
			res.Status = status.Converged
			break
		}
		it.precondition()
		rzNew := it.dot(it.r, it.z)
		beta := rzNew / rz
		rz = rzNew
		for i := range it.p.Data {
			it.p.Data[i] = it.z.Data[i] + beta*it.p.Data[i]
		}
	}
	if res.Status != status.Converged {
		res.Status = status.IterationLimit
	}
	res.Residual = it.relres()
	return res, nil
}

// checkArgs refuses what Solve cannot honour: no iteration budget,
// mismatched shapes, or a strided view (see Solve).
func checkArgs(b, x blas.General, opt Options) error {
	if opt.MaxIter <= 0 {
		return inputerr.Errorf("cg", "the iteration limit must be positive")
	}
	if b.Rows != x.Rows || b.Cols != x.Cols {
		return inputerr.Errorf("cg", "b and x shapes differ")
	}
	for _, m := range []struct {
		name string
		g    blas.General
	}{{"b", b}, {"x", x}} {
		if m.g.Rows > 0 && m.g.Cols > 0 && (m.g.Stride != m.g.Cols || len(m.g.Data) != m.g.Rows*m.g.Cols) {
			return inputerr.Errorf("cg", "%s must be contiguous (stride %d, %d columns, %d values for %d×%d)", m.name, m.g.Stride, m.g.Cols, len(m.g.Data), m.g.Rows, m.g.Cols)
		}
	}
	return nil
}

// iteration is the state of one CG run: the residual r, the preconditioned
// residual z (r itself without a preconditioner), the direction p and A(p).
type iteration struct {
	opt   Options
	dot   func(a, b blas.General) float64
	r, z  blas.General
	p, ap blas.General
	bnorm float64 // ‖P(b)‖, the scale of the relative residual
}

// newIteration allocates the work matrices and sets r = P(b − A(x)).
func newIteration(a Operator, b, x blas.General, opt Options) *iteration {
	it := &iteration{opt: opt, dot: dot}
	if opt.Inner != nil {
		it.dot = opt.Inner
	}
	shape := func() blas.General { return blas.NewGeneral(b.Rows, b.Cols) }
	it.r, it.p, it.ap = shape(), shape(), shape()
	// r = b − A(x); skip the product for the common zero initial guess.
	zero := true
	for _, v := range x.Data {
		if v != 0 {
			zero = false
			break
		}
	}
	if zero {
		blas.Copy(it.r, b)
	} else {
		a(it.ap, x)
		for i := range it.r.Data {
			it.r.Data[i] = b.Data[i] - it.ap.Data[i]
		}
	}
	if opt.Project != nil {
		opt.Project(it.r)
	}
	// The relative residual is measured against the projected b: the
	// component outside the subspace is not part of the system CG solves.
	bb := b
	if opt.Project != nil {
		bb = shape()
		blas.Copy(bb, b)
		opt.Project(bb)
	}
	it.bnorm = math.Sqrt(it.dot(bb, bb))
	it.z = it.r
	if opt.Precondition != nil {
		it.z = shape()
	}
	return it
}

// precondition sets z = P(M⁻¹ r) (nothing to do without a preconditioner:
// z is r).
func (it *iteration) precondition() {
	if it.opt.Precondition != nil {
		it.opt.Precondition(it.z, it.r)
		if it.opt.Project != nil {
			it.opt.Project(it.z)
		}
	}
}

// advance takes the step x += α·p, r −= α·A(p), keeps both in the subspace,
// and reports whether a tolerance is now met.
func (it *iteration) advance(x blas.General, alpha float64) bool {
	for i := range x.Data {
		x.Data[i] += alpha * it.p.Data[i]
		it.r.Data[i] -= alpha * it.ap.Data[i]
	}
	if it.opt.Project != nil {
		it.opt.Project(x)
		it.opt.Project(it.r)
	}
	return it.done()
}

// done reports whether ‖r‖ meets a tolerance (or is exactly zero).
func (it *iteration) done() bool {
	rn := math.Sqrt(it.dot(it.r, it.r))
	return (it.opt.Tol > 0 && rn <= it.opt.Tol*it.bnorm) || (it.opt.AbsTol > 0 && rn <= it.opt.AbsTol) || rn == 0
}

// relres is ‖r‖/‖P(b)‖ (0 when b projects to zero).
func (it *iteration) relres() float64 {
	if it.bnorm == 0 {
		return 0
	}
	return math.Sqrt(it.dot(it.r, it.r)) / it.bnorm
}
