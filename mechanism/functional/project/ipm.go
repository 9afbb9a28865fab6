package project

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// innerMargin shrinks the interior-point method's cones, relative to the
// scale of each bound, so that its finite-precision solution satisfies the node
// constraints exactly.
const innerMargin = 1e-6

// ipmState holds the cone-space vectors for the working nodes.
type ipmState struct {
	p      *Projector
	work   []int
	R      int
	h      []float64 // constant parts of the shrunk cones
	sc     []ntScaling
	lambda []float64
	chol   mat.Cholesky
	refine []float64
	scr    *scratch
	// generic disables the 2-D fast paths (for tests).
	generic bool
}

// scratch holds the buffers of one solve, reused across iterations so that the
// iteration does not allocate (allocation-driven GC dominated the profile).
type scratch struct {
	B, N, full, T, M2 []float64
	fields, fieldsT   []float64
	Y, C, f           []float64
	sym               *mat.SymDense
}

func grow(b []float64, n int) []float64 {
	if cap(b) < n {
		return make([]float64, n)
	}
	b = b[:n]
	for i := range b {
		b[i] = 0
	}
	return b
}

// solve runs the interior-point method on the working nodes and returns the
// solution, the certified distance bound and the iteration count. It is the
// predictor–corrector method of CVXOPT's coneqp (Vandenberghe 2010, "The
// CVXOPT linear and quadratic cone program solvers") with Nesterov–Todd
// scaling, for min ½‖x − c̃‖² s.t. Gx + s = h, s in the shrunk cones.
func (p *Projector) solve(ct []float64, work []int) ([]float64, float64, int, error) {
	st := p.newIPM(work)
	v, err := st.start(ct)
	if err != nil {
		return nil, 0, 0, err
	}
	hn := math.Max(1, maxAbs(st.h))
	cn := math.Max(1, maxAbs(ct))
	// The iterates of a degenerate problem (many redundant active cones) lose
	// accuracy once the scaling becomes extreme; keep the best one seen.
	var best struct {
		x, z  []float64
		score float64
	}
	best.score = math.Inf(1)
	// When the iteration stalls short of the tolerance (rounding in a
	// degenerate problem), the best iterate is accepted if it is within 100×
	// the tolerance; its distance to the exact projection is certified anyway.
	accept := func(it int, reason error) ([]float64, float64, int, error) {
		if best.x != nil && best.score <= 100*p.tol {
			return best.x, st.certificate(ct, best.x, best.z), it, nil
		}
		return nil, 0, it, reason
	}
	x, z := v.x, v.z
	for it := 0; it < p.iters; it++ {
		gap, pcost := st.residuals(v, ct)
		pres := maxAbs(v.rz) / hn
		dres := maxAbs(v.rx) / cn
		// Relative to the objective ½‖x − c̃‖² (floored at 1e-12): a small move
		// needs a small absolute gap for its certificate to be meaningful.
		rgap := gap / math.Max(1e-12, pcost)
		if math.IsNaN(pres + dres + rgap) {
			return accept(it, fmt.Errorf("%w: NaN in the interior-point iteration", ErrNotConverged))
		}
		if score := math.Max(math.Max(pres, dres), rgap); score < best.score {
			best.score = score
			best.x = append(best.x[:0], x...)
			best.z = append(best.z[:0], z...)
		}
		if pres <= p.tol && dres <= p.tol && rgap <= p.tol {
			return x, st.certificate(ct, x, z), it, nil
		}
		if !st.scale(v) {
			return accept(it, fmt.Errorf("%w: iterate left the cone interior (iteration %d, pres %.2g, dres %.2g, gap %.2g)", ErrNotConverged, it, pres, dres, gap))
		}
		if err := st.factor(st.nodeBlocks(false)); err != nil {
			return accept(it, err)
		}
		st.predictorCorrector(v, gap, gap/float64(len(st.sc)))
	}
	return accept(p.iters, fmt.Errorf("%w: %d interior-point iterations", ErrNotConverged, p.iters))
}

