package lrm

import (
	"errors"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"

	kernel "github.com/dpsolve/dpsolve/blas"
)

// varpro evaluates the augmented-Lagrangian subproblem with B eliminated.
//
// For fixed multipliers π and penalty β the augmented Lagrangian is
//
//	½‖B‖²_F + ⟨π, W − BL⟩ + (β/2)‖W − BL‖²_F = ½‖B‖²_F + (β/2)‖C − BL‖²_F − ‖π‖²/(2β),
//
// C = W + π/β. Its minimizer over B (the closed-form B-step) is
// B = βCLᵀ(I + βLLᵀ)⁻¹ = βRLᵀ with residual R = C − BL = C(I + βLᵀL)⁻¹, and
// the value there is g(L) = (β/2)⟨C, R⟩ (dropping the constant). The gradient
// of g is ∇g = −βBᵀR = −β²L RᵀR. The L-step works on g, so every step of it
// is followed by the exact B-step.
//
// The variable is stored transposed, Lt = Lᵀ (n×r), so that each column of L
// (the unit a cell contributes to the measurements, which the privacy
// constraint bounds) is a contiguous row. Two algebraically equal evaluation
// orders are used: "n-space" factors the n×n matrix I + βLᵀL, "r-space" the
// r×r matrix I + βLLᵀ; the cheaper one is chosen from the shapes.
type varpro struct {
	k, n, r int
	nspace  bool
	beta    float64
	c, ct   *mat.Dense // C (k×n) and Cᵀ

	sym  *mat.SymDense  // n×n or r×r: K, then its Cholesky factor
	u    kernel.General // upper Cholesky factor of the last K
	x    *mat.Dense     // n-space: Rᵀ (n×k); r-space: Bᵀ (r×k)
	res  *mat.Dense     // r-space: R (k×n)
	tmp  *mat.Dense     // gradient intermediate R·Lt (k×r)
	rtr  *mat.SymDense  // gradient intermediate RᵀR (n×n)
	gram bool           // n-space gradient via RᵀR (n×n) rather than R·Lt (k×r)

	evals, grads int // evaluations, and those with a gradient
}

var (
	errNotPD     = errors.New("lrm: penalty matrix is not positive definite (non-finite iterate)")
	errNonFinite = errors.New("non-finite objective at the start")
)

func newVarpro(c *mat.Dense, r int) *varpro {
	k, n := c.Dims()
	v := &varpro{k: k, n: n, r: r, c: c, ct: mat.DenseCopyOf(c.T())}
	// Flop counts per evaluation with gradient (leading terms).
	nsp := float64(n*n*r) + float64(n*n*n)/3 + 2*float64(k*n*n) // syrk, potrf, 2 trsm
	rsp := float64(r*r*n) + float64(r*r*r)/3 + 2*float64(k*r*n) + 2*float64(k*r*r) + 2*float64(k*r*n)
	gA := float64(k*n*n) + 2*float64(n*n*r) // RᵀR then ·Lt
	gB := 4 * float64(k*n*r)                // R·Lt then Rᵀ·
	v.gram = gA < gB
	if v.gram {
		nsp += gA
	} else {
		nsp += gB
	}
	rsp += 2 * float64(k*r*n)
	v.nspace = nsp <= rsp
	if v.nspace {
		v.sym = mat.NewSymDense(n, nil)
		v.x = mat.NewDense(n, k, nil)
		if v.gram {
			v.rtr = mat.NewSymDense(n, nil)
		} else {
			v.tmp = mat.NewDense(k, r, nil)
		}
	} else {
		v.sym = mat.NewSymDense(r, nil)
		v.x = mat.NewDense(r, k, nil)
		v.res = mat.NewDense(k, n, nil)
	}
	return v
}

