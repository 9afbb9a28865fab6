package lrm

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	kernel "github.com/dpsolve/dpsolve/blas"
)

// pIdentity evaluates the p-Identity family of strategies of HDMM (McKenna,
// Miklau, Hay and Machanavajjhala, VLDB 2018), the start StartAuto picks
// under ε-DP when r ≥ n:
//
//	L = [I; Θ]·D⁻¹,   Θ p×n,   D = diag(d),
//
// d_j = 1 + Σᵢ|Θᵢⱼ| (L1: every column of L has ℓ1 norm exactly 1) or
// d_j = (1 + Σᵢ Θᵢⱼ²)^{1/2} (L2). L has full column rank, so W = B·L holds
// exactly with B = W·L⁺, and
//
//	Φ(Θ) = ‖W L⁺‖²_F = tr(G (LᵀL)⁻¹) = tr(M X⁻¹),   M = D·G·D,   X = I + ΘᵀΘ,
//
// G = WᵀW. With the Woodbury identity X⁻¹ = I − ΘᵀZ, Z = (I_p + ΘΘᵀ)⁻¹Θ,
// value and gradient cost two n×n by n×p products (4n²p flops, 2p/n
// DGEMM-equivalents) plus O(p²n), never an n×n factorization:
//
//	Φ = Σⱼ dⱼ²Gⱼⱼ − ⟨D·H, Z⟩,                      H = (G·D·Θᵀ)ᵀ (p×n),
//	∂Φ/∂Θ = −2·Θ X⁻¹ M X⁻¹ + 2·diag(G D X⁻¹)ⱼ ∂dⱼ/∂Θᵢⱼ,
//
// Θ X⁻¹ M X⁻¹ = Q − (Z Qᵀ)Θ with Q = (M Zᵀ)ᵀ, and diag(G D X⁻¹)ⱼ =
// Gⱼⱼdⱼ − Σᵢ HᵢⱼZᵢⱼ. Θ ≥ 0 as in HDMM (for L1 this makes d's column sums
// smooth), minimized by nonnegLBFGS.
type pIdentity struct {
	n, p  int
	ball  ball
	g     kernel.General // G (n×n, both triangles: GEMM took a fifth less time than SYMM at p = n/16)
	gdiag []float64

	d, dg    []float64
	theta    *mat.Dense    // Θ (p×n)
	s        *mat.SymDense // I + ΘΘᵀ, then its Cholesky factor
	z, td, h *mat.Dense    // Z, Θ·D, H (p×n)
	q, zd    *mat.Dense    // Q, Z·D (p×n)
	pq       *mat.Dense    // Z·Qᵀ (p×p)
	// valid reports that Θ, d, Z and H hold the last evaluated point and
	// f its Φ, so that a gradient asked at the same point reuses them.
	valid bool
	f     float64
}

func newPIdentity(g *mat.SymDense, p int, ball ball) *pIdentity {
	n := g.SymmetricDim()
	e := &pIdentity{
		n: n, p: p, ball: ball, g: mat.DenseCopyOf(g).RawMatrix(),
		gdiag: make([]float64, n), d: make([]float64, n), dg: make([]float64, n),
		theta: mat.NewDense(p, n, nil), s: mat.NewSymDense(p, nil),
		z: mat.NewDense(p, n, nil), td: mat.NewDense(p, n, nil), h: mat.NewDense(p, n, nil),
		q: mat.NewDense(p, n, nil), zd: mat.NewDense(p, n, nil), pq: mat.NewDense(p, p, nil),
	}
	for j := 0; j < n; j++ {
		e.gdiag[j] = g.At(j, j)
	}
	return e
}

// setTheta sets Θ from the optimization variable x (p·n, row-major, ≥ 0).
func (e *pIdentity) setTheta(x []float64) {
	copy(e.theta.RawMatrix().Data, x)
	e.valid = false
}

// factor sets d from Θ and factors I + ΘΘᵀ; ok is false for a non-finite Θ.
func (e *pIdentity) factor() bool {
	p := e.p
	if !columnScales(e.theta, e.ball, e.d) {
		return false
	}
	if p <= smallP {
		return e.factorSmall()
	}
	return e.factorKernel()
}

