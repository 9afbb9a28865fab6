package newton

import (
	"fmt"

	"github.com/dpsolve/dpsolve/progress"
	"github.com/dpsolve/dpsolve/status"

	"gonum.org/v1/gonum/mat"
)

// Status says why a solve stopped: dpsolve's one status type
// (package status), whose text form is what JSON output carries.
type Status = status.Status

const (
	// Converged: the certified relative gap is at most Options.Tol (for
	// MethodYuan2016: its relative-change test, Yuan et al. 2016, was met).
	Converged = status.Converged
	// IterationLimit: Options.MaxIter iterations ran first.
	IterationLimit = status.IterationLimit
	// Cancelled: the context was cancelled; the result holds the best X so far.
	Cancelled = status.Cancelled
	// Stalled: no further progress was possible in floating point before the
	// tolerance was met; the result is the best X found and its certificate.
	Stalled = status.Stalled
)

// Options configures Solve. The zero value (or nil) selects MethodNewton with
// a relative gap tolerance of 1e-8.
type Options struct {
	// Method is the algorithm; default MethodNewton.
	Method Method
	// Tol is the target certified relative duality gap (F − g)/F; default 1e-8.
	Tol float64
	// MaxIter caps the outer iterations; default 100 (30 for MethodYuan2016).
	MaxIter int
	// Regularization is θ, relative to mean(diag V): when positive, the
	// solver minimizes tr((V + θ·mean(diag V)·I) X⁻¹) instead (reached by
	// continuation from θ = 1e-3 for a singular V) and reports the raw
	// objective and bound for V itself, whose gap shrinks roughly like √θ.
	// Zero (the default) means none: a singular V is then solved exactly by
	// the dual method (see Solve), whose strategy has rank rank(V): every
	// workload answer W·x̂ is identifiable, x̂ itself is not. A caller that
	// needs a full-rank strategy (an estimate of every cell) sets θ > 0.
	// MethodYuan2016 uses ConvexDP's 1e-3 (Yuan et al. 2016) unless a θ
	// is given.
	Regularization float64
	// Threads is the number of threads this solve may use: its kernel
	// calls run on at most Threads OpenBLAS threads, and its own O(n²)
	// passes between kernel calls on at most Threads goroutines. 0 (the
	// default) means its share of the process's kernel-thread budget
	// (blas.Current().Threads(), all cores unless set): a kernel call that
	// overlaps another solve's runs on one thread of its own, so k solves
	// in k goroutines need no setting (see blas.Reserve).
	Threads int
	// Start, when non-nil, is the starting X of MethodNewton in place of
	// V^{1/2}: a warm start for a sequence of nearby problems (block
	// coordinate descent re-solves a block whose Gram changed a little; the
	// previous optimum is then a few Newton steps from the new one). It must
	// be n×n, finite and positive definite with a positive diagonal, and is
	// used scaled to unit diagonal; it is read, never written. It only
	// changes where the iteration starts, not what is certified. It is
	// ignored for a singular V (the dual method starts from its own dual
	// point) and for a nearly singular V solved by θ continuation, and falls
	// back to V^{1/2} if it is not numerically positive definite.
	Start *mat.SymDense
	// Progress, when non-nil, receives an event after every iteration
	// (Stage "newton" or "yuan2016", Step the iteration, Inner the CG
	// steps so far, Objective, Bound and Gap as in Iteration, Detail the
	// Iteration itself) and a final one with Done set, the result's
	// objective, certified bound and gap, and its Status as Note.
	Progress progress.Func
}

// Iteration records one outer iteration.
type Iteration struct {
	Iter       int     // 1-based iteration number
	Objective  float64 // tr(V X⁻¹) of the solved (possibly regularized) problem
	LowerBound float64 // certified lower bound g(y); NaN when not computed this iteration
	Gap        float64 // (Objective − LowerBound)/Objective; NaN when not computed
	Step       float64 // line-search step length accepted
	CGSteps    int     // inner linear-solver steps
	Seconds    float64 // elapsed since Solve started
}

// Result is the outcome of Solve.
type Result struct {
	// X is the optimized Gram of the strategy: diag(X) = 1 and X ≻ 0 for a
	// positive definite V; for a singular V, X ⪰ 0 with rank(X) = Rank,
	// range(V) ⊆ range(X) and diag(X) ≤ 1 (equal to 1 up to the certified
	// gap wherever the optimal dual weight yᵢ is positive; see Solve).
	X *mat.SymDense
	// A is the strategy: upper triangular with AᵀA = X and column norms
	// √diag(X) ≤ 1. For a singular V only its first Rank rows are non-zero:
	// they are the Rank×n strategy (the QR factor of any factor of X), and
	// the zero rows measure nothing.
	A *mat.TriDense
	// Objective is the raw objective tr(V X⁺) for the caller's V (X⁺ = X⁻¹
	// when X is definite).
	Objective float64
	// LowerBound is a certified lower bound on min tr(V X⁻¹) over feasible X
	// for the caller's V (weak duality; see Certificate).
	LowerBound float64
	// Gap is (Objective − LowerBound)/Objective.
	Gap float64
	// SVDBound is (Σσᵢ(W))²/n = (tr V^{1/2})²/n, the classic lower bound.
	SVDBound float64
	// Regularization is the θ actually used (relative to mean(diag V)); 0 if none.
	Regularization float64
	// RegularizedObjective is tr((V+θ·mean(diag V)·I) X⁻¹), equal to
	// Objective when Regularization is 0.
	RegularizedObjective float64
	// Rank is the rank of X: n for a positive definite V, rank(V) for a
	// singular one (see Solve).
	Rank int
	// Phases is the wall time in seconds per phase of the solve (MethodNewton):
	// "spectrum" (V's eigendecomposition), "eigen" (the per-iteration
	// eigendecompositions: of U⁻ᵀVU⁻¹, or of the dual's B·diag(y)·Bᵀ),
	// "system" (Newton systems: their Hessians and Cholesky solves),
	// "step", "line-search", "fixed-point", "certificate", "strategy" (the
	// singular strategy's X and QR) and "other".
	Phases map[string]float64
	// Iterations and CGSteps count outer iterations and inner linear-solver steps.
	Iterations int
	CGSteps    int
	// History has one entry per iteration.
	History []Iteration
	Status  Status
	Method  Method
	// Seconds is the wall time of the solve.
	Seconds float64
}

// String summarizes the result on one line.
func (r *Result) String() string {
	return fmt.Sprintf("%s: objective %.10g, lower bound %.10g, gap %.3g, %d iterations, %s, %.3fs",
		r.Method, r.Objective, r.LowerBound, r.Gap, r.Iterations, r.Status, r.Seconds)
}