// ipmIterate is the primal–dual point (x, s, z) and the buffers of one
// solve, allocated once.
type ipmIterate struct {
	x, s, z, Gx   []float64
	rx, rz, rs    []float64 // residuals and the complementarity right-hand side
	dx, ds, dz    []float64 // the affine (predictor) direction
	dx2, ds2, dz2 []float64 // the combined (corrector) direction
	tmpR, tmpR2   []float64
	tmpK          []float64
}

// newIPM sets up the cones of the working nodes, shrunk by innerMargin so
// that the finite-precision solution satisfies the node bounds exactly.
func (p *Projector) newIPM(work []int) *ipmState {
	l := p.cones
	st := &ipmState{p: p, work: work, R: len(work) * l.nr, scr: &scratch{}}
	r := (p.node.Beta - p.node.Alpha) / 2
	shr := Set{Alpha: p.node.Alpha + innerMargin*r, Beta: p.node.Beta - innerMargin*r, U: p.node.U * (1 - innerMargin)}
	hs := l.hvec(shr)
	st.h = make([]float64, st.R)
	for a := range work {
		copy(st.h[a*l.nr:], hs)
	}
	return st
}

// start returns CVXOPT's initial point: x from (I + GᵀG) x = c̃ + Gᵀh,
// s = h − Gx, z = −s, both shifted into the cone interiors.
func (st *ipmState) start(ct []float64) (*ipmIterate, error) {
	R, K := st.R, st.p.K
	if err := st.factor(st.nodeBlocks(true)); err != nil {
		return nil, err
	}
	v := &ipmIterate{x: make([]float64, K), tmpK: make([]float64, K),
		s: make([]float64, R), z: make([]float64, R), Gx: make([]float64, R)}
	st.applyGt(st.h, v.tmpK)
	for k := range v.tmpK {
		v.tmpK[k] += ct[k]
	}
	st.cholSolve(v.tmpK, v.x)
	st.applyG(v.x, v.Gx)
	for i := range v.s {
		v.s[i] = st.h[i] - v.Gx[i]
		v.z[i] = -v.s[i]
	}
	shift := func(u []float64) {
		worst := math.Inf(-1)
		st.eachCone(u, func(c []float64) { worst = math.Max(worst, -minEig(c)) })
		if worst >= -1e-8*math.Max(1, math.Sqrt(sq(u))) {
			st.eachCone(u, func(c []float64) { c[0] += 1 + worst })
		}
	}
	shift(v.s)
	shift(v.z)
	st.sc = make([]ntScaling, len(st.work)*len(st.p.cones.dims))
	st.lambda = make([]float64, R)
	st.refine = make([]float64, K)
	v.rx, v.rz, v.rs = make([]float64, K), make([]float64, R), make([]float64, R)
	v.dx, v.ds, v.dz = make([]float64, K), make([]float64, R), make([]float64, R)
	v.dx2, v.ds2, v.dz2 = make([]float64, K), make([]float64, R), make([]float64, R)
	v.tmpR, v.tmpR2 = make([]float64, R), make([]float64, R)
	return v, nil
}

// residuals sets the dual residual rx = x − c̃ + Gᵀz and the primal one
// rz = Gx + s − h, and returns the gap sᵀz and the primal cost ½‖x − c̃‖².
func (st *ipmState) residuals(v *ipmIterate, ct []float64) (gap, pcost float64) {
	x, s, z := v.x, v.s, v.z
	st.applyG(x, v.Gx)
	st.applyGt(z, v.rx)
	for k := range v.rx {
		v.rx[k] += x[k] - ct[k]
	}
	for i := range v.rz {
		v.rz[i] = v.Gx[i] + s[i] - st.h[i]
	}
	for i := range s {
		gap += s[i] * z[i]
	}
	for k := range x {
		pcost += (x[k] - ct[k]) * (x[k] - ct[k]) / 2
	}
	return gap, pcost
}