// factorKernel is factor's I + ΘΘᵀ and Z by kernel calls (SYRK, Cholesky,
// triangular solves).
func (e *pIdentity) factorKernel() bool {
	p := e.p
	raw := e.s.RawSymmetric()
	u := kernel.General{Rows: raw.N, Cols: raw.N, Stride: raw.Stride, Data: raw.Data}
	kernel.Syrk(blas.NoTrans, 1, e.theta.RawMatrix(), 0, u)
	for i := 0; i < p; i++ {
		raw.Data[i*raw.Stride+i]++
	}
	if !kernel.Cholesky(u) {
		return false
	}
	// Z = (I + ΘΘᵀ)⁻¹Θ.
	e.z.Copy(e.theta)
	kernel.CholSolve(u, e.z.RawMatrix())
	return true
}

// smallP is the largest p whose I + ΘΘᵀ is formed, factored and solved
// with by factorSmall (n ≤ 256 at HDMM's p = ⌈n/16⌉). These steps cost
// p/2n of the evaluation's two n×n by n×p products in flops, but as
// kernel calls at p = 8, n = 115 (the age block of HDMM's SF1) they were
// half of an evaluation's time, the triangular solve alone a fifth.
const smallP = 16

// factorSmall is factor's I + ΘΘᵀ = UᵀU and Z = U⁻¹U⁻ᵀΘ in plain loops
// over Θ's rows (dot products and axpys of length n): for small p the
// kernel calls' fixed costs exceed their work. ok is false when a pivot
// is not positive (a non-finite Θ).
func (e *pIdentity) factorSmall() bool {
	p, n := e.p, e.n
	th := e.theta.RawMatrix().Data
	raw := e.s.RawSymmetric()
	u, st := raw.Data, raw.Stride
	for i := 0; i < p; i++ {
		ri := th[i*n : (i+1)*n]
		for j := i; j < p; j++ {
			u[i*st+j] = floats.Dot(ri, th[j*n:(j+1)*n])
		}
		u[i*st+i]++
	}
	// Upper Cholesky in place: row j of U from rows k < j.
	for j := 0; j < p; j++ {
		for k := 0; k < j; k++ {
			ukj := u[k*st+j]
			for l := j; l < p; l++ {
				u[j*st+l] -= ukj * u[k*st+l]
			}
		}
		piv := u[j*st+j]
		if !(piv > 0) || math.IsInf(piv, 1) {
			return false
		}
		piv = math.Sqrt(piv)
		u[j*st+j] = piv
		for l := j + 1; l < p; l++ {
			u[j*st+l] /= piv
		}
	}
	// Uᵀ Y = Θ (forward), then U Z = Y (backward), row by row.
	z := e.z.RawMatrix().Data
	copy(z, th)
	for j := 0; j < p; j++ {
		zj := z[j*n : (j+1)*n]
		for k := 0; k < j; k++ {
			floats.AddScaled(zj, -u[k*st+j], z[k*n:(k+1)*n])
		}
		floats.Scale(1/u[j*st+j], zj)
	}
	for j := p - 1; j >= 0; j-- {
		zj := z[j*n : (j+1)*n]
		for k := j + 1; k < p; k++ {
			floats.AddScaled(zj, -u[j*st+k], z[k*n:(k+1)*n])
		}
		floats.Scale(1/u[j*st+j], zj)
	}
	return true
}

// eval returns Φ(x) and, when grad is not nil, its gradient with respect to
// the variable x. Non-finite points return +Inf (L-BFGS's line search then
// backs off). A call at the point of the previous one (its value only,
// asked by the line search for a trial it then accepts) computes just the
// gradient: Φ and the products it shares with the gradient are kept, so
// the result is the same as that of one call.
func (e *pIdentity) eval(x, grad []float64) float64 {
	if !e.valid || !slices.Equal(x, e.theta.RawMatrix().Data) {
		e.setTheta(x)
		if !e.factor() {
			return math.Inf(1)
		}
		e.f, e.valid = e.value(), true
	}
	f := e.f
	if grad == nil {
		return f
	}
	n, p := e.n, e.p
	// Q = D (Z D) G = (M Zᵀ)ᵀ.
	scaleCols(e.zd, e.z, e.d)
	kernel.Gemm(blas.NoTrans, blas.NoTrans, 1, e.zd.RawMatrix(), e.g, 0, e.q.RawMatrix())
	scaleCols(e.q, e.q, e.d)
	// Θ X⁻¹ M X⁻¹ = Q − (Z Qᵀ) Θ, stored in q.
	e.pq.Mul(e.z, e.q.T())
	kernel.Gemm(blas.NoTrans, blas.NoTrans, -1, e.pq.RawMatrix(), e.theta.RawMatrix(), 1, e.q.RawMatrix())
	// diag(G D X⁻¹)ⱼ = Gⱼⱼdⱼ − Σᵢ HᵢⱼZᵢⱼ.
	dg := e.dg
	for j := 0; j < n; j++ {
		dg[j] = e.gdiag[j] * e.d[j]
	}
	for i := 0; i < p; i++ {
		hr, zr := e.h.RawRowView(i), e.z.RawRowView(i)
		for j := range hr {
			dg[j] -= hr[j] * zr[j]
		}
	}
	for i := 0; i < p; i++ {
		qr, tr := e.q.RawRowView(i), e.theta.RawRowView(i)
		gr := grad[i*n : (i+1)*n]
		for j := range qr {
			dd := 1.0 // ∂dⱼ/∂Θᵢⱼ (L1, Θ ≥ 0)
			if e.ball == l2 {
				dd = tr[j] / e.d[j]
			}
			gr[j] = -2*qr[j] + 2*dg[j]*dd
		}
	}
	return f
}

