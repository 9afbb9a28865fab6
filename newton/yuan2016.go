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
)

// Constants of the seed's ConvexDP (Yuan et al. 2016, Algorithm 1 in Matlab).
const (
	yuanTheta      = 1e-3 // V ← V + θ·mean(diag V)·I
	yuanAccuracy   = 1e-5 // stop when |Δf/f| ≤ accuracy
	yuanBeta       = 0.5  // backtracking factor
	yuanSigma      = 1e-4 // Armijo constant
	yuanMaxIterLS  = 50
	yuanMaxIterCG  = 5
	yuanCGAbsResSq = 1e-10 // CG stops when ‖R‖_F² < 1e-10
)

// The seed's method is sensitive to rounding: five CG steps on an
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

// solveYuan2016 reproduces ConvexDP line by line: X₀ = I, first direction
// −G with zero diagonal, then at most 5 CG steps on the Newton system
// H[D] = −G with H[S] = −X⁻¹SG − GSX⁻¹, Armijo backtracking with Cholesky
// as the positive-definiteness test, and the relative-change stopping rule.
// Its quirks are kept: when all 50 backtracking steps fail the last trial
// point is kept, and its "if i == maxiterls" test compares the CG counter,
// so it never fires.
func solveYuan2016(ctx context.Context, V *mat.SymDense, opt Options) (*Result, error) {
	start := time.Now()
	n := V.SymmetricDim()
	o := octave{n: n}
	meanDiag := 0.0
	for i := 0; i < n; i++ {
		meanDiag += V.At(i, i)
	}
	meanDiag /= float64(n)
	theta := yuanTheta
	if opt.Regularization > 0 {
		theta = opt.Regularization
	}
	v := symToGeneral(V, 1)
	reg := theta * meanDiag
	for i := 0; i < n; i++ {
		v.Data[i*n+i] += reg
	}
	x, xold, ix, g, tmp, tmp2 := blas.NewSquare(n), blas.NewSquare(n), blas.NewSquare(n), blas.NewSquare(n), blas.NewSquare(n), blas.NewSquare(n)
	d, rhs, a := blas.NewSquare(n), blas.NewSquare(n), blas.NewSquare(n)
	identity(x)

	// eval: [A,flag] = chol(X); iX = A\(A'\I); G = -iX*V*iX;
	// fcurr = sum(sum(V.*iX)). ok is false when chol fails.
	eval := func() (float64, bool) {
		blas.Copy(a, x)
		if !o.chol(a) {
			return 0, false
		}
		o.inv(a, ix)
		o.mul(-1, ix, v, tmp, 0)
		o.mul(1, tmp, ix, g, 0)
		return o.sumProd(v, ix), true
	}
	fcurr, ok := eval()
	if !ok {
		return nil, fmt.Errorf("newton: yuan2016: Cholesky of the identity failed")
	}
	zeroDiag := func(m blas.General) {
		for i := 0; i < n; i++ {
			m.Data[i*n+i] = 0
		}
	}
	// Hx = @(S) -iX*S*G - G*S*iX
	hess := func(dst, src blas.General) {
		o.mul(-1, ix, src, tmp, 0)
		o.mul(1, tmp, g, dst, 0)
		o.mul(1, g, src, tmp, 0)
		o.mul(1, tmp, ix, tmp2, 0)
		for i := range dst.Data {
			dst.Data[i] -= tmp2.Data[i]
		}
	}

	res := &Result{Method: MethodYuan2016, Regularization: theta}
	status := IterationLimit
	cgTotal := 0
	for iter := 1; iter <= opt.MaxIter; iter++ {
		if err := ctx.Err(); err != nil {
			status = Cancelled
			break
		}
		cgSteps := 0
		if iter == 1 {
			for i := range d.Data {
				d.Data[i] = -g.Data[i]
			}
			zeroDiag(d)
		} else {
			for i := range rhs.Data {
				rhs.Data[i] = -g.Data[i]
			}
			clear(d.Data)
			r, err := cg.Solve(hess, rhs, d, cg.Options{
				MaxIter: yuanMaxIterCG, AbsTol: math.Sqrt(yuanCGAbsResSq), Project: zeroDiag, Inner: o.sumProd,
			})
			if err != nil {
				return nil, fmt.Errorf("newton: yuan2016 iteration %d: %w", iter, err)
			}
			cgSteps = r.Iterations
		}
		cgTotal += cgSteps
		delta := o.sumProd(d, g)
		blas.Copy(xold, x)
		flast := fcurr
		alpha := 1.0
		for j := 1; j <= yuanMaxIterLS; j++ {
			alpha = math.Pow(yuanBeta, float64(j-1))
			for i := range x.Data {
				x.Data[i] = xold.Data[i] + alpha*d.Data[i]
			}
			if f, ok := eval(); ok {
				fcurr = f
				if fcurr <= flast+alpha*yuanSigma*delta {
					break
				}
			}
		}
		it := Iteration{Iter: iter, Objective: fcurr, LowerBound: math.NaN(), Gap: math.NaN(),
			Step: alpha, CGSteps: cgSteps, Seconds: time.Since(start).Seconds()}
		res.History = append(res.History, it)
		report(opt, res.History, it)
		if math.Abs((flast-fcurr)/flast) <= yuanAccuracy {
			status = Converged
			break
		}
	}
	// The seed returns A = chol(X). X is symmetric only to rounding (its
	// upper triangle is what chol reads), so symmetrize it from there, then
	// certify the final X for the caller's unregularized V.
	res.Iterations = len(res.History)
	res.CGSteps = cgTotal
	res.Status = status
	res.RegularizedObjective = fcurr
	for j := 0; j < n; j++ { // column-major upper triangle = row-major lower
		for i := 0; i < j; i++ {
			x.Data[i*n+j] = x.Data[j*n+i]
		}
	}
	xs := generalToSym(x)
	obj, bound, err := Certificate(V, xs)
	if err != nil {
		return nil, fmt.Errorf("newton: yuan2016: certifying the final X: %w", err)
	}
	res.Objective, res.LowerBound = obj, bound
	res.Gap = (obj - bound) / obj
	res.SVDBound = svdBound(V)
	res.X = xs
	blas.Copy(a, x)
	if !blas.Cholesky(a) {
		return nil, fmt.Errorf("newton: yuan2016: final X is not positive definite")
	}
	res.A = upperToTri(a)
	res.Seconds = time.Since(start).Seconds()
	if len(res.History) > 0 {
		last := &res.History[len(res.History)-1]
		last.LowerBound = bound
		last.Gap = res.Gap
	}
	return res, nil
}

// svdBound returns (tr V^{1/2})²/n = (Σσᵢ(W))²/n.
func svdBound(V *mat.SymDense) float64 {
	n := V.SymmetricDim()
	c := symToGeneral(V, 1)
	w := make([]float64, n)
	if !blas.SymEig(c, w, false) {
		return math.NaN()
	}
	s := sqrtSum(w)
	return s * s / float64(n)
}
