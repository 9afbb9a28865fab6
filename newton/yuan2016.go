package newton

import (
	"context"
	"fmt"
	"math"
	"time"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/cg"
	"github.com/dpsolve/dpsolve/internal/symdense"
)

// Constants of ConvexDP, the Matlab code of Yuan et al. (KDD 2016,
// Algorithm 1; testdata/ConvexDP.m).
const (
	yuanTheta      = 1e-3 // V ← V + θ·mean(diag V)·I
	yuanAccuracy   = 1e-5 // stop when |Δf/f| ≤ accuracy
	yuanBeta       = 0.5  // backtracking factor
	yuanSigma      = 1e-4 // Armijo constant
	yuanMaxIterLS  = 50
	yuanMaxIterCG  = 5
	yuanCGAbsResSq = 1e-10 // CG stops when ‖R‖_F² < 1e-10
)

// ConvexDP's method is sensitive to rounding: five CG steps on an
// ill-conditioned Newton system amplify differences of one ulp by about 2×
// per iteration, so after 30 iterations on Prefix n = 256 two correct
// implementations that round differently end 0.5% apart. To reproduce the
// published run, the code below performs the same floating-point operations
// in the same order as Octave executing the Matlab code on OpenBLAS: arrays
// hold Octave's column-major matrices (a row-major product of b and a is
// Octave's a*b), chol is LAPACK's dpotrf('U'), A\(A'\I) is two dtrsm calls,
// and sum(sum(M)) adds each column before adding the column sums.

// octave performs Matlab/Octave matrix operations on column-major arrays.
type octave struct{ n int }

// mul returns c = alpha·a·b as Octave's a*b (alpha = −1 is exact negation).
func (o octave) mul(alpha float64, a, b, c blas.General, beta float64) {
	blas.Gemm(gblas.NoTrans, gblas.NoTrans, alpha, b, a, beta, c)
}

// chol overwrites a with Octave's chol(a) — upper triangular R, R'R = a,
// zeros below — and reports whether a is positive definite.
func (o octave) chol(a blas.General) bool {
	n := o.n
	// Column-major 'U' is the row-major lower triangle.
	if !blas.Current().LAPACK().Dpotrf(gblas.Lower, n, a.Data, n) {
		return false
	}
	for j := 0; j < n; j++ { // column j of the column-major array is row j
		for i := j + 1; i < n; i++ {
			a.Data[j*n+i] = 0
		}
	}
	return true
}

// inv sets ix = R \ (R' \ I) for the factor r from chol.
func (o octave) inv(r, ix blas.General) {
	identity(ix)
	// Column-major R'·Y = B on arrays is row-major Y·Rᵀ = B with the
	// row-major array of R lower triangular; likewise for R·Y = B.
	blas.Trsm(gblas.Right, gblas.Lower, gblas.Trans, gblas.NonUnit, 1, r, ix)
	blas.Trsm(gblas.Right, gblas.Lower, gblas.NoTrans, gblas.NonUnit, 1, r, ix)
}

// sumProd returns sum(sum(a.*b)): column sums first, then their sum.
func (o octave) sumProd(a, b blas.General) float64 {
	n := o.n
	total := 0.0
	for j := 0; j < n; j++ {
		col := 0.0
		for i := 0; i < n; i++ {
			col += a.Data[j*n+i] * b.Data[j*n+i]
		}
		total += col
	}
	return total
}

// yuan2016 reproduces ConvexDP line by line: X₀ = I, first direction
// −G with zero diagonal, then at most 5 CG steps on the Newton system
// H[D] = −G with H[S] = −X⁻¹SG − GSX⁻¹, Armijo backtracking with Cholesky
// as the positive-definiteness test, and the relative-change stopping rule.
// Its quirks are kept: when all 50 backtracking steps fail the last trial
// point is kept, and its "if i == maxiterls" test compares the CG counter,
// so it never fires.
type yuan2016 struct {
	V     *mat.SymDense
	vg    blas.General // V, converted once: certificate and SVD bound
	opt   Options
	start time.Time
	res   *Result

	o                         octave
	v                         blas.General // V + θ·mean(diag V)·I
	x, xold, ix, g, tmp, tmp2 blas.General
	d, rhs, a                 blas.General
	fcurr                     float64
	iter, cgTotal             int
	status                    Status
}

func newYuan2016(V *mat.SymDense, vg blas.General, opt Options, start time.Time, res *Result) *yuan2016 {
	return &yuan2016{V: V, vg: vg, opt: opt, start: start, res: res, o: octave{n: V.SymmetricDim()}, status: IterationLimit}
}

// prepare regularizes V and evaluates the objective at X₀ = I.
func (m *yuan2016) prepare(context.Context) error {
	n := m.o.n
	meanDiag := 0.0
	for i := 0; i < n; i++ {
		meanDiag += m.V.At(i, i)
	}
	meanDiag /= float64(n)
	theta := yuanTheta
	if m.opt.Regularization > 0 {
		theta = m.opt.Regularization
	}
	m.res.Regularization = theta
	m.v = blas.NewSquare(n)
	blas.Copy(m.v, m.vg)
	reg := theta * meanDiag
	for i := 0; i < n; i++ {
		m.v.Data[i*n+i] += reg
	}
	m.x, m.xold, m.ix, m.g, m.tmp, m.tmp2 = blas.NewSquare(n), blas.NewSquare(n), blas.NewSquare(n), blas.NewSquare(n), blas.NewSquare(n), blas.NewSquare(n)
	m.d, m.rhs, m.a = blas.NewSquare(n), blas.NewSquare(n), blas.NewSquare(n)
	identity(m.x)
	var ok bool
	if m.fcurr, ok = m.eval(); !ok {
		return fmt.Errorf("newton: yuan2016: Cholesky of the identity failed")
	}
	return nil
}