// eval returns g(Lt) and, when gt is not nil, stores ∇g (transposed, n×r)
// in gt.
func (v *varpro) eval(lt *mat.Dense, gt *mat.Dense) (float64, error) {
	v.evals++
	if gt != nil {
		v.grads++
	}
	beta := v.beta
	if v.nspace {
		// K = I + β Lt Ltᵀ = UᵀU (n×n). With Z = U⁻ᵀCᵀ the value is
		// g = (β/2)‖Z‖²_F, and Rᵀ = K⁻¹Cᵀ = U⁻¹Z.
		u, ok := v.factor(lt, blas.NoTrans)
		if !ok {
			return 0, errNotPD
		}
		v.x.Copy(v.ct)
		xr := v.x.RawMatrix()
		kernel.Trsm(blas.Left, blas.Upper, blas.Trans, blas.NonUnit, 1, u, xr)
		nz := mat.Norm(v.x, 2)
		f := beta / 2 * nz * nz
		if gt == nil {
			return f, nil
		}
		kernel.Trsm(blas.Left, blas.Upper, blas.NoTrans, blas.NonUnit, 1, u, xr)
		if v.gram {
			// ∇gᵀ = −β² (RᵀR) Lt, RᵀR = Rᵀ(Rᵀ)ᵀ.
			v.rtr.SymOuterK(1, v.x)
			gt.Mul(v.rtr, lt)
		} else {
			// ∇gᵀ = −β² Rᵀ (R Lt).
			v.tmp.Mul(v.x.T(), lt)
			gt.Mul(v.x, v.tmp)
		}
		gt.Scale(-beta*beta, gt)
		return f, nil
	}
	// r-space. K = I + β Ltᵀ Lt (r×r); Bᵀ = K⁻¹ (β Ltᵀ Cᵀ); R = C − B Ltᵀ.
	u, ok := v.factor(lt, blas.Trans)
	if !ok {
		return 0, errNotPD
	}
	p := v.x
	p.Mul(lt.T(), v.ct)
	p.Scale(beta, p)
	kernel.CholSolve(u, p.RawMatrix())
	v.res.Mul(p.T(), lt.T())
	v.res.Sub(v.c, v.res)
	nb := mat.Norm(p, 2)
	nr := mat.Norm(v.res, 2)
	f := 0.5*nb*nb + beta/2*nr*nr
	if gt == nil {
		return f, nil
	}
	// ∇gᵀ = −β Rᵀ B = −β Rᵀ (Bᵀ)ᵀ.
	gt.Mul(v.res.T(), p.T())
	gt.Scale(-beta, gt)
	return f, nil
}

// bStep returns the closed-form B (k×r) for Lt at the current β and C.
func (v *varpro) bStep(lt *mat.Dense) (*mat.Dense, error) {
	if _, err := v.eval(lt, nil); err != nil {
		return nil, err
	}
	b := mat.NewDense(v.k, v.r, nil)
	if v.nspace {
		// eval left Z = U⁻ᵀCᵀ in x; finish Rᵀ = U⁻¹Z.
		kernel.Trsm(blas.Left, blas.Upper, blas.NoTrans, blas.NonUnit, 1, v.u, v.x.RawMatrix())
		// B = β R Lt.
		b.Mul(v.x.T(), lt)
		b.Scale(v.beta, b)
		return b, nil
	}
	b.Copy(v.x.T())
	return b, nil
}

// factor forms K = I + β·A·Aᵀ (A = Lt for tr = NoTrans, n×n; A = Ltᵀ for
// Trans, r×r) in v.sym's upper triangle and overwrites it with the Cholesky
// factor U, K = UᵀU. It calls the kernel Cholesky directly: gonum's
// mat.Cholesky would add a condition estimate as costly as the
// factorization itself. K ⪰ I, so failure means a non-finite iterate.
func (v *varpro) factor(lt *mat.Dense, tr blas.Transpose) (kernel.General, bool) {
	raw := v.sym.RawSymmetric()
	u := kernel.General{Rows: raw.N, Cols: raw.N, Stride: raw.Stride, Data: raw.Data}
	kernel.Syrk(tr, v.beta, lt.RawMatrix(), 0, u)
	for i := 0; i < raw.N; i++ {
		raw.Data[i*raw.Stride+i]++
	}
	ok := kernel.Cholesky(u)
	v.u = u
	return u, ok
}

// setC sets C (k×n) and its transpose.
func (v *varpro) setC(c *mat.Dense) {
	v.c.Copy(c)
	v.ct.Copy(c.T())
}
