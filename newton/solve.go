package newton

import (
	"context"
	"fmt"
	"math"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/blas"
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
	if o.Method == "" {
		o.Method = MethodNewton
	}
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
	var res *Result
	switch o.Method {
	case MethodNewton:
		st.threads = o.Threads
		st.prepare(V.SymmetricDim())
		res, err = solveNewton(ctx, st, V, o)
	case MethodYuan2016:
		res, err = solveYuan2016(ctx, V, o)
	}
	if err == nil && res != nil && res.Status == Cancelled {
		err = ctx.Err()
	}
	if res != nil {
		reportDone(o, res)
	}
	return res, err
}

// Certificate returns the objective tr(V X⁺) and the weak-duality lower
// bound g(y) ≤ min{tr(V X'⁺) : diag(X') ≤ 1, X' ⪰ 0, range(V) ⊆ range(X')}
// at y = diag(X⁺VX⁺), for any symmetric positive semidefinite X with
// diag(X) ≤ 1 (to 1e-8; a strategy's X has unit diagonal, and one with a
// smaller diagonal spends less than the privacy budget) whose range holds
// V's. The minimum it bounds equals the infimum of tr(V X⁻¹) over X ≻ 0
// with unit diagonal. It is computed from scratch, independently of the
// solver's internal coordinates, so it can check any strategy, including
// other programs' solutions: a positive definite X by a Cholesky inverse and
// one values-only eigendecomposition; a singular one (Cholesky fails or
// has a pivot at rounding level, see tinyPivot) by
// X's eigendecomposition, whose eigenvalues above 64·n·ε·λ_max span its
// range. V must lie in that range: if the part of V outside it, tr(P⊥VP⊥),
// exceeds 1e-9·tr(V) the strategy cannot answer the workload (its error is
// infinite) and an error wrapping ErrInput is returned.
func Certificate(V, X *mat.SymDense) (objective, bound float64, err error) {
	if err := checkGram(V); err != nil {
		return 0, 0, err
	}
	if X == nil || X.SymmetricDim() != V.SymmetricDim() {
		return 0, 0, inputErrorf("X must be %d×%d", V.SymmetricDim(), V.SymmetricDim())
	}
	n := V.SymmetricDim()
	for i := 0; i < n; i++ {
		if d := X.At(i, i); d > 1+1e-8 || !(d > 0) {
			return 0, 0, inputErrorf("X[%d,%d] = %.17g: X must have unit diagonal (at most 1, positive)", i, i, d)
		}
	}
	xi := symToGeneral(X, 1)
	for _, v := range xi.Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, 0, inputErrorf("X has a non-finite entry")
		}
	}
	v := symToGeneral(V, 1)
	var y, y2 []float64
	if blas.Cholesky(xi) && !tinyPivot(xi) && blas.CholInverse(xi) {
		xiv := blas.NewSquare(n)
		blas.Gemm(gblas.NoTrans, gblas.NoTrans, 1, xi, v, 0, xiv) // X⁻¹V
		y = make([]float64, n)
		for k := 0; k < n; k++ {
			objective += xiv.Data[k*n+k]
			// (X⁻¹VX⁻¹)ₖₖ = Σⱼ (X⁻¹V)ₖⱼ·(X⁻¹)ⱼₖ
			acc := 0.0
			for j := 0; j < n; j++ {
				acc += xiv.Data[k*n+j] * xi.Data[j*n+k]
			}
			y[k] = acc
		}
	} else {
		if objective, y, err = pseudoCertificate(V, X); err != nil {
			return 0, 0, err
		}
		y2 = dualFromPrimal(V, X)
	}
	c, ok := psdFactor(v)
	if ok {
		bound, ok = dualBound(c, y, blas.NewSquare(n))
	}
	if ok && y2 != nil {
		// A singular X determines its dual point only through X·D·X = V
		// (X⁺VX⁺ is the projection of D onto range(X)): try its least-squares
		// solution too and keep the better of the two valid bounds.
		if b2, ok2 := dualBound(c, y2, blas.NewSquare(n)); ok2 && b2 > bound {
			bound = b2
		}
	}
	if !ok {
		return objective, 0, fmt.Errorf("newton: certificate eigendecomposition failed to converge")
	}
	return objective, bound, nil
}

// tinyPivot reports whether the Cholesky factor u (upper, of X) has a
// pivot uᵢᵢ² at or below 64·n·ε·tr(X), the rank threshold of
// pseudoCertificate (tr X bounds X's largest eigenvalue). Cholesky of a
// positive semidefinite X of rank r < n may succeed in floating point: the
// n − r Schur complements that vanish in exact arithmetic come out as
// rounding residue, positive as often as not, and X⁻¹ from such pivots is
// noise (measured: a rank-125 X at n = 128 gave tr(V X⁻¹) 4% off and a
// bound 10× too low). Such an X takes the singular path, which also
// handles an ill-conditioned definite X correctly.
func tinyPivot(u blas.General) bool {
	n := u.Rows
	trX := 0.0 // Xᵢᵢ = Σⱼ≤ᵢ uⱼᵢ²
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			v := u.Data[j*u.Stride+i]
			trX += v * v
		}
	}
	tol := 64 * float64(n) * 0x1p-52 * trX
	for i := 0; i < n; i++ {
		if d := u.Data[i*u.Stride+i]; d*d <= tol {
			return true
		}
	}
	return false
}

