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
	if opt.MaxIter <= 0 {
		return Result{}, inputerr.Errorf("cg", "the iteration limit must be positive")
	}
	if b.Rows != x.Rows || b.Cols != x.Cols {
		return Result{}, inputerr.Errorf("cg", "b and x shapes differ")
	}
	for _, m := range []struct {
		name string
		g    blas.General
	}{{"b", b}, {"x", x}} {
		if m.g.Rows > 0 && m.g.Cols > 0 && (m.g.Stride != m.g.Cols || len(m.g.Data) != m.g.Rows*m.g.Cols) {
			return Result{}, inputerr.Errorf("cg", "%s must be contiguous (stride %d, %d columns, %d values for %d×%d)", m.name, m.g.Stride, m.g.Cols, len(m.g.Data), m.g.Rows, m.g.Cols)
		}
	}
	dot := dot
	if opt.Inner != nil {
		dot = opt.Inner
	}
	shape := func() blas.General { return blas.NewGeneral(b.Rows, b.Cols) }
	r, p, ap := shape(), shape(), shape()
	// r = b − A(x); skip the product for the common zero initial guess.
	zero := true
	for _, v := range x.Data {
		if v != 0 {
			zero = false
			break
		}
	}
	if zero {
		blas.Copy(r, b)
	} else {
		a(ap, x)
		for i := range r.Data {
			r.Data[i] = b.Data[i] - ap.Data[i]
		}
	}
	if opt.Project != nil {
		opt.Project(r)
	}
	bb := b
	if opt.Project != nil {
		bb = shape()
		blas.Copy(bb, b)
		opt.Project(bb)
	}
	bnorm := math.Sqrt(dot(bb, bb))
	z := r
	if opt.Precondition != nil {
		z = shape()
	}
	precondition := func() {
		if opt.Precondition != nil {
			opt.Precondition(z, r)
			if opt.Project != nil {
				opt.Project(z)
			}
		}
	}
	done := func() bool {
		rn := math.Sqrt(dot(r, r))
		return (opt.Tol > 0 && rn <= opt.Tol*bnorm) || (opt.AbsTol > 0 && rn <= opt.AbsTol) || rn == 0
	}
	res := Result{}
	relres := func() float64 {
		if bnorm == 0 {
			return 0
		}
		return math.Sqrt(dot(r, r)) / bnorm
	}
	if done() {
		res.Status, res.Residual = status.Converged, relres()
		return res, nil
	}
	precondition()
	blas.Copy(p, z)
	rz := dot(r, z)
	for res.Iterations < opt.MaxIter {
		a(ap, p)
		res.Iterations++
		pap := dot(p, ap)
		if !(pap > 0) {
			res.Status, res.Residual = status.Failed, relres()
			return res, ErrNotPositiveDefinite
		}
		alpha := rz / pap
		for i := range x.Data {
			x.Data[i] += alpha * p.Data[i]
			r.Data[i] -= alpha * ap.Data[i]
		}
		if opt.Project != nil {
			opt.Project(x)
			opt.Project(r)
		}
		if done() {
			res.Status = status.Converged
			break
		}
		precondition()
		rzNew := dot(r, z)
		beta := rzNew / rz
		rz = rzNew
		for i := range p.Data {
			p.Data[i] = z.Data[i] + beta*p.Data[i]
		}
	}
	if res.Status != status.Converged {
		res.Status = status.IterationLimit
	}
	res.Residual = relres()
	return res, nil
}
