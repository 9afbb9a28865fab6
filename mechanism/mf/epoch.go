package mf

import (
	"context"
	"math"
	"time"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/status"
)

// epochSolver minimizes tr(V X⁻¹) over the fixed-epoch feasible set
// (X_ij = 0 for i ≠ j in one pattern, Σ_{i∈π_r} X_ii = 1) by Newton's
// method in whitened coordinates with the step's multipliers found by
// preconditioned conjugate gradients (see the package doc).
type epochSolver struct {
	n, k, b int
	f       blas.General // upper factor of V
	rank    int          // V's numerical rank
	opt     *Options

	// The solver's n×n storage, all allocated by square (see squares):
	// w doubles as the eigensolver's workspace and as the certificate's
	// F·R, K is formed entry by entry, and t (free from whiten to the next
	// objective) holds the preconditioner's blocks when they fit (from
	// n ≥ g·m²/k: 441 for k = 4, 1830 for k = 16; see newBlockJacobi), so
	// no n×n matrix is allocated after newEpochSolver.
	x, u, t, z, s, w blas.General
	lam              []float64
	phases           map[string]float64
	lastRel          float64
	// nu is the last multiplier solve, CG's next start.
	nu []float64
	// squares counts the n×n matrices allocated (memory accounting,
	// checked by a test).
	squares int
}

// square allocates one of the solver's n×n matrices with the capacity
// blas.EigenWorkLen(n), so that any of them can lend its storage to the
// eigensolver while free.
func (e *epochSolver) square() blas.General {
	e.squares++
	n := e.n
	return blas.General{Rows: n, Cols: n, Stride: n, Data: make([]float64, n*n, blas.EigenWorkLen(n))}
}

// eigIn is blas.SymEigVectors with the free matrix scratch as workspace.
func eigIn(a, z blas.General, w []float64, scratch blas.General) bool {
	work := scratch.Data[:cap(scratch.Data)]
	return blas.SymEigVectorsWork(a, z, w, &work)
}

// pairs of one pattern: index 0 is the diagonal multiplier, then (p,q),
// p < q, in row order.
func (e *epochSolver) perPattern() int { return 1 + e.k*(e.k-1)/2 }

// newEpochSolver allocates the solver's seven n×n matrices and factors V
// (left in e.s for start, V's numerical rank in e.rank); false if
// factoring V fails.
func newEpochSolver(v *mat.SymDense, k int, opt *Options) (*epochSolver, bool) {
	n := v.SymmetricDim()
	e := &epochSolver{n: n, k: k, b: n / k, opt: opt, phases: map[string]float64{}}
	e.s, e.f, e.x = e.square(), e.square(), e.square()
	symInto(e.s, v)
	var ok bool
	if e.rank, ok = upperFactorInto(e.s, e.f, e.x); !ok {
		return nil, false
	}
	e.u, e.t, e.z, e.w = e.square(), e.square(), e.square(), e.square()
	e.lam = make([]float64, n)
	return e, true
}

func (e *epochSolver) tick(name string, t0 time.Time) time.Time {
	now := time.Now()
	e.phases[name] += now.Sub(t0).Seconds()
	return now
}

