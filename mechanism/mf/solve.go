package mf

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/newton"
	"github.com/dpsolve/dpsolve/progress"
	"github.com/dpsolve/dpsolve/status"
)

var (
	errNotDefinite = errors.New("mf: iterate is not numerically positive definite")
	errEigen       = errors.New("mf: eigendecomposition failed")
	errFactorV     = errors.New("mf: factoring V failed")
)

// RankError reports a workload whose Gram V is numerically rank-deficient
// (a workload of fewer released quantities than steps, say only the final
// model): the infimum of tr(V X⁻¹) is then approached only as X becomes
// singular, so no invertible strategy C attains it and no plan can be
// certified. Workload.Ridge plans for V + μ·mean(diag V)·I instead. It is
// an input error (errors.Is(err, ErrInput)).
type RankError struct {
	// N is the number of steps, Rank V's numerical rank (eigenvalues above
	// 32·n·ε·λ_max in the solvers' factor of V; newton's own test for
	// single participation).
	N, Rank int
}

func (e *RankError) Error() string {
	return fmt.Sprintf("mf: the workload's Gram has numerical rank %d < n = %d: its optimum is approached only as the strategy becomes singular, so no invertible strategy can be certified; plan for a ridged workload (Workload.Ridge; dpsolve mf --ridge μ, e.g. 1e-6)", e.Rank, e.N)
}

// Is makes a RankError an input error.
func (e *RankError) Is(target error) bool { return target == ErrInput }

// Options configures Solve; the zero value (or nil) asks for a certified
// relative gap of 1e-8.
type Options struct {
	// Tol is the target certified relative gap; default 1e-8.
	Tol float64
	// MaxIter caps Newton iterations; default 100.
	MaxIter int
	// Progress, when non-nil, receives an event per iteration (Stage "mf").
	Progress progress.Func
}

func (o *Options) tol() float64 {
	if o == nil || o.Tol <= 0 {
		return 1e-8
	}
	return o.Tol
}

func (o *Options) maxIter() int {
	if o == nil || o.MaxIter <= 0 {
		return 100
	}
	return o.MaxIter
}

// Result is a planned correlated-noise mechanism.
type Result struct {
	Schema Schema
	// X = CᵀC is the strategy's Gram, exactly feasible for the schema.
	X *mat.SymDense
	// C is the strategy: lower triangular, CᵀC = X (the "reversed"
	// Cholesky factor, so that step t's noise depends on steps ≤ t only).
	C *mat.TriDense
	// Sensitivity is C's sensitivity under the schema.
	Sensitivity Sensitivity
	// Objective is tr(V X⁻¹) and LowerBound a certified lower bound on its
	// minimum over the schema's feasible set (both at unit sensitivity:
	// multiply by Sensitivity.Squared for the error per unit noise).
	Objective, LowerBound float64
	// Gap is (Objective − LowerBound)/Objective.
	Gap float64
	// Iterations and CGSteps count Newton iterations and inner CG steps.
	Iterations, CGSteps int
	// Status is Converged (certified gap ≤ Tol), IterationLimit,
	// Stalled (the line search found no decrease before the tolerance)
	// or Cancelled.
	Status status.Status
	// Seconds is the wall time; Phases splits it (eigen, system, step,
	// line-search, certificate, other).
	Seconds float64
	Phases  map[string]float64
}

// Solve plans the strategy for the workload under the schema: minimize
// tr(V X⁻¹) over the schema's feasible set with a certified bound. See the
// package doc for the methods. Cancelling ctx returns the best result so
// far (status.Cancelled) and ctx.Err().
func Solve(ctx context.Context, w *Workload, s Schema, opt *Options) (*Result, error) {
	if w == nil || w.V == nil {
		return nil, inputErr("nil workload")
	}
	n := w.N()
	if err := s.Validate(n); err != nil {
		return nil, err
	}
	if opt != nil && (math.IsNaN(opt.Tol) || opt.Tol < 0 || opt.Tol >= 1) {
		return nil, inputErr("tolerance %v outside [0, 1)", opt.Tol)
	}
	start := time.Now()
	opt = timedProgress(opt, start)
	var res *Result
	var err error
	switch {
	case s.Kind == Single || s.Kind == FixedEpoch && s.Epochs == 1:
		res, err = solveSingle(ctx, w, opt)
	case s.Kind == FixedEpoch:
		res, err = solveEpoch(ctx, w, s.Epochs, opt)
	default:
		res, err = solveBanded(ctx, w, s, opt)
	}
	if res == nil {
		return nil, err
	}
	res.Schema = s
	res.Seconds = time.Since(start).Seconds()
	if fin := finish(res); fin != nil && err == nil {
		err = fin
	}
	return res, err
}