// value returns Φ at the factored Θ and leaves H = (Θ D) G for the
// gradient.
func (e *pIdentity) value() float64 {
	n, p := e.n, e.p
	scaleCols(e.td, e.theta, e.d)
	// H = (Θ D) G (p×n): G symmetric, so H = (G D Θᵀ)ᵀ.
	kernel.Gemm(blas.NoTrans, blas.NoTrans, 1, e.td.RawMatrix(), e.g, 0, e.h.RawMatrix())
	var f float64
	for j := 0; j < n; j++ {
		f += e.d[j] * e.d[j] * e.gdiag[j]
	}
	for i := 0; i < p; i++ {
		hr, zr := e.h.RawRowView(i), e.z.RawRowView(i)
		for j := range hr {
			f -= e.d[j] * hr[j] * zr[j]
		}
	}
	return f
}

// scaleCols sets dst = src·diag(d) (both p×n, contiguous).
func scaleCols(dst, src *mat.Dense, d []float64) {
	r, _ := src.Dims()
	for i := 0; i < r; i++ {
		dr, sr := dst.RawRowView(i), src.RawRowView(i)
		for j, v := range sr {
			dr[j] = v * d[j]
		}
	}
}

// pIdentityStart runs the projected L-BFGS method on Θ ≥ 0 from a seeded
// random start (Θᵢⱼ uniform in [0,1), HDMM's choice) for at most iters
// iterations and returns the optimized Θ (p×n) with the iterations taken.
func pIdentityStart(ctx context.Context, g *mat.SymDense, p int, ball ball, iters int, rng *rand.Rand, progress func(int, float64)) (*mat.Dense, int, error) {
	theta, its, _, err := pIdentityRun(ctx, g, p, ball, iters, rng, progress)
	return theta, its, err
}

// pIdentityRun is pIdentityStart that also returns the final Φ(Θ) (in G's
// scale).
func pIdentityRun(ctx context.Context, g *mat.SymDense, p int, ball ball, iters int, rng *rand.Rand, progress func(int, float64)) (*mat.Dense, int, float64, error) {
	x := make([]float64, p*g.SymmetricDim())
	for i := range x {
		x[i] = rng.Float64()
	}
	return pIdentityFrom(ctx, g, p, ball, iters, 1e-5, x, progress)
}

// pIdentityFrom runs the projected L-BFGS method on Θ ≥ 0 from x (p·n,
// row-major; overwritten) with relative stopping tolerance relTol.
func pIdentityFrom(ctx context.Context, g *mat.SymDense, p int, ball ball, iters int, relTol float64, x []float64, progress func(int, float64)) (*mat.Dense, int, float64, error) {
	e := newPIdentity(g, p, ball)
	opt := &nonnegLBFGS{mem: 10, maxIter: iters, relTol: relTol, window: 20}
	if progress != nil {
		opt.progress = func(it int, f float64) {
			if it%StepProgressEvery == 0 {
				progress(it, f)
			}
		}
	}
	phi, its, err := opt.minimize(ctx, e.eval, x)
	if err != nil {
		if ctx.Err() != nil {
			return nil, 0, 0, err
		}
		return nil, 0, 0, fmt.Errorf("lrm: p-Identity start failed: %w", err)
	}
	e.setTheta(x)
	return mat.DenseCopyOf(e.theta), its, phi, nil
}