// start is (T∘R)/k for R = V^{1/2} scaled to unit diagonal and the
// triangular Toeplitz mask T_ij = max(0, 1 − |i−j|/b): T is the
// autocorrelation of a box of width b, so positive semidefinite with unit
// diagonal, and zero at every |i−j| that is a positive multiple of b, so
// T∘R is feasible (pattern entries zero, each pattern's diagonal summing
// to 1 after the division by k) and, by the Schur product theorem,
// T∘R ⪰ λ_min(R)·I: definite without a shift. I/k if V^{1/2} has a zero
// diagonal or the start is not numerically definite. (Measured at n = 512
// against the previous start, R with its pattern entries zeroed, shifted by
// (0.3 − λ_min)⁺ and scaled: momentum 0.9 k = 4 in 9 Newton iterations
// instead of 19 and k = 16 in 12 instead of 26; prefix k = 4 in 5 instead
// of 7, k = 16 in 8 instead of 10. A mask of width b/2 or the PSD mask
// with 1/k off the patterns did worse on momentum.)
func (e *epochSolver) start() {
	n, b, k := e.n, e.b, float64(e.k)
	ident := func() {
		clear(e.x.Data)
		for i := 0; i < n; i++ {
			e.x.Data[i*n+i] = 1 / k
		}
	}
	if !sqrtPSD(e.s, e.s, e.z, e.w) {
		ident()
		return
	}
	root := e.w
	scale := make([]float64, n)
	for i := range scale {
		d := root.Data[i*n+i]
		if !(d > 0) {
			ident()
			return
		}
		scale[i] = 1 / math.Sqrt(d)
	}
	for i := 0; i < n; i++ {
		xi, ri := row(e.x, i), row(root, i)
		for j := range xi {
			t := math.Max(0, 1-math.Abs(float64(i-j))/float64(b))
			xi[j] = t * ri[j] * scale[i] * scale[j] / k
		}
		xi[i] = 1 / k
	}
	blas.Copy(e.u, e.x)
	if !blas.Cholesky(e.u) {
		ident()
	}
}

// result hands the solver's storage to the caller at the end of a solve:
// X is e.x (symmetrized, so both triangles hold the upper one) and C is
// factored into e.w with e.t as scratch, so no n×n matrix is allocated
// after newEpochSolver. C is nil if X is not numerically definite (finish
// reports it).
func (e *epochSolver) result() (*mat.SymDense, *mat.TriDense) {
	blas.Symmetrize(e.x)
	x := mat.NewSymDense(e.n, e.x.Data[:e.n*e.n])
	c, _ := lowerFactorIn(e.x, e.t, e.w)
	return x, c
}

// sqrtPSD writes V^{1/2} into r using a and q as scratch (all n×n; a may
// be v itself), r's storage lent to the eigensolver when its capacity is
// blas.EigenWorkLen(n); false if the eigendecomposition fails.
//
// It is a matrix function, not a factorization: the symmetric square root
// Q·diag(√μ₊)·Qᵀ (negative μ clamped to 0, tiny positive ones kept), not a
// factor R with RᵀR = V to a stated rank, so it does not go through
// internal/psd and its tolerance. It only seeds the fixed-epoch and banded
// solvers' starting points, which scale it to unit diagonal and are
// checked definite by Cholesky before use; nothing is certified or
// inverted from it. internal/vocabulary's TestOnePSDFactorization allows
// it by name for this reason.
func sqrtPSD(v, a, q, r blas.General) bool {
	n := v.Rows
	blas.Copy(a, v)
	mu := make([]float64, n)
	var ok bool
	if cap(r.Data) >= blas.EigenWorkLen(n) {
		ok = eigIn(a, q, mu, r)
	} else {
		ok = blas.SymEigVectors(a, q, mu)
	}
	if !ok {
		return false
	}
	for i := 0; i < n; i++ { // a = Q·diag(μ^{1/4})
		for j := 0; j < n; j++ {
			a.Data[i*n+j] = q.Data[i*n+j] * math.Sqrt(math.Sqrt(math.Max(mu[j], 0)))
		}
	}
	blas.Syrk(gblas.NoTrans, 1, a, 0, r)
	blas.Symmetrize(r)
	return true
}

// certify returns the dual bound at the current X (e.u its Cholesky factor
// as left by objective). T = F·U⁻¹ is formed again, as objective forms it,
// because e.t holds the preconditioner's blocks after whiten; e.w holds F·R.
func (e *epochSolver) certify() (float64, bool) {
	blas.Copy(e.t, e.f)
	upperRightSolve(e.u, e.t)
	g := inverseGramFactor(e.t, e.u)
	blocks := patternBlocks(g, e.b, e.k)
	y, ok := epochDual(blocks, e.k)
	if !ok {
		return math.Inf(-1), false
	}
	return epochBoundIn(e.w, e.f, blocks, y, e.k)
}