// pseudoCertificate returns tr(V X⁺) and y = diag(X⁺VX⁺) for a singular
// positive semidefinite X, from X = P·diag(ξ)·Pᵀ: with Pᵣ the eigenvectors
// of the eigenvalues above 64·n·ε·ξ_max and Vᵣ = PᵣᵀVPᵣ,
// tr(V X⁺) = Σₐ (Vᵣ)ₐₐ/ξₐ and X⁺VX⁺ = Pᵣξ⁻¹Vᵣξ⁻¹Pᵣᵀ.
func pseudoCertificate(V, X *mat.SymDense) (objective float64, y []float64, err error) {
	n := V.SymmetricDim()
	p := symToGeneral(X, 1)
	xi := make([]float64, n)
	if !blas.SymEig(p, xi, true) {
		return 0, nil, fmt.Errorf("newton: certificate eigendecomposition failed to converge")
	}
	if xi[0] < -1e-8*math.Abs(xi[n-1]) {
		return 0, nil, inputErrorf("X is not positive semidefinite: smallest eigenvalue %.3g (largest %.3g)", xi[0], xi[n-1])
	}
	tol := 64 * float64(n) * 0x1p-52 * xi[n-1]
	k := 0 // eigenvalues [0, k) span the null space
	for k < n && xi[k] <= tol {
		k++
	}
	r := n - k
	v := symToGeneral(V, 1)
	vp := blas.NewGeneral(n, n)
	blas.Gemm(gblas.NoTrans, gblas.NoTrans, 1, v, p, 0, vp) // V·P
	// Diagonal of PᵀVP: the null-space part must vanish.
	out, trV := 0.0, 0.0
	pvp := blas.NewGeneral(r, r) // Vᵣ
	for a := 0; a < n; a++ {
		trV += v.Data[a*n+a]
	}
	for a := 0; a < k; a++ {
		acc := 0.0
		for i := 0; i < n; i++ {
			acc += p.Data[i*n+a] * vp.Data[i*n+a]
		}
		out += acc
	}
	if out > 1e-9*trV {
		return 0, nil, inputErrorf("the range of X does not contain the workload's: tr(V) outside it is %.3g of %.3g, so the strategy cannot answer every query", out, trV)
	}
	pr := blas.General{Rows: n, Cols: r, Stride: n, Data: p.Data[k:]}
	vpr := blas.General{Rows: n, Cols: r, Stride: n, Data: vp.Data[k:]}
	blas.Gemm(gblas.Trans, gblas.NoTrans, 1, pr, vpr, 0, pvp)
	for a := 0; a < r; a++ {
		objective += pvp.Data[a*r+a] / xi[k+a]
	}
	// T = Pᵣ·ξ⁻¹ (n×r), Y = T·Vᵣ, yᵢ = Σₐ Yᵢₐ·Tᵢₐ.
	t := blas.NewGeneral(n, r)
	for i := 0; i < n; i++ {
		for a := 0; a < r; a++ {
			t.Data[i*r+a] = p.Data[i*n+k+a] / xi[k+a]
		}
	}
	yy := blas.NewGeneral(n, r)
	blas.Gemm(gblas.NoTrans, gblas.NoTrans, 1, t, pvp, 0, yy)
	y = make([]float64, n)
	for i := 0; i < n; i++ {
		acc := 0.0
		for a := 0; a < r; a++ {
			acc += yy.Data[i*r+a] * t.Data[i*r+a]
		}
		y[i] = math.Max(acc, 0)
	}
	return objective, y, nil
}

// dualFromPrimal returns the least-squares solution y ≥ 0 of X·diag(y)·X = V,
// the condition X = D^{-1/2}(D^{1/2}VD^{1/2})^{1/2}D^{-1/2} that links an
// optimal X to its dual point: the normal equations are
// ((X²)∘(X²))·y = diag(X·V·X), solved by Cholesky with a ridge of 1e-10 of
// the mean diagonal (the system is singular when the dual point is not
// unique, as for V = 11ᵀ). The bound is stationary in y at the optimum, so
// the ridge's small bias in y costs the bound only second-order terms. nil
// if the system cannot be solved.
func dualFromPrimal(V, X *mat.SymDense) []float64 {
	n := V.SymmetricDim()
	x := symToGeneral(X, 1)
	v := symToGeneral(V, 1)
	x2 := blas.NewSquare(n)
	blas.Gemm(gblas.NoTrans, gblas.NoTrans, 1, x, x, 0, x2)
	xv := blas.NewSquare(n)
	blas.Gemm(gblas.NoTrans, gblas.NoTrans, 1, x, v, 0, xv)
	y := make([]float64, n)
	for k := 0; k < n; k++ {
		acc := 0.0
		for j := 0; j < n; j++ {
			acc += xv.Data[k*n+j] * x.Data[j*n+k]
		}
		y[k] = acc
	}
	mean := 0.0
	for i := range x2.Data {
		x2.Data[i] *= x2.Data[i]
	}
	for i := 0; i < n; i++ {
		mean += x2.Data[i*n+i]
	}
	mean /= float64(n)
	for i := 0; i < n; i++ {
		x2.Data[i*n+i] += 1e-10 * mean
	}
	if !blas.Cholesky(x2) {
		return nil
	}
	rv := blas.General{Rows: n, Cols: 1, Stride: 1, Data: y}
	blas.Trsm(gblas.Left, gblas.Upper, gblas.Trans, gblas.NonUnit, 1, x2, rv)
	blas.Trsm(gblas.Left, gblas.Upper, gblas.NoTrans, gblas.NonUnit, 1, x2, rv)
	for i, v := range y {
		if !(v >= 0) {
			y[i] = 0
		}
	}
	return y
}
