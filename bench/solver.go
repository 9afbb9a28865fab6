package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/dpsolve/dpsolve/newton"
	"gonum.org/v1/gonum/mat"
)

// problem is one optimization problem: the Gram matrix of a workload and the
// certified relative gap every method is asked to reach.
type problem struct {
	// Workload names the workload ("prefix", "allrange", …); peers build the
	// closed-form Gram of a name they know and read V from a file otherwise.
	Workload string
	// V is the Gram matrix, n×n, symmetric positive definite.
	V *mat.SymDense
	// Tol is the target relative gap.
	Tol float64
}

// N is the domain size.
func (p problem) n() int { return p.V.SymmetricDim() }

// TracePoint is one iteration of a method: elapsed seconds since its solve
// began and the objective of its iterate.
type TracePoint struct {
	Seconds   float64 `json:"seconds"`
	Objective float64 `json:"objective"`
	// GapBest is (Objective − L*)/Objective for the best certified lower
	// bound L* of the problem; filled in by the summary.
	GapBest Num `json:"gap_best"`
}

// outcome is what a method returns for one run, before re-certification.
type outcome struct {
	// X is the returned strategy Gram (unit diagonal, positive definite).
	X *mat.SymDense
	// Objective and Gap are the method's own claims (Gap NaN if it makes none).
	Objective, Gap float64
	// Iterations is the number of outer iterations.
	Iterations int
	// Status says why the method stopped ("converged", "iteration_limit", …).
	Status string
	// Seconds is the solve's wall time.
	Seconds float64
	// Trace has one point per iteration.
	Trace []TracePoint
	// Phases is the wall time in seconds per phase (newton.Result.Phases;
	// nil for methods that do not report phases).
	Phases map[string]float64
}

// Solver is a method the harness can time.
type Solver interface {
	// Name identifies the method in reports.
	name() string
	// Solve runs the method on p. lowerBound is a certified lower bound on
	// min F known to the harness (NaN if none); a peer may stop as soon as
	// its objective is within p.Tol of it.
	solve(ctx context.Context, p problem, lowerBound float64) (*outcome, error)
}

// Newton runs dpsolve's newton.Solve with the given method.
type Newton struct {
	// Method is newton.MethodNewton or newton.MethodYuan2016.
	Method newton.Method
	// MaxIter caps the iterations; 0 means the method's default.
	MaxIter int
}

// Name returns the newton method's name ("newton" or "yuan2016").
func (s Newton) name() string { return s.Method.String() }

// Solve runs newton.Solve and reports its wall time as measured here.
func (s Newton) solve(ctx context.Context, p problem, _ float64) (*outcome, error) {
	opt := &newton.Options{Method: s.Method, Tol: p.Tol, MaxIter: s.MaxIter}
	start := time.Now()
	r, err := newton.Solve(ctx, p.V, opt)
	secs := time.Since(start).Seconds()
	if err != nil {
		// Includes cancellation, where newton also returns its best X: a
		// benchmark run that was cut short is not a measurement.
		return nil, err
	}
	if r == nil || r.X == nil {
		return nil, errors.New("newton.Solve returned no X")
	}
	tr := make([]TracePoint, len(r.History))
	for i, it := range r.History {
		tr[i] = TracePoint{Seconds: it.Seconds, Objective: it.Objective, GapBest: Num(math.NaN())}
	}
	return &outcome{X: r.X, Objective: r.Objective, Gap: r.Gap, Iterations: r.Iterations,
		Status: r.Status.String(), Seconds: secs, Trace: tr, Phases: r.Phases}, nil
}

// certify recomputes the objective and the certified lower bound of X with
// newton.Certificate and returns them with the relative gap (F − g)/F.
func certify(V, X *mat.SymDense) (objective, bound, gap float64, err error) {
	if X == nil {
		return 0, 0, 0, errors.New("no X to certify")
	}
	if X.SymmetricDim() != V.SymmetricDim() {
		return 0, 0, 0, fmt.Errorf("X is %d×%d, V is %d×%d", X.SymmetricDim(), X.SymmetricDim(), V.SymmetricDim(), V.SymmetricDim())
	}
	f, g, err := newton.Certificate(V, X)
	if err != nil {
		return 0, 0, 0, err
	}
	if !(f > 0) || math.IsInf(f, 0) || math.IsNaN(g) {
		return 0, 0, 0, fmt.Errorf("certificate returned objective %g, bound %g", f, g)
	}
	return f, g, (f - g) / f, nil
}