// scale computes the Nesterov–Todd scaling of every cone at (s, z) and
// λ = W z; false when an iterate has left a cone's interior.
func (st *ipmState) scale(v *ipmIterate) bool {
	ok := true
	st.eachPair(v.s, v.z, func(c int, sc, zc []float64) {
		var good bool
		st.sc[c], good = newNT(sc, zc)
		ok = ok && good
	})
	if !ok {
		return false
	}
	st.eachCone3(v.z, st.lambda, nil, func(c int, zc, lc, _ []float64) { st.sc[c].apply(zc, lc, false) })
	return true
}

// predictorCorrector takes one Mehrotra step from v, whose gap sᵀz is gap
// and complementarity μ = mu: the affine direction, the centring σ it implies, the corrected
// direction, and 99% of the step to the cones' boundary (at most 1).
func (st *ipmState) predictorCorrector(v *ipmIterate, gap, mu float64) {
	x, s, z := v.x, v.s, v.z
	rs, ds, dz := v.rs, v.ds, v.dz
	tmpR, tmpR2 := v.tmpR, v.tmpR2
	// Predictor: rs = −λ∘λ.
	st.eachCone3(st.lambda, rs, nil, func(_ int, lc, rc, _ []float64) {
		jordan(lc, lc, rc)
		for i := range rc {
			rc[i] = -rc[i]
		}
	})
	st.newton(v.rx, v.rz, rs, v.dx, ds, dz, tmpR, tmpR2, v.tmpK)
	aff := math.Min(1, math.Min(st.maxStep(s, ds), st.maxStep(z, dz)))
	// Mehrotra's centring: σ = (μ_aff/μ)³ with μ_aff the complementarity
	// after the affine step.
	gapAff := 0.0
	for i := range s {
		gapAff += (s[i] + aff*ds[i]) * (z[i] + aff*dz[i])
	}
	sigma := math.Pow(math.Max(0, math.Min(1, gapAff/gap)), 3)
	// Corrector: rs = −λ∘λ − (W⁻¹Δs)∘(WΔz) + σμe.
	st.eachCone3(ds, tmpR, nil, func(c int, a, b, _ []float64) { st.sc[c].apply(a, b, true) })
	st.eachCone3(dz, tmpR2, nil, func(c int, a, b, _ []float64) { st.sc[c].apply(a, b, false) })
	corr := make([]float64, 3)
	st.eachCone3(st.lambda, rs, tmpR, func(c int, lc, rc, a []float64) {
		jordan(lc, lc, rc)
		off := st.coneOffset(c)
		b := tmpR2[off : off+len(lc)]
		jordan(a, b, corr[:len(lc)])
		for i := range rc {
			rc[i] = -rc[i] - corr[i]
		}
		rc[0] += sigma * mu
	})
	st.newton(v.rx, v.rz, rs, v.dx2, v.ds2, v.dz2, tmpR, tmpR2, v.tmpK)
	step := math.Min(1, 0.99*math.Min(st.maxStep(s, v.ds2), st.maxStep(z, v.dz2)))
	for k := range x {
		x[k] += step * v.dx2[k]
	}
	for i := range s {
		s[i] += step * v.ds2[i]
		z[i] += step * v.dz2[i]
	}
}

func maxAbs(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}

