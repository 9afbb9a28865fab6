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

// solveYuan2016 reproduces ConvexDP line by line: X₀ = I, first direction
// −G with zero diagonal, then at most 5 CG steps on the Newton system
// H[D] = −G with H[S] = −(X⁻¹SG + GSX⁻¹), Armijo backtracking with Cholesky
// as the positive-definiteness test, and the relative-change stopping rule.
// Its quirks are kept: when all 50 backtracking steps fail the last trial
// point is kept, and its "if i == maxiterls" test compares the CG counter,
// so it never fires.
func solveYuan2016(ctx context.Context, V *mat.SymDense, opt Options) (*Result, error) {
	start := time.Now()
	n := V.SymmetricDim()
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
	for i := 0; i < n; i++ {
		v.Data[i*n+i] += theta * meanDiag
	}
	x, xold, ix, g, tmp := blas.NewSquare(n), blas.NewSquare(n), blas.NewSquare(n), blas.NewSquare(n), blas.NewSquare(n)
	d, rhs, a := blas.NewSquare(n), blas.NewSquare(n), blas.NewSquare(n)
	identity(x)

	// eval sets a = chol(x), ix = x⁻¹, g = −ix·V·ix and returns tr(V·ix);
	// ok is false when chol fails.
	eval := func() (float64, bool) {
		blas.Copy(a, x)
		if !blas.Cholesky(a) {
			return 0, false
		}
		blas.Copy(ix, a)
		if !blas.CholInverse(ix) {
			return 0, false
		}
		blas.Gemm(gblas.NoTrans, gblas.NoTrans, 1, ix, v, 0, tmp)
		blas.Gemm(gblas.NoTrans, gblas.NoTrans, -1, tmp, ix, 0, g)
		f := 0.0
		for i := range v.Data {
			f += v.Data[i] * ix.Data[i]
		}
		return f, true
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
	// H[S] = −(X⁻¹·S·G + G·S·X⁻¹) = −(M + Mᵀ), M = X⁻¹·S·G.
	hess := func(dst, src blas.General) {
		blas.Gemm(gblas.NoTrans, gblas.NoTrans, 1, ix, src, 0, tmp)
		blas.Gemm(gblas.NoTrans, gblas.NoTrans, 1, tmp, g, 0, dst)
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				s := -(dst.Data[i*n+j] + dst.Data[j*n+i])
				dst.Data[i*n+j], dst.Data[j*n+i] = s, s
			}
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
				MaxIter: yuanMaxIterCG, AbsTol: math.Sqrt(yuanCGAbsResSq), Project: zeroDiag,
			})
			if err != nil {
				return nil, fmt.Errorf("newton: yuan2016 iteration %d: %w", iter, err)
			}
			cgSteps = r.Iterations
		}
		cgTotal += cgSteps
		delta := 0.0
		for i := range d.Data {
			delta += d.Data[i] * g.Data[i]
		}
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
		if opt.Progress != nil {
			opt.Progress(it)
		}
		if math.Abs((flast-fcurr)/flast) <= yuanAccuracy {
			status = Converged
			break
		}
	}
	// A = chol(X) as the seed returns it; certify the final X for the
	// caller's (unregularized) V.
	res.Iterations = len(res.History)
	res.CGSteps = cgTotal
	res.Status = status
	res.RegularizedObjective = fcurr
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
	s := 0.0
	for _, x := range w {
		s += math.Sqrt(math.Max(x, 0))
	}
	return s * s / float64(n)
}
