package newton

import (
	"context"
	"errors"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/internal/psd"
	"github.com/dpsolve/dpsolve/internal/symdense"
)

// Solve minimizes tr(V X⁻¹) subject to diag(X) = 1, X ≻ 0, for the Gram
// matrix V = WᵀW of a workload, and returns the optimized X, the strategy
// A = chol(X) and a certificate of optimality.
//
// A singular V (rank r < n: cells no query separates, low-rank workloads,
// marginals, totals) has no minimizer; the infimum is attained by a
// positive semidefinite X of rank r with range(V) ⊆ range(X), and Solve
// returns that limit exactly — X, its r×n strategy (the first r rows of A),
// the objective tr(V X⁺) and a certified bound — with no regularization,
// by a primal–dual interior-point method on the dual (singular.go explains
// it). The numerical rank counts V's eigenvalues above
// max(1e-13, 32·n·ε)·λ_max. "Converged" always means the certified relative
// gap on the caller's V is at most Options.Tol.
//
// V must be finite and positive semidefinite with a positive diagonal (every
// histogram cell appears in some query); invalid input yields an error
// wrapping ErrInput. A nil opt selects the defaults.
//
// Cancellation (dpsolve's rule for every solver): cancelling ctx stops the
// solve at the next iteration, and Solve returns BOTH the best result so far
// — Status Cancelled, a feasible X with its strategy and its certificate —
// AND ctx.Err(). Callers that only want complete solves treat any error as
// failure; callers that can use a partial strategy check
// errors.Is(err, context.Canceled) (or DeadlineExceeded) and read the result.
func Solve(ctx context.Context, V *mat.SymDense, opt *Options) (*Result, error) {
	var o Options
	if opt != nil {
		o = *opt
	}
	// A one-shot solve hands its X and A workspaces over to the result.
	var st newtonState
	return solveWith(ctx, &st, V, o)
}

// normalized applies the defaults and validates the options.
func (o Options) normalized() (Options, error) {
	if o.Tol == 0 {
		o.Tol = 1e-8
	}
	switch {
	case math.IsNaN(o.Tol) || o.Tol < 0:
		return o, inputErrorf("tolerance must be positive, got %g", o.Tol)
	case o.MaxIter < 0:
		return o, inputErrorf("iteration limit must be non-negative, got %d", o.MaxIter)
	case o.Regularization < 0 || math.IsNaN(o.Regularization) || math.IsInf(o.Regularization, 0):
		return o, inputErrorf("regularization must be a non-negative number, got %g", o.Regularization)
	case o.Threads < 0:
		return o, inputErrorf("thread count must be non-negative, got %d", o.Threads)
	}
	switch o.Method {
	case MethodNewton:
		if o.MaxIter == 0 {
			o.MaxIter = 100
		}
	case MethodYuan2016:
		if o.MaxIter == 0 {
			o.MaxIter = 30
		}
	default:
		return o, inputErrorf("unknown method %q (want %q or %q)", o.Method, MethodNewton, MethodYuan2016)
	}
	return o, nil
}

// solveWith validates and runs one solve on the workspaces st; the result's
// X and A alias st's buffers.
func solveWith(ctx context.Context, st *newtonState, V *mat.SymDense, o Options) (*Result, error) {
	o, err := o.normalized()
	if err != nil {
		return nil, err
	}
	if err := checkGram(V); err != nil {
		return nil, err
	}
	defer blas.Reserve(o.Threads)() // Options.Threads: the kernel threads this solve may use
	if o.Start != nil && o.Start.SymmetricDim() != V.SymmetricDim() {
		return nil, inputErrorf("start must be %d×%d like V, got %d×%d", V.SymmetricDim(), V.SymmetricDim(), o.Start.SymmetricDim(), o.Start.SymmetricDim())
	}
	if ctx == nil {
		ctx = context.Background()
	}
	res := &Result{Method: o.Method}
	m, err := newMethod(st, V, o, time.Now(), res)
	if err == nil {
		err = run(ctx, m)
	}
	if err != nil {
		return nil, err
	}
	if res.Status == Cancelled {
		err = ctx.Err()
	}
	reportDone(o, res)
	return res, err
}