// whiten computes M = TᵀT = U⁻ᵀVU⁻¹ = QΛQᵀ and Z = UᵀQ (e.w lends the
// eigensolver its workspace); e.t is free afterwards until the next
// objective.
func (e *epochSolver) whiten() bool {
	blas.Syrk(gblas.Trans, 1, e.t, 0, e.s)
	if !eigIn(e.s, e.z, e.lam, e.w) {
		return false
	}
	blas.Trmm(gblas.Left, gblas.Upper, gblas.Trans, gblas.NonUnit, 1, e.u, e.z)
	return true
}

// zNz writes K∘(ZᵀN Z) into e.s for the pattern matrix N of ν (e.w is
// scratch). N·Z is one k×k by k×n product per pattern (its rows r + p·b
// are a strided view of Z).
func (e *epochSolver) zNz(nu []float64) {
	n, b, k, m := e.n, e.b, e.k, e.perPattern()
	nr := blas.NewGeneral(k, k)
	for r := 0; r < b; r++ {
		base := nu[r*m:]
		for p := 0; p < k; p++ {
			nr.Data[p*k+p] = base[0]
			for q := p + 1; q < k; q++ {
				a := base[pairIndex(p, q, k)]
				nr.Data[p*k+q], nr.Data[q*k+p] = a, a
			}
		}
		blas.Gemm(gblas.NoTrans, gblas.NoTrans, 1, nr, e.patternRows(e.z, r), 0, e.patternRows(e.w, r))
	}
	blas.Gemm(gblas.Trans, gblas.NoTrans, 1, e.z, e.w, 0, e.s)
	for i := 0; i < n; i++ {
		si, li := row(e.s, i), e.lam[i]
		for j := range si {
			si[j] /= li + e.lam[j]
		}
	}
}

// patternRows is the k×n view of pattern r's rows r, r+b, … of the n×n a.
func (e *epochSolver) patternRows(a blas.General, r int) blas.General {
	return blas.General{Rows: e.k, Cols: e.n, Stride: e.b * e.n, Data: a.Data[r*e.n:]}
}

// pairIndex is the position of the multiplier of (p,q), p < q, in its
// pattern's slice.
func pairIndex(p, q, k int) int { return 1 + p*(2*k-p-1)/2 + (q - p - 1) }

// adjoint writes 𝒯*(Z S Zᵀ) into out: for each pattern the sum of the
// diagonal and twice each off-diagonal entry of its k×k block (e.w is
// overwritten with Z·S; each block is one k×n by n×k product).
func (e *epochSolver) adjoint(out []float64) {
	blas.Gemm(gblas.NoTrans, gblas.NoTrans, 1, e.z, e.s, 0, e.w)
	b, k, m := e.b, e.k, e.perPattern()
	blk := blas.NewGeneral(k, k)
	for r := 0; r < b; r++ {
		blas.Gemm(gblas.NoTrans, gblas.Trans, 1, e.patternRows(e.w, r), e.patternRows(e.z, r), 0, blk)
		o := out[r*m : (r+1)*m]
		o[0] = 0
		for p := 0; p < k; p++ {
			o[0] += blk.Data[p*k+p]
			for q := p + 1; q < k; q++ {
				o[pairIndex(p, q, k)] = 2 * blk.Data[p*k+q]
			}
		}
	}
}

func (e *epochSolver) apply(nu, out []float64) {
	e.zNz(nu)
	e.adjoint(out)
}

