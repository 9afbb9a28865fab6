package newton

import (
	"fmt"
	"math"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/internal/symdense"
)

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
	return certifyGram(symdense.ToGeneral(V), X)
}

// certifyGram is Certificate for a validated V given in full storage v
// (read, never written) and an X of its size.
func certifyGram(v blas.General, X *mat.SymDense) (objective, bound float64, err error) {
	n := v.Rows
	for i := 0; i < n; i++ {
		if d := X.At(i, i); d > 1+1e-8 || !(d > 0) {
			return 0, 0, inputErrorf("X[%d,%d] = %.17g: X must have unit diagonal (at most 1, positive)", i, i, d)
		}
	}
	xi := symdense.ToGeneral(X)
	for _, v := range xi.Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, 0, inputErrorf("X has a non-finite entry")
		}
	}
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
		if objective, y, err = pseudoCertificate(v, X); err != nil {
			return 0, 0, err
		}
		y2 = dualFromPrimal(v, X)
	}
	c, err := psdFactor(v)
	if err != nil {
		return objective, 0, err
	}
	bound, ok := dualBound(c, y, blas.NewSquare(n))
	if ok && y2 != nil {
		// A singular X determines its dual point only through X·D·X = V
		// (X⁺VX⁺ is the projection of D onto range(X)): try its least-squares
		// solution too and keep the better of the two valid bounds.
		if b2, ok2 := dualBound(c, y2, blas.NewSquare(n)); ok2 && b2 > bound {
			bound = b2
		}
	}
	if !ok {
		return objective, 0, fmt.Errorf("newton: certificate singular values failed to converge")
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
func pseudoCertificate(v blas.General, X *mat.SymDense) (objective float64, y []float64, err error) {
	n := v.Rows
	p := symdense.ToGeneral(X)
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
func dualFromPrimal(v blas.General, X *mat.SymDense) []float64 {
	n := v.Rows
	x := symdense.ToGeneral(X)
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

// certificate returns the dual bound for the scaled problem at the current
// iterate (Z in s.m, Λ in s.lam) and the trace of X⁻¹; tol is the gap the
// caller needs and est its estimate of the gap (see bestBound). It uses s.g, s.a and s.gr.
func (s *newtonState) certificate(tol, est float64) (bound, trXinv float64, ok bool) {
	n := s.n
	// Y = X⁻¹Z = U⁻¹U⁻ᵀZ; X⁻¹ = YYᵀ. V = (ZΛ^{1/2})(ZΛ^{1/2})ᵀ: the factor C
	// comes free with the coordinates, and X⁻¹C = YΛ^{1/2}.
	w, c := s.a, s.g
	blas.Copy(w, s.m)
	blas.Trsm(gblas.Left, gblas.Upper, gblas.Trans, gblas.NonUnit, 1, s.u, w)
	blas.Trsm(gblas.Left, gblas.Upper, gblas.NoTrans, gblas.NonUnit, 1, s.u, w)
	r := make([]float64, n)
	for j, l := range s.lam {
		r[j] = math.Sqrt(math.Max(l, 0))
	}
	for i := 0; i < n; i++ {
		wrow := w.Data[i*n : i*n+n]
		for j, z := range wrow {
			trXinv += z * z
			wrow[j] = z * r[j]
		}
	}
	factor := func(dst blas.General) bool { // C = ZΛ^{1/2}
		for i := 0; i < n; i++ {
			drow, zrow := dst.Data[i*n:i*n+n], s.m.Data[i*n:i*n+n]
			for j, z := range zrow {
				drow[j] = z * r[j]
			}
		}
		return true
	}
	factor(c)
	bound, ok = s.bestBound(c, w, tol, est, factor)
	return bound, trXinv, ok
}

// bestBound certifies the dual point y = diag(X⁻¹VX⁻¹) given a factor C of
// V (c = s.g) and W = X⁻¹C (w = s.a), and sets s.y; est is the caller's
// estimate of X's gap and factor rebuilds C into a matrix. Three bounds,
// cheapest first, each tried only if the previous one failed or left a
// gap above tol (each is never lower than the last): polarBound (two
// GEMMs; its deficit is second order in X − X* but about 30 times the
// objective's gap, so it is tried only when est ≤ tol/100),
// eigenDualBound (tight for this y whatever X; about 7
// DGEMM-equivalents) and the singular values of D^{1/2}C (dualBound,
// about 11). s.g, s.a and s.gr are overwritten.
func (s *newtonState) bestBound(c, w blas.General, tol, est float64, factor func(dst blas.General) bool) (float64, bool) {
	y := rowNormsSq(w)
	if y == nil {
		return math.Inf(-1), false
	}
	s.y = y
	b, ok := math.Inf(-1), false
	if est <= tol/100 {
		if pb, pok := polarBound(c, w, y, s.gr, s.threads, &s.pbuf); pok {
			b, ok = pb, true
			if (s.f-b)/s.f <= tol {
				return b, true
			}
		}
	}
	e, eok := eigenDualBound(c, w, s.gr, y, factor, s.threads) // C is in w now
	if eok {
		b, ok = math.Max(b, e), true
		if (s.f-b)/s.f <= tol {
			return b, true
		}
	} else if !factor(w) {
		return b, ok
	}
	b2, ok2 := dualBound(w, y, c)
	if !ok2 {
		return b, ok
	}
	return math.Max(b, b2), true
}

// certifyDirect computes the certificate at the current X from U = chol(X)
// (set by evaluate) without the eigendecomposition: a factor C of V comes
// from its Cholesky factorization and X⁻¹C = U⁻¹U⁻ᵀC from two triangular
// solves, and bestBound does the rest. That costs about two GEMMs instead
// of an eigendecomposition and a Newton system, which is what the final
// iteration would otherwise spend just to learn that it is done. ok is
// false if V + θI is not numerically definite (then the caller certifies
// the usual way); s.u and s.m are preserved.
func (s *newtonState) certifyDirect(tol, est float64) (bound, trXinv float64, ok bool) {
	c, w := s.g, s.a
	s.loadV(c, s.theta)
	if !lowerCholesky(c) {
		return 0, 0, false
	}
	if s.theta > 0 {
		// tr(X⁻¹) = ‖U⁻¹‖_F², needed for the objective on the caller's V.
		blas.Copy(s.gr, s.u)
		if !blas.TriInverse(gblas.Upper, s.gr) {
			return 0, 0, false
		}
		for i := 0; i < s.n; i++ {
			for _, x := range s.gr.Data[i*s.n+i : i*s.n+s.n] {
				trXinv += x * x
			}
		}
	}
	blas.Copy(w, c)
	blas.Trsm(gblas.Left, gblas.Upper, gblas.Trans, gblas.NonUnit, 1, s.u, w)
	blas.Trsm(gblas.Left, gblas.Upper, gblas.NoTrans, gblas.NonUnit, 1, s.u, w)
	bound, ok = s.bestBound(c, w, tol, est, func(dst blas.General) bool {
		s.loadV(dst, s.theta)
		return lowerCholesky(dst)
	})
	return bound, trXinv, ok
}

// recomputeAndCertify recomputes Z and Λ at the current X (s.u, s.m hold
// chol(X) and U⁻ᵀVU⁻¹) and returns the certificate there.
func (s *newtonState) recomputeAndCertify(tol float64) (bound, trXinv float64, ok bool) {
	s.f, _ = s.evaluate(s.x)
	if !s.eigen(s.lam) {
		return math.Inf(-1), 0, false
	}
	blas.Trmm(gblas.Left, gblas.Upper, gblas.Trans, gblas.NonUnit, 1, s.u, s.m)
	return s.certificate(tol, math.Inf(1))
}