// finish fills C, the sensitivity and the gap from X, and refuses a bound
// above the objective beyond rounding whatever the solver reported (the
// single-participation path's status is newton's own): the result's
// Status is then Failed and the error a *BoundError.
func finish(res *Result) error {
	if err := CheckBound(res.Objective, res.LowerBound, res.X.SymmetricDim()); err != nil {
		res.Status = status.Failed
		return err
	}
	sens, err := StrategySensitivity(res.X, res.Schema)
	if err != nil {
		return err
	}
	res.Sensitivity = sens
	if res.C == nil {
		c, ok := LowerFactor(res.X)
		if !ok {
			return errNotDefinite
		}
		res.C = c
	}
	res.Gap = (res.Objective - res.LowerBound) / res.Objective
	return nil
}

// LowerFactor returns the lower-triangular C with CᵀC = X (X = JRᵀRJ with
// J the reversal and R the upper Cholesky factor of JXJ, so C = J·Rᵀ·J…
// computed as the Cholesky factor of the reversed matrix): the noise
// (C⁻¹Z)ₜ then depends on Z₁…Zₜ only, and a b-banded X has a b-banded C.
func LowerFactor(x *mat.SymDense) (*mat.TriDense, bool) {
	n := x.SymmetricDim()
	rev := blas.NewSquare(n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			rev.Data[i*n+j] = x.At(n-1-i, n-1-j)
		}
	}
	return lowerFromReversed(rev, blas.NewSquare(n))
}

// lowerFactorIn is LowerFactor on the full symmetric n×n x, with rev as
// scratch and c's storage for the result (neither may alias x), so that a
// solver can hand its free matrices to the end of a solve.
func lowerFactorIn(x, rev, c blas.General) (*mat.TriDense, bool) {
	n := x.Rows
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			rev.Data[i*n+j] = x.Data[(n-1-i)*x.Stride+(n-1-j)]
		}
	}
	return lowerFromReversed(rev, c)
}

// lowerFromReversed factors rev = JXJ = RᵀR in place and writes C = J·Rᵀ·J
// into c's storage (X = J·RᵀR·J = (J R J)ᵀ(J R J), and J R J is lower
// triangular), its strict upper part zero.
func lowerFromReversed(rev, c blas.General) (*mat.TriDense, bool) {
	if !blas.Cholesky(rev) {
		return nil, false
	}
	n := rev.Rows
	d := c.Data[:n*n]
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			d[i*n+j] = rev.Data[(n-1-i)*n+(n-1-j)]
		}
		clear(d[i*n+i+1 : (i+1)*n])
	}
	return mat.NewTriDense(n, mat.Lower, d), true
}

// solveSingle is newton's dense core: diag(X) = 1 is the single-
// participation feasible set.
func solveSingle(ctx context.Context, w *Workload, opt *Options) (*Result, error) {
	nopt := &newton.Options{Tol: opt.tol(), MaxIter: 0}
	if opt != nil {
		nopt.Progress = opt.Progress
		nopt.MaxIter = opt.MaxIter
	}
	r, err := newton.Solve(ctx, w.V, nopt)
	if r == nil {
		return nil, err
	}
	// newton certifies a rank-deficient V with a singular X (its Rank is
	// then rank(V), by newton's own test of V), which has no invertible
	// factor C.
	if n := w.N(); err == nil && r.Rank < n {
		return nil, &RankError{N: n, Rank: r.Rank}
	}
	return &Result{X: r.X, Objective: r.Objective, LowerBound: r.LowerBound,
		Iterations: r.Iterations, CGSteps: r.CGSteps, Status: r.Status, Phases: r.Phases}, err
}

func solveEpoch(ctx context.Context, w *Workload, k int, opt *Options) (*Result, error) {
	e, ok := newEpochSolver(w.V, k, opt)
	if !ok {
		return nil, errFactorV
	}
	if e.rank < e.n {
		return nil, &RankError{N: e.n, Rank: e.rank}
	}
	e.start()
	res := &Result{}
	err := e.iterate(ctx, res)
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return nil, err
	}
	if err != nil {
		res.Status = status.Cancelled
	}
	res.X, res.C = e.result()
	res.Phases = e.phases
	return res, err
}

// unconverged is the status of a solve that ended above the tolerance.
func unconverged(stalled bool) status.Status {
	if stalled {
		return status.Stalled
	}
	return status.IterationLimit
}

// timedProgress returns opt with its Progress filling in each event's
// Seconds (the time since start) where the solver left it zero, so every
// schema's progress lines carry the elapsed time; opt itself is not
// changed.
func timedProgress(opt *Options, start time.Time) *Options {
	if opt == nil || opt.Progress == nil {
		return opt
	}
	o := *opt
	p := opt.Progress
	o.Progress = func(e progress.Event) {
		if e.Seconds == 0 {
			e.Seconds = time.Since(start).Seconds()
		}
		p(e)
	}
	return &o
}