// columnScales sets d to the ball norms of the columns of [I; Θ] (Θ ≥ 0):
// dⱼ = 1 + Σᵢ Θᵢⱼ (L1) or (1 + Σᵢ Θᵢⱼ²)^{1/2} (L2). It reports whether all
// are finite.
func columnScales(theta *mat.Dense, ball ball, d []float64) bool {
	for j := range d {
		d[j] = 0
	}
	p, _ := theta.Dims()
	for i := 0; i < p; i++ {
		for j, t := range theta.RawRowView(i) {
			if ball == l1 {
				d[j] += t
			} else {
				d[j] += t * t
			}
		}
	}
	for j := range d {
		if ball == l1 {
			d[j]++
		} else {
			d[j] = math.Sqrt(1 + d[j])
		}
		if !(d[j] <= math.MaxFloat64) {
			return false
		}
	}
	return true
}

// pIdentityPair returns the exact pair of Θ on the reduced scale: Lt = Lᵀ =
// D⁻¹[I, Θᵀ] (n×(n+p)), Br = Wr·L⁺ (k×(n+p)) and its Φ = ‖Br‖²_F, and the
// multiplier π = Wr·(LᵀL)⁻¹ (k×n) for which Br is the closed-form B-step at
// any β (π·Lᵀ = Br, the stationarity condition in B).
//
// L⁺ is applied through the Woodbury identity, which loses accuracy to
// cancellation when Θ has large entries (the optimizer merges cells that no
// query separates by driving their identity rows towards zero; Θᵢⱼ ≈ 2e4
// has been seen), so Br is refined until W̃ = Br·L holds to rounding.
func pIdentityPair(wr, theta *mat.Dense, ball ball) (lt, br, pi *mat.Dense, phi float64) {
	k, n := wr.Dims()
	p, _ := theta.Dims()
	d := make([]float64, n)
	columnScales(theta, ball, d)
	lt = mat.NewDense(n, n+p, nil)
	for j := 0; j < n; j++ {
		row := lt.RawRowView(j)
		row[j] = 1 / d[j]
		for i := 0; i < p; i++ {
			row[n+i] = theta.At(i, j) / d[j]
		}
	}
	// Z = (I + ΘΘᵀ)⁻¹Θ; X⁻¹ = I − ΘᵀZ; (LᵀL)⁻¹ = D X⁻¹ D.
	var s mat.SymDense
	s.SymOuterK(1, theta)
	for i := 0; i < p; i++ {
		s.SetSym(i, i, s.At(i, i)+1)
	}
	var ch mat.Cholesky
	z := mat.NewDense(p, n, nil)
	if ch.Factorize(&s) { // I + ΘΘᵀ ⪰ I: fails only for non-finite Θ
		_ = ch.SolveTo(z, theta)
	}
	// apply returns R·D·X⁻¹ = RD − (RDΘᵀ)Z (k×n); R·L⁺ is [A, AΘᵀ].
	apply := func(r *mat.Dense) *mat.Dense {
		rd := mat.NewDense(k, n, nil)
		for i := 0; i < k; i++ {
			src, dst := r.RawRowView(i), rd.RawRowView(i)
			for j, v := range src {
				dst[j] = v * d[j]
			}
		}
		var rt mat.Dense
		rt.Mul(rd, theta.T()) // k×p
		a := mat.NewDense(k, n, nil)
		a.Mul(&rt, z)
		a.Sub(rd, a)
		return a
	}
	a := apply(wr)
	br = mat.NewDense(k, n+p, nil)
	bl, bt := br.Slice(0, k, 0, n).(*mat.Dense), br.Slice(0, k, n, n+p).(*mat.Dense)
	bl.Copy(a)
	bt.Mul(a, theta.T())
	// Iterative refinement: Br ← Br + (W̃ − Br·L)·L⁺ while the residual
	// falls by at least half (each pass costs one k×(n+p)×n product).
	wn := mat.Norm(wr, 2)
	res := mat.NewDense(k, n, nil)
	prev := math.Inf(1)
	for pass := 0; pass < 4; pass++ {
		res.Mul(br, lt.T())
		res.Sub(wr, res)
		rel := mat.Norm(res, 2) / wn
		if rel <= 4*float64(n)*0x1p-53 || !(rel <= 0.5*prev) {
			break
		}
		prev = rel
		da := apply(res)
		bl.Add(bl, da)
		var dt mat.Dense
		dt.Mul(da, theta.T())
		bt.Add(bt, &dt)
	}
	// π = A·D from the refined A (= Wr·D·X⁻¹), so that π·Lᵀ = Br to rounding.
	pi = mat.NewDense(k, n, nil)
	for i := 0; i < k; i++ {
		src, dst := br.RawRowView(i)[:n], pi.RawRowView(i)
		for j, v := range src {
			dst[j] = v * d[j]
		}
	}
	nb := mat.Norm(br, 2)
	return lt, br, pi, nb * nb
}