// certifyFirstRel: when the last Newton step's relative decrement was at
// most this multiple of the tolerance, the new iterate is certified before
// the next whitening. Newton's gap falls 10–50× per iteration there
// (measured at n = 512: decrements 4e-7 → 2e-8 → 1e-10 on momentum 0.9,
// 1e-7 → 0 on prefix), so the certificate usually succeeds and saves the
// eigendecomposition, preconditioner and CG solve whose only use would be
// to find the decrement below 0.1·Tol; a failed try costs one certificate.
const certifyFirstRel = 20

// certifyFirst certifies the current X (e.u its factor, as the line
// search leaves it) when the last step predicts the tolerance met, keeping
// a better bound in res; true if the gap is then at most tol. It leaves
// e.t = F·U⁻¹ for whiten.
func (e *epochSolver) certifyFirst(res *Result, tol float64) (bool, error) {
	if !(e.lastRel > 0 && e.lastRel <= certifyFirstRel*tol) {
		return false, nil
	}
	done, err := e.certifyAt(res, res.Objective, tol)
	if done || err != nil {
		return done, err
	}
	blas.Copy(e.t, e.f)
	upperRightSolve(e.u, e.t)
	return false, nil
}

// certifyAt raises res.LowerBound with the bound at the current X and
// reports whether obj is then certified within tol; a bound above obj
// beyond rounding is a *BoundError.
func (e *epochSolver) certifyAt(res *Result, obj, tol float64) (bool, error) {
	bound, ok := e.boundAt()
	if ok && bound > res.LowerBound {
		res.LowerBound = bound
	}
	return certified(obj, res.LowerBound, e.n, tol)
}

// iterate runs Newton's method from e.x; see Solve for the contract.
func (e *epochSolver) iterate(ctx context.Context, res *Result) error {
	tol := e.opt.tol()
	t0 := time.Now()
	obj, ok := objective(e.f, e.x, e.u, e.t)
	if !ok {
		return errNotDefinite
	}
	res.Objective, res.LowerBound = obj, math.Inf(-1)
	pc := newBlockJacobi(e)
	stalled := false
	for it := 1; it <= e.opt.maxIter(); it++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		t0 = e.tick("other", t0)
		done, err := e.certifyFirst(res, tol)
		if err != nil {
			return err
		}
		if done {
			e.tick("certificate", t0)
			res.Iterations = it - 1
			res.Status = status.Converged
			return nil
		}
		t0 = e.tick("certificate", t0)
		if !e.whiten() {
			return errEigen
		}
		t0 = e.tick("eigen", t0)
		// A loose CG solve leaves the step slightly off the constraints,
		// and its exact projection can spoil descent: then the same
		// iteration is retried with a 1000× tighter solve.
		eta, fresh, tried := e.forcing(), true, false
		for try := 0; ; try++ {
			nu, steps := e.solveSystem(pc, eta, fresh)
			fresh = false
			res.CGSteps += steps
			t0 = e.tick("system", t0)
			dec, slope := e.direction(nu) // D in e.s
			t0 = e.tick("step", t0)
			if dec/obj < 0.1*tol && !tried {
				tried = true
				done, err := e.certifyAt(res, obj, tol)
				t0 = e.tick("certificate", t0)
				if err != nil {
					return err
				}
				if done {
					res.Iterations = it - 1
					res.Status = status.Converged
					return nil
				}
			}
			var nobj float64
			nobj, ok = e.lineSearch(obj, slope)
			if ok || try == 3 || eta <= 1e-11 {
				obj = nobj
				break
			}
			eta = math.Max(1e-12, eta*1e-3)
		}
		t0 = e.tick("line-search", t0)
		res.Iterations = it
		res.Objective = obj
		e.report(res, it)
		if !ok {
			stalled = true
			break
		}
	}
	done, err := e.certifyAt(res, res.Objective, tol)
	e.tick("certificate", t0)
	if err != nil {
		return err
	}
	if done {
		res.Status = status.Converged
	} else {
		res.Status = unconverged(stalled)
	}
	return nil
}