// newMethod decides, before any iteration, which method solves V: the
// caller's MethodYuan2016, or for MethodNewton — from V's spectrum — the
// dual interior-point method when V is singular and unregularized, else
// the direct Newton method.
func newMethod(st *newtonState, V *mat.SymDense, o Options, start time.Time, res *Result) (method, error) {
	if o.Method == MethodYuan2016 {
		return newYuan2016(V, symdense.ToGeneral(V), o, start, res), nil
	}
	st.threads = o.Threads
	st.prepare(V.SymmetricDim())
	sp, err := analyze(st, V, o)
	if err != nil {
		return nil, err
	}
	res.SVDBound = sp.svdBound
	if sp.rank < V.SymmetricDim() && o.Regularization == 0 {
		// Singular V: the exact infimum, by the dual method (singular.go).
		if !sp.withVectors(st) {
			return nil, errSpectrum
		}
		return newDualIP(st, sp.mu, sp.rank, o, start, res), nil
	}
	return &denseNewton{s: st, sp: sp, opt: o, start: start, res: res}, nil
}

// errSpectrum reports a failed eigendecomposition of V.
var errSpectrum = errors.New("newton: eigendecomposition of V failed to converge")

// spectrum is V's eigendecomposition as the methods need it: the
// eigenvalues of V/s (s = mean(diag V)), with their eigenvectors in the
// state's m once withVectors has computed them.
type spectrum struct {
	mu       []float64 // ascending
	vectors  bool      // s.m holds the eigenvectors of mu
	svdBound float64   // (tr V^{1/2})²/n, for the caller's V
	rank     int       // eigenvalues above rankTol(n)·μ_max; n when V is not singular
}

// analyze points st at V, computes V's spectrum and checks that V is
// positive semidefinite. A warm start (Options.Start) needs only V's
// eigenvalues; the vectors (for V^{1/2}, or the dual method) are computed
// when they are needed.
func analyze(s *newtonState, V *mat.SymDense, opt Options) (*spectrum, error) {
	n := V.SymmetricDim()
	scale := 0.0
	for i := 0; i < n; i++ {
		scale += V.At(i, i)
	}
	scale /= float64(n)
	// Six n×n workspaces besides the caller's V; X and A of the result are
	// two of them (handed over without copying by Solve, copied out by a
	// Solver that keeps them).
	s.vsrc, s.scale = V.RawSymmetric(), scale
	s.loadV(s.m, 0)
	sp := &spectrum{mu: make([]float64, n), vectors: opt.Start == nil, rank: n}
	mu := sp.mu
	if !(sp.vectors && s.eigen(mu) || !sp.vectors && blas.SymEig(s.m, mu, false)) {
		return nil, errSpectrum
	}
	s.clock.lap("spectrum")
	muMax := mu[n-1]
	// The one "not PSD" rule (internal/psd), so that a V Solve accepts is one
	// Certificate and psdFactor accept too.
	if mu[0] < -psd.Tol(n, muMax) {
		return nil, inputErrorf("Gram matrix is not positive semidefinite: smallest eigenvalue %.3g (largest %.3g)", mu[0]*scale, muMax*scale)
	}
	t := sqrtSum(mu)
	sp.svdBound = t * t / float64(n) * scale
	if rt := rankTol(n); mu[0] <= rt*muMax {
		sp.rank = 0
		for _, m := range mu {
			if m > rt*muMax {
				sp.rank++
			}
		}
	}
	return sp, nil
}

// withVectors makes sure s.m holds the eigenvectors of sp.mu, computing
// them (and the eigenvalues again) if analyze did not.
func (sp *spectrum) withVectors(s *newtonState) bool {
	if !sp.vectors {
		s.loadV(s.m, 0)
		sp.vectors = s.eigen(sp.mu)
	}
	return sp.vectors
}