// newton solves the scaled Newton system for right-hand sides (rx, rz, rs):
// u = λ⊘rs, t = rz + W u, (I + GᵀW⁻²G)Δx = −rx − GᵀW⁻²t, Δz = W⁻²(GΔx + t),
// Δs = W(u − WΔz).
func (st *ipmState) newton(rx, rz, rs, dx, ds, dz, u, t, tmpK []float64) {
	st.eachCone3(st.lambda, rs, u, func(_ int, lc, rc, uc []float64) { arwInv(lc, rc, uc) })
	st.eachCone3(u, t, nil, func(c int, uc, tc, _ []float64) { st.sc[c].apply(uc, tc, false) })
	for i := range t {
		t[i] += rz[i]
	}
	// W⁻² t = W⁻¹(W⁻¹ t), into dz as scratch.
	st.eachCone3(t, dz, nil, func(c int, tc, oc, _ []float64) {
		st.sc[c].apply(tc, oc, true)
		st.sc[c].apply(oc, oc, true)
	})
	st.applyGt(dz, tmpK)
	for k := range tmpK {
		tmpK[k] = -rx[k] - tmpK[k]
	}
	st.cholSolve(tmpK, dx)
	st.applyG(dx, dz)
	for i := range dz {
		dz[i] += t[i]
	}
	st.eachCone3(dz, dz, nil, func(c int, a, b, _ []float64) {
		st.sc[c].apply(a, b, true)
		st.sc[c].apply(b, b, true)
	})
	// Δs = W(u − WΔz).
	st.eachCone3(dz, ds, nil, func(c int, a, b, _ []float64) { st.sc[c].apply(a, b, false) })
	for i := range ds {
		ds[i] = u[i] - ds[i]
	}
	st.eachCone3(ds, ds, nil, func(c int, a, b, _ []float64) { st.sc[c].apply(a, b, false) })
}

// coneOffset returns the offset of cone c in a cone-space vector.
func (st *ipmState) coneOffset(c int) int {
	l := st.p.cones
	nc := len(l.dims)
	off := (c / nc) * l.nr
	for i := 0; i < c%nc; i++ {
		off += l.dims[i]
	}
	return off
}

func (st *ipmState) eachCone(v []float64, fn func(c []float64)) {
	l := st.p.cones
	for a := range st.work {
		off := a * l.nr
		for _, n := range l.dims {
			fn(v[off : off+n])
			off += n
		}
	}
}

func (st *ipmState) eachPair(s, z []float64, fn func(c int, sc, zc []float64)) {
	l := st.p.cones
	c := 0
	for a := range st.work {
		off := a * l.nr
		for _, n := range l.dims {
			fn(c, s[off:off+n], z[off:off+n])
			off += n
			c++
		}
	}
}

// eachCone3 calls fn for every cone with the matching slices of up to three
// cone-space vectors (nil vectors give nil slices).
func (st *ipmState) eachCone3(a, b, c []float64, fn func(i int, ac, bc, cc []float64)) {
	l := st.p.cones
	i := 0
	for w := range st.work {
		off := w * l.nr
		for _, n := range l.dims {
			var cs []float64
			if c != nil {
				cs = c[off : off+n]
			}
			fn(i, a[off:off+n], b[off:off+n], cs)
			off += n
			i++
		}
	}
}

func (st *ipmState) maxStep(x, dx []float64) float64 {
	best := math.Inf(1)
	l := st.p.cones
	for a := range st.work {
		off := a * l.nr
		for _, n := range l.dims {
			best = math.Min(best, maxStep(x[off:off+n], dx[off:off+n]))
			off += n
		}
	}
	return best
}

// certificate returns √(2(P(x) − D(z))) with D(z) = zᵀ(G c̃ − h) − ½‖Gᵀz‖², h
// the shrunk bounds the solver targets: by weak duality and the strong
// convexity of P it bounds ‖x − x*‖ for the exact projection x* onto the
// shrunk node set, up to x's primal residual (≤ the tolerance).
func (st *ipmState) certificate(ct, x, z []float64) float64 {
	Gc := make([]float64, st.R)
	st.applyG(ct, Gc)
	Gtz := make([]float64, st.p.K)
	st.applyGt(z, Gtz)
	D := -sq(Gtz) / 2
	for i := range z {
		D += z[i] * (Gc[i] - st.h[i])
	}
	P := 0.0
	for k := range x {
		P += (x[k] - ct[k]) * (x[k] - ct[k]) / 2
	}
	return math.Sqrt(2 * math.Max(0, P-D))
}
