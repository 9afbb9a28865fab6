package newton

import (
	"context"

	"gonum.org/v1/gonum/mat"
)

// Solver runs many solves and keeps its n×n workspaces between solves of
// the same n, for programs that solve repeatedly (a batch of workloads, the
// per-attribute problems of a Kronecker plan, a parameter sweep): after the
// first solve at a given n, a solve allocates no n×n matrix — it fills the
// caller's Result, reusing that Result's X and A when they have the right
// size.
//
// A Solver is not safe for concurrent use, but separate Solvers are: they
// share nothing except the process-wide BLAS backend, whose kernels are
// reentrant, so k goroutines may each drive their own Solver, with default
// options: the backend's kernel-thread policy (blas.Reserve) runs the
// kernel calls that overlap on one thread each, so k concurrent solves take
// no longer than solving them one after another (ExampleSolver_concurrent,
// BenchmarkConcurrentSolvers).
type Solver struct {
	// Options apply to every solve; the zero value selects Solve's defaults.
	Options Options

	st   newtonState
	vbuf *mat.SymDense // V copied from a mat.Symmetric that is not a *mat.SymDense
}

// NewSolver returns a Solver with the given options (nil: the defaults).
func NewSolver(opt *Options) *Solver {
	s := &Solver{}
	if opt != nil {
		s.Options = *opt
	}
	return s
}

// Solve solves the problem for V as the package-level Solve does and writes
// the outcome into res, following the same cancellation rule (on
// cancellation res holds the best result so far and the context's error is
// returned). V may be any mat.Symmetric; one that is not a *mat.SymDense is
// copied into a buffer the Solver keeps. On error without a result, res is
// left unchanged.
func (s *Solver) Solve(ctx context.Context, V mat.Symmetric, res *Result) error {
	if res == nil {
		return inputErrorf("result must not be nil")
	}
	var vd *mat.SymDense
	switch v := V.(type) {
	case *mat.SymDense:
		vd = v
	case nil:
		return inputErrorf("Gram matrix is nil")
	default:
		n := V.SymmetricDim()
		if s.vbuf == nil || s.vbuf.SymmetricDim() != n {
			s.vbuf = mat.NewSymDense(n, nil)
		}
		s.vbuf.CopySym(V)
		vd = s.vbuf
	}
	r, err := solveWith(ctx, &s.st, vd, s.Options)
	if r == nil {
		return err
	}
	copyOut(r, res)
	return err
}

// copyOut copies r into res, reusing res's X, A and History storage; r's X
// and A may alias the Solver's workspaces, which the next solve overwrites.
func copyOut(r, res *Result) {
	x, a, hist := res.X, res.A, res.History
	*res = *r
	n := r.X.SymmetricDim()
	if x == nil || x.SymmetricDim() != n {
		x = mat.NewSymDense(n, nil)
	}
	copy(x.RawSymmetric().Data, r.X.RawSymmetric().Data)
	if an, kind := triDims(a); an != n || kind != mat.Upper {
		a = mat.NewTriDense(n, mat.Upper, nil)
	}
	copy(a.RawTriangular().Data, r.A.RawTriangular().Data)
	res.X, res.A = x, a
	res.History = append(hist[:0], r.History...)
}

func triDims(a *mat.TriDense) (int, mat.TriKind) {
	if a == nil || a.IsEmpty() {
		return 0, mat.Upper
	}
	return a.Triangle()
}