// eval is ConvexDP's [A,flag] = chol(X); iX = A\(A'\I); G = -iX*V*iX;
// fcurr = sum(sum(V.*iX)). ok is false when chol fails.
func (m *yuan2016) eval() (float64, bool) {
	o := m.o
	blas.Copy(m.a, m.x)
	if !o.chol(m.a) {
		return 0, false
	}
	o.inv(m.a, m.ix)
	o.mul(-1, m.ix, m.v, m.tmp, 0)
	o.mul(1, m.tmp, m.ix, m.g, 0)
	return o.sumProd(m.v, m.ix), true
}

// hess is ConvexDP's Hx = @(S) -iX*S*G - G*S*iX.
func (m *yuan2016) hess(dst, src blas.General) {
	o := m.o
	o.mul(-1, m.ix, src, m.tmp, 0)
	o.mul(1, m.tmp, m.g, dst, 0)
	o.mul(1, m.g, src, m.tmp, 0)
	o.mul(1, m.tmp, m.ix, m.tmp2, 0)
	for i := range dst.Data {
		dst.Data[i] -= m.tmp2.Data[i]
	}
}

func (m *yuan2016) zeroDiag(a blas.General) {
	for i := 0; i < m.o.n; i++ {
		a.Data[i*m.o.n+i] = 0
	}
}

// step is one ConvexDP iteration: the direction, the backtracking line
// search and the relative-change test.
func (m *yuan2016) step(ctx context.Context) (bool, error) {
	m.iter++
	if m.iter > m.opt.MaxIter {
		return true, nil
	}
	if err := ctx.Err(); err != nil {
		m.status = Cancelled
		return true, nil
	}
	cgSteps, err := m.direction()
	if err != nil {
		return false, err
	}
	m.cgTotal += cgSteps
	delta := m.o.sumProd(m.d, m.g)
	blas.Copy(m.xold, m.x)
	flast := m.fcurr
	alpha := 1.0
	for j := 1; j <= yuanMaxIterLS; j++ {
		alpha = math.Pow(yuanBeta, float64(j-1))
		for i := range m.x.Data {
			m.x.Data[i] = m.xold.Data[i] + alpha*m.d.Data[i]
		}
		if f, ok := m.eval(); ok {
			m.fcurr = f
			if m.fcurr <= flast+alpha*yuanSigma*delta {
				break
			}
		}
	}
	it := Iteration{Iter: m.iter, Objective: m.fcurr, LowerBound: math.NaN(), Gap: math.NaN(),
		Step: alpha, CGSteps: cgSteps, Seconds: time.Since(m.start).Seconds()}
	m.res.History = append(m.res.History, it)
	report(m.opt, m.res.History, it)
	if math.Abs((flast-m.fcurr)/flast) <= yuanAccuracy {
		m.status = Converged
		return true, nil
	}
	return false, nil
}

// direction sets d: −G with zero diagonal first, then at most 5 CG steps
// on the Newton system; it returns the CG steps taken.
func (m *yuan2016) direction() (int, error) {
	if m.iter == 1 {
		for i := range m.d.Data {
			m.d.Data[i] = -m.g.Data[i]
		}
		m.zeroDiag(m.d)
		return 0, nil
	}
	for i := range m.rhs.Data {
		m.rhs.Data[i] = -m.g.Data[i]
	}
	clear(m.d.Data)
	r, err := cg.Solve(m.hess, m.rhs, m.d, cg.Options{
		MaxIter: yuanMaxIterCG, AbsTol: math.Sqrt(yuanCGAbsResSq), Project: m.zeroDiag, Inner: m.o.sumProd,
	})
	if err != nil {
		return 0, fmt.Errorf("newton: yuan2016 iteration %d: %w", m.iter, err)
	}
	return r.Iterations, nil
}

// certify returns A = chol(X), as ConvexDP does, and certifies the final
// X for the caller's unregularized V. X is symmetric only to rounding (its
// upper triangle is what chol reads), so it is symmetrized from there.
func (m *yuan2016) certify() error {
	n, x, res := m.o.n, m.x, m.res
	res.Iterations = len(res.History)
	res.CGSteps = m.cgTotal
	res.Status = m.status
	res.RegularizedObjective = m.fcurr
	for j := 0; j < n; j++ { // column-major upper triangle = row-major lower
		for i := 0; i < j; i++ {
			x.Data[i*n+j] = x.Data[j*n+i]
		}
	}
	xs := symdense.ToSym(x)
	obj, bound, err := certifyGram(m.vg, xs)
	if err != nil {
		return fmt.Errorf("newton: yuan2016: certifying the final X: %w", err)
	}
	res.Objective, res.LowerBound = obj, bound
	res.Gap = (obj - bound) / obj
	res.SVDBound = svdBound(m.vg)
	res.X = xs
	blas.Copy(m.a, x)
	if !blas.Cholesky(m.a) {
		return fmt.Errorf("newton: yuan2016: final X is not positive definite")
	}
	res.A = upperToTri(m.a)
	res.Seconds = time.Since(m.start).Seconds()
	if len(res.History) > 0 {
		last := &res.History[len(res.History)-1]
		last.LowerBound = bound
		last.Gap = res.Gap
	}
	return nil
}

// svdBound returns (tr V^{1/2})²/n = (Σσᵢ(W))²/n for V in full storage
// (copied: the eigensolver destroys its input).
func svdBound(v blas.General) float64 {
	n := v.Rows
	c := blas.NewSquare(n)
	blas.Copy(c, v)
	w := make([]float64, n)
	if !blas.SymEig(c, w, false) {
		return math.NaN()
	}
	s := sqrtSum(w)
	return s * s / float64(n)
}
