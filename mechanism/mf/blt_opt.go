package mf

import (
	"context"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"
)

// BLTOptions configures OptimizeBLT.
type BLTOptions struct {
	// MaxBuffers caps d (0: 8). Buffers are added one at a time while the
	// loss falls by at least MinGain (relative) per buffer, as jax_privacy
	// does, and never beyond MaxBuffers: the noise state is d model-sized
	// vectors. A buffer that gains less than MinGain is not kept
	// (BLTResult.Losses still lists the loss it reached).
	MaxBuffers int
	// MinGain is the relative loss decrease a further buffer must bring
	// (0: 0.01).
	MinGain float64
	// Max optimizes the largest per-step error instead of the mean.
	Max bool
	// MaxIter caps the Newton iterations per buffer count (0: 200).
	MaxIter int
	// Progress, if not nil, receives a line per buffer count.
	Progress func(format string, a ...any)
}

// BLTResult is an optimized BLT with its score.
type BLTResult struct {
	BLT *BLT
	// Loss is the optimized loss: mean (or max) per-step squared error ×
	// sens², per unit noise variance σ².
	Loss float64
	// Losses[d−1] is the best loss found with d buffers.
	Losses []float64
	// Iterations counts Newton iterations over all buffer counts.
	Iterations int
	Seconds    float64
}

const maxBLTBuffers = 8

// OptimizeBLT finds a BLT strategy for n steps of the workload under the
// schema, minimizing log(sens²) + log(error) (the loss's logarithm: scale
// free) over the 2d decays by Newton's method with exact first and second
// derivatives. The decays are kept interlaced, θ₁ > θ̂₁ > θ₂ > … > θ̂_d > 0,
// through unconstrained parameters qⱼ with aⱼ = −log(1 − xⱼ) (x the
// decays in that order), a_{2d} = e^{q_{2d}}, aⱼ = aⱼ₊₁ + e^{qⱼ}: every
// iterate has ω ≥ 0 and non-increasing, non-negative coefficients (so its
// sensitivity is exact), and decays near 1 are resolved to relative
// precision in 1 − θ. Each evaluation costs O(n·d²) time and O(d²) memory.
// A non-convex loss is handled by saddle-free Newton steps (the Hessian's
// eigenvalues replaced by their absolute values) with a backtracking line
// search.
func OptimizeBLT(ctx context.Context, w ToeplitzWorkload, n int, s Schema, opt *BLTOptions) (*BLTResult, error) {
	if opt == nil {
		opt = &BLTOptions{}
	}
	if n < 2 || n > MaxToeplitzSteps {
		return nil, inputErr("number of steps n = %d outside [2, %d] for a BLT", n, MaxToeplitzSteps)
	}
	if err := s.validate(n, MaxToeplitzSteps); err != nil {
		return nil, err
	}
	dmax := opt.MaxBuffers
	if dmax == 0 {
		dmax = maxBLTBuffers
	}
	if dmax < 1 || dmax > maxBLTBuffers {
		return nil, inputErr("buffers %d outside [1, %d]", dmax, maxBLTBuffers)
	}
	gain := opt.MinGain
	if gain == 0 {
		gain = 0.01
	}
	start := time.Now()
	lf := &bltLoss{w: w, n: n, s: s, max: opt.Max}
	res := &BLTResult{}
	var bestA []float64
	for d := 1; d <= dmax; d++ {
		starts := [][]float64{coldStart(n, d)}
		if bestA != nil {
			starts = append(starts, warmStart(bestA))
		}
		var dA []float64
		dLoss := math.Inf(1)
		for _, a0 := range starts {
			a, f, it, err := lf.newton(ctx, a0, opt.MaxIter)
			res.Iterations += it
			if err != nil {
				return nil, err
			}
			if f < dLoss {
				dA, dLoss = a, f
			}
		}
		loss := math.Exp(dLoss)
		res.Losses = append(res.Losses, loss)
		if opt.Progress != nil {
			opt.Progress("BLT d = %d: loss %.6g (%.2f s)", d, loss, time.Since(start).Seconds())
		}
		// The documented rule: a further buffer is kept only if it lowers
		// the loss by at least MinGain; one that gains less (or nothing)
		// is dropped, since it would cost a model-sized noise buffer.
		if bestA != nil && loss > res.Loss*(1-gain) {
			break
		}
		bestA, res.Loss = dA, loss
	}
	b, err := newBLTComplement(decaysOf(bestA))
	if err != nil {
		return nil, err
	}
	res.BLT = b
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// coldStart spreads the 2d decays' aⱼ = −log(1 − xⱼ) evenly in (0, log n].
func coldStart(n, d int) []float64 {
	p := 2 * d
	a := make([]float64, p)
	for j := range a {
		a[j] = math.Log(float64(n)) * float64(p-j) / float64(p)
	}
	return a
}

// warmStart adds a pair of faster decays below the last one.
func warmStart(a []float64) []float64 {
	last := a[len(a)-1]
	return append(append([]float64(nil), a...), last/2, last/4)
}

// decaysOf maps a (decreasing) to the complements 1 − θ (even positions)
// and 1 − θ̂ (odd), after the cap ã = A·(1 − e^{−a/A}).
func decaysOf(a []float64) (mTheta, mInv []float64) {
	for j, aj := range a {
		m := math.Exp(aCap * math.Expm1(-aj/aCap))
		if j%2 == 0 {
			mTheta = append(mTheta, m)
		} else {
			mInv = append(mInv, m)
		}
	}
	return mTheta, mInv
}

func aToQ(a []float64) []float64 {
	p := len(a)
	q := make([]float64, p)
	q[p-1] = math.Log(a[p-1])
	for j := 0; j < p-1; j++ {
		q[j] = math.Log(a[j] - a[j+1])
	}
	return q
}

func qToA(q []float64) []float64 {
	p := len(q)
	a := make([]float64, p)
	a[p-1] = math.Exp(q[p-1])
	for j := p - 2; j >= 0; j-- {
		a[j] = a[j+1] + math.Exp(q[j])
	}
	return a
}

type bltLoss struct {
	w   ToeplitzWorkload
	n   int
	s   Schema
	max bool
}

// zJets maps q (2d) to jets of z = (θ, ω, θ̂, ω̂) (4d), each with its
// exact gradient and Hessian in q. Differences of decays near 1 are formed
// as xᵢ − xₗ = −e^{−aₗ}·expm1(−(aᵢ − aₗ)) with aᵢ − aₗ a sum of e^{q}, so
// they keep relative precision.
func zJets(q []float64) ([]jet, []jet) {
	p := len(q)
	d := p / 2
	eq := make([]jet, p)
	for j := range q {
		eq[j] = jexp(jetVar(p, j, q[j]))
	}
	a := make([]jet, p)
	a[p-1] = eq[p-1]
	for j := p - 2; j >= 0; j-- {
		a[j] = jadd(a[j+1], eq[j])
	}
	// The capped ã = A·(1 − e^{−a/A}) < A = aCap keeps 1 − θ ≥ e^{−A}
	// (representable next to 1); m = 1 − x = e^{−ã}.
	x := make([]jet, p)
	m := make([]jet, p) // 1 − x
	capped := make([]jet, p)
	for j := range x {
		capped[j] = jscale(jexpm1(jscale(a[j], -1/aCap)), -aCap)
		m[j] = jexp(jneg(capped[j]))
		x[j] = jneg(jexpm1(jneg(capped[j])))
	}
	// diff(i, l) = x_i − x_l.
	diff := func(i, l int) jet {
		if i > l {
			return jneg(diffPos(eq, a, m, l, i))
		}
		return diffPos(eq, a, m, i, l)
	}
	z := make([]jet, 4*d)
	for i := 0; i < d; i++ {
		z[i] = x[2*i]
		z[2*d+i] = x[2*i+1]
		om := newJet(p, 1)
		io := newJet(p, 1)
		for l := 0; l < d; l++ {
			om = jmul(om, diff(2*i, 2*l+1))
			io = jmul(io, diff(2*i+1, 2*l))
			if l != i {
				om = jdiv(om, diff(2*i, 2*l))
				io = jdiv(io, diff(2*i+1, 2*l+1))
			}
		}
		z[d+i], z[3*d+i] = om, io
	}
	return z, m
}

// diffPos is x_i − x_l > 0 for i < l: with the raw gap a_i − a_l a sum of
// e^{q}, the capped gap is ã_i − ã_l = A·e^{−a_l/A}·(1 − e^{−(a_i−a_l)/A})
// and x_i − x_l = m_l·(1 − e^{−(ã_i − ã_l)}), all without cancellation.
func diffPos(eq, a, m []jet, i, l int) jet {
	gap := eq[i]
	for j := i + 1; j < l; j++ {
		gap = jadd(gap, eq[j])
	}
	cg := jscale(jmul(jexp(jscale(a[l], -1/aCap)), jexpm1(jscale(gap, -1/aCap))), -aCap)
	return jneg(jmul(m[l], jexpm1(jneg(cg))))
}

// aCap caps −log(1 − θ): 1 − θ ≥ e^{−30} ≈ 9.4e-14.
const aCap = 30.0

// eval returns f = log(sens²) + log(error) at q with its gradient and
// Hessian in q, or f = +Inf where the loss is not finite. The
// sensitivity, and the prefix workload's error, are closed forms in O(k·d²)
// jet operations (sensJet, prefixErrJet), independent of n; the momentum
// error is an O(n·d²) sum with hand-carried derivatives (errDerivs).
func (l *bltLoss) eval(q []float64, derivs bool) (float64, []float64, *mat.SymDense) {
	p := len(q)
	d := p / 2
	z, m := zJets(q)
	for i := range z {
		if !finite(z[i].v) {
			return math.Inf(1), nil, nil
		}
	}
	k, b := l.s.Participations(l.n), l.s.Period(l.n)
	mt, mi := make([]jet, d), make([]jet, d)
	for i := 0; i < d; i++ {
		mt[i], mi[i] = m[2*i], m[2*i+1]
	}
	S := sensJet(mt, z[d:2*d], l.n, k, b)
	var E jet
	if l.w.Beta == 0 {
		E = prefixErrJet(mt, mi, z[3*d:], l.n, l.max)
	} else {
		weight := func(j int) float64 { return float64(l.n-j) / float64(l.n) }
		if l.max {
			weight = func(int) float64 { return 1 }
		}
		vals := make([]float64, 2*d)
		for i := range vals {
			vals[i] = z[2*d+i].v
		}
		if derivs {
			ev, eg, eh := errDerivs(vals[:d], vals[d:], l.n, l.w.Beta, weight)
			E = chainJet(ev, eg, eh, z[2*d:])
		} else {
			E = newJet(p, errValue(vals[:d], vals[d:], l.n, l.w.Beta, weight))
		}
	}
	if !(S.v > 0) || !(E.v > 0) || !finite(S.v, E.v) {
		return math.Inf(1), nil, nil
	}
	f := jadd(jlog(S), jlog(E))
	if !finite(f.v) {
		return math.Inf(1), nil, nil
	}
	if !derivs {
		return f.v, nil, nil
	}
	h := mat.NewSymDense(p, nil)
	for i := 0; i < p; i++ {
		for j := i; j < p; j++ {
			h.SetSym(i, j, f.h[i*p+j])
		}
	}
	return f.v, f.g, h
}

// chainJet turns a value v with gradient g and Hessian h (row-major) in
// local coordinates into a jet in q, given the local coordinates' jets.
func chainJet(v float64, g, h []float64, loc []jet) jet {
	p := loc[0].p()
	m := len(loc)
	out := newJet(p, v)
	for a := 0; a < m; a++ {
		for i := 0; i < p; i++ {
			out.g[i] += g[a] * loc[a].g[i]
		}
		for i := range out.h {
			out.h[i] += g[a] * loc[a].h[i]
		}
		for c := 0; c < m; c++ {
			hac := h[a*m+c]
			if hac == 0 {
				continue
			}
			for i := 0; i < p; i++ {
				for j := 0; j < p; j++ {
					out.h[i*p+j] += hac * loc[a].g[i] * loc[c].g[j]
				}
			}
		}
	}
	return out
}

// geom1 is Σ_{j<N} ρʲ for ρ = 1 − u (u ∈ (0, 1]): −expm1(N·log1p(−u))/u,
// accurate to a few ulps for every u, however small.
func geom1(u jet, N int) jet {
	if N <= 0 {
		return newJet(u.p(), 0)
	}
	if u.v > 0.5 {
		// ρ ≤ 1/2: no cancellation in 1 − ρᴺ, and log1p(−u) would lose
		// its derivatives where ρ underflows.
		rho := jaddc(jneg(u), 1)
		return jdiv(jaddc(jneg(jpowi(rho, N)), 1), u)
	}
	l := jlog1p(jneg(u))
	return jneg(jdiv(jexpm1(jscale(l, float64(N))), u))
}

// jpowi is aᴺ for an integer N ≥ 1.
func jpowi(a jet, N int) jet {
	nf := float64(N)
	f1, f2 := 1.0, 0.0
	if N >= 2 {
		f1 = nf * math.Pow(a.v, nf-1)
	}
	if N >= 3 {
		f2 = nf * (nf - 1) * math.Pow(a.v, nf-2)
	} else if N == 2 {
		f2 = 2
	}
	return junary(a, math.Pow(a.v, nf), f1, f2)
}

// geom2 is Σ_{j<N} (N − j)·ρʲ for ρ = 1 − u: (N·u + ρ·expm1(N·ℓ))/u² with
// ℓ = log ρ, whose numerator cancels to relative precision ε/(N·u); below
// N·u = 1e-3 it is the series Σ_m ℓᵐ/m!·S_m, S_m = Σ_{j<N}(N − j)·jᵐ
// (terms to m = 4: the remainder is below (N·ℓ)⁵/5! ≈ 1e-17).
func geom2(u jet, N int) jet {
	p := u.p()
	if N <= 0 {
		return newJet(p, 0)
	}
	nf := float64(N)
	if u.v > 0.5 {
		// Σ_{j<N}(N − j)ρʲ = (N − ρ·(1 − ρᴺ)/(1 − ρ))/(1 − ρ), no
		// cancellation for ρ ≤ 1/2.
		rho := jaddc(jneg(u), 1)
		g1 := jdiv(jaddc(jneg(jpowi(rho, N)), 1), u)
		return jdiv(jaddc(jneg(jmul(rho, g1)), nf), u)
	}
	l := jlog1p(jneg(u))
	if nf*u.v >= 1e-3 {
		num := jadd(jscale(u, nf), jmul(jaddc(jneg(u), 1), jexpm1(jscale(l, nf))))
		return jdiv(num, jmul(u, u))
	}
	// Power sums P_m = Σ_{j<N} jᵐ (Faulhaber, M = N − 1) and S_m = N·P_m − P_{m+1}.
	M := nf - 1
	P := []float64{nf, M * (M + 1) / 2, M * (M + 1) * (2*M + 1) / 6, math.Pow(M*(M+1)/2, 2),
		M * (M + 1) * (2*M + 1) * (3*M*M + 3*M - 1) / 30,
		M * M * (M + 1) * (M + 1) * (2*M*M + 2*M - 1) / 12}
	out := newJet(p, 0)
	term := newJet(p, 1) // ℓᵐ/m!
	for mm := 0; mm <= 4; mm++ {
		S := nf*P[mm] - P[mm+1]
		out = jadd(out, jscale(term, S))
		term = jscale(jmul(term, l), 1/float64(mm+1))
	}
	return out
}

// oneMinusProd is 1 − (1 − a)(1 − b) = a + b − a·b.
func oneMinusProd(a, b jet) jet { return jadd(jadd(a, b), jneg(jmul(a, b))) }

// sensJet is sens² of the BLT with decays θ = 1 − mθ and scales ω under
// the pattern {0, b, …} with K = min(k, ⌈n/b⌉) uses, in closed form: on
// the steps after use u_m and up to the next use, y_t = Σ_l ω_l·A_{l,m}·
// θ_l^(t−1−u_m) with A_{l,m} = Σ_{i≤m} θ_l^(ib), whose squares sum to
// Σ_{l,l'} (ω_l A_{l,m})(ω_{l'} A_{l',m})·Σ_s (θ_lθ_{l'})^s; at the use
// itself y = 1 + Σ_l ω_l θ_l^(b−1) A_{l,m−1}. Every term is non-negative,
// so nothing cancels.
func sensJet(mt, omega []jet, n, k, b int) jet {
	d := len(mt)
	p := mt[0].p()
	K := min(k, (n+b-1)/b)
	ub := make([]jet, d)   // 1 − θ^b
	thb1 := make([]jet, d) // θ^(b−1)
	for l := 0; l < d; l++ {
		lg := jlog1p(jneg(mt[l]))
		ub[l] = jneg(jexpm1(jscale(lg, float64(b))))
		thb1[l] = jexpScaled(lg, float64(b-1))
	}
	S := newJet(p, 0)
	for mm := 0; mm < K; mm++ {
		y := newJet(p, 1)
		if mm > 0 {
			for l := 0; l < d; l++ {
				y = jadd(y, jmul(omega[l], jmul(thb1[l], geom1(ub[l], mm))))
			}
		}
		S = jadd(S, jmul(y, y))
		end := n - 1
		if mm < K-1 {
			end = (mm+1)*b - 1
		}
		L := end - mm*b
		if L <= 0 {
			continue
		}
		c := make([]jet, d)
		for l := 0; l < d; l++ {
			c[l] = jmul(omega[l], geom1(ub[l], mm+1))
		}
		for l := 0; l < d; l++ {
			for l2 := l; l2 < d; l2++ {
				t := jmul(jmul(c[l], c[l2]), geom1(oneMinusProd(mt[l], mt[l2]), L))
				if l2 != l {
					t = jscale(t, 2)
				}
				S = jadd(S, t)
			}
		}
	}
	return S
}

// prefixErrJet is the prefix workload's error Σ_j w_j s_j² (w_j = (n−j)/n
// for the mean, 1 for the max) in closed form: the decoder's coefficients
// are s_j = s_∞ + Σᵢ γᵢ θ̂ᵢʲ with s_∞ = C⁻¹(1) = Πₗ(1−θₗ)/Πₗ(1−θ̂ₗ) and
// γᵢ = −ω̂ᵢ/(1 − θ̂ᵢ) (partial fractions of r(z)/(1 − z)), so the sum is
// a combination of geometric sums Σ_j w_j ρʲ.
func prefixErrJet(mt, mi, invOmega []jet, n int, max bool) jet {
	d := len(mt)
	p := mt[0].p()
	sinf := newJet(p, 1)
	for l := 0; l < d; l++ {
		sinf = jdiv(jmul(sinf, mt[l]), mi[l])
	}
	gam := make([]jet, d)
	for i := range gam {
		gam[i] = jneg(jdiv(invOmega[i], mi[i]))
	}
	sum := func(u jet) jet {
		if max {
			return geom1(u, n)
		}
		return geom2(u, n)
	}
	var E jet
	if max {
		E = jscale(jmul(sinf, sinf), float64(n))
	} else {
		E = jscale(jmul(sinf, sinf), float64(n)*float64(n+1)/2)
	}
	for i := 0; i < d; i++ {
		E = jadd(E, jscale(jmul(jmul(sinf, gam[i]), sum(mi[i])), 2))
		for l := i; l < d; l++ {
			t := jmul(jmul(gam[i], gam[l]), sum(oneMinusProd(mi[i], mi[l])))
			if l != i {
				t = jscale(t, 2)
			}
			E = jadd(E, t)
		}
	}
	if !max {
		E = jscale(E, 1/float64(n))
	}
	return E
}

// sensDerivs returns sens² = Σ_t y_t², y_t = Σ_{pattern uses u ≤ t} c_{t−u}
// (pattern {0, b, …} with k uses: exact for these non-negative,
// non-increasing coefficients), with its gradient and Hessian in
// (θ₁…θ_d, ω₁…ω_d). Y_l(t) = Σ_{u<t} θ_l^{t−1−u} and its first two
// θ-derivatives are carried by their recurrences.
func sensDerivs(theta, omega []float64, n, k, b int) (float64, []float64, []float64) {
	d := len(theta)
	p := 2 * d
	Y, Y1, Y2 := make([]float64, d), make([]float64, d), make([]float64, d)
	gy := make([]float64, p)
	S, gS, hS := 0.0, make([]float64, p), make([]float64, p*p)
	uses := 0
	for t := 0; t < n; t++ {
		hit := 0.0
		if t%b == 0 && uses < k {
			hit = 1
			uses++
		}
		y := hit
		for i := 0; i < d; i++ {
			y += omega[i] * Y[i]
			gy[i] = omega[i] * Y1[i]
			gy[d+i] = Y[i]
		}
		S += y * y
		for i := 0; i < p; i++ {
			gi := gy[i]
			gS[i] += 2 * y * gi
			row := hS[i*p:]
			for j := i; j < p; j++ {
				row[j] += 2 * gi * gy[j]
			}
		}
		for i := 0; i < d; i++ {
			hS[i*p+i] += 2 * y * omega[i] * Y2[i]
			hS[i*p+d+i] += 2 * y * Y1[i]
			th := theta[i]
			Y2[i] = 2*Y1[i] + th*Y2[i]
			Y1[i] = Y[i] + th*Y1[i]
			Y[i] = th*Y[i] + hit
		}
	}
	symmetrize(hS, p)
	return S, gS, hS
}

// errDerivs returns E = Σ_j weight(j)·s_j² with s = a ∗ r the decoder's
// coefficients (r the inverse BLT's: r₀ = 1, r_j = Σ ω̂ᵢ θ̂ᵢ^(j−1)), with
// gradient and Hessian in (θ̂₁…θ̂_d, ω̂₁…ω̂_d).
func errDerivs(theta, omega []float64, n int, beta float64, weight func(int) float64) (float64, []float64, []float64) {
	d := len(theta)
	p := 2 * d
	pw, P1, P2 := make([]float64, d), make([]float64, d), make([]float64, d)
	for i := range pw {
		pw[i] = 1
	}
	// g = momentum-filtered r, s = its running sum, each with gradient and
	// the Hessian's 2×2 blocks (θ̂θ̂, θ̂ω̂) per buffer (ω̂ω̂ is zero).
	gv, sv := 0.0, 0.0
	gg, sg := make([]float64, p), make([]float64, p)
	gtt, gto, stt, sto := make([]float64, d), make([]float64, d), make([]float64, d), make([]float64, d)
	E, gE, hE := 0.0, make([]float64, p), make([]float64, p*p)
	for j := 0; j < n; j++ {
		gv *= beta
		for i := range gg {
			gg[i] *= beta
		}
		for i := 0; i < d; i++ {
			gtt[i] *= beta
			gto[i] *= beta
		}
		if j == 0 {
			gv++
		} else {
			for i := 0; i < d; i++ {
				gv += omega[i] * pw[i]
				gg[i] += omega[i] * P1[i]
				gg[d+i] += pw[i]
				gtt[i] += omega[i] * P2[i]
				gto[i] += P1[i]
				th := theta[i]
				P2[i] = 2*P1[i] + th*P2[i]
				P1[i] = pw[i] + th*P1[i]
				pw[i] *= th
			}
		}
		sv += gv
		for i := range sg {
			sg[i] += gg[i]
		}
		for i := 0; i < d; i++ {
			stt[i] += gtt[i]
			sto[i] += gto[i]
		}
		wj := weight(j)
		E += wj * sv * sv
		for i := 0; i < p; i++ {
			gi := 2 * wj * sg[i]
			gE[i] += gi * sv
			row := hE[i*p:]
			for k := i; k < p; k++ {
				row[k] += gi * sg[k]
			}
		}
		for i := 0; i < d; i++ {
			hE[i*p+i] += 2 * wj * sv * stt[i]
			hE[i*p+d+i] += 2 * wj * sv * sto[i]
		}
	}
	symmetrize(hE, p)
	return E, gE, hE
}

// errValue is errDerivs's value alone, O(n·d), for line-search trials.
func errValue(theta, omega []float64, n int, beta float64, weight func(int) float64) float64 {
	pw := make([]float64, len(theta))
	for i := range pw {
		pw[i] = 1
	}
	g, s, E := 0.0, 0.0, 0.0
	for j := 0; j < n; j++ {
		g *= beta
		if j == 0 {
			g++
		} else {
			for i, th := range theta {
				g += omega[i] * pw[i]
				pw[i] *= th
			}
		}
		s += g
		E += weight(j) * s * s
	}
	return E
}

// symmetrize copies the upper triangle of the p×p row-major h to the lower.
func symmetrize(h []float64, p int) {
	for i := 0; i < p; i++ {
		for j := 0; j < i; j++ {
			h[i*p+j] = h[j*p+i]
		}
	}
}

// newton minimizes f from a0 (decreasing a-values); it returns the final
// a, f and the iterations.
func (l *bltLoss) newton(ctx context.Context, a0 []float64, maxIter int) ([]float64, float64, int, error) {
	if maxIter == 0 {
		maxIter = 200
	}
	q := aToQ(a0)
	p := len(q)
	f, g, h := l.eval(q, true)
	if math.IsInf(f, 1) {
		return nil, 0, 0, inputErr("BLT start has a non-finite loss")
	}
	var eig mat.EigenSym
	dir := make([]float64, p)
	trial := make([]float64, p)
	it := 0
	for ; it < maxIter; it++ {
		if err := ctx.Err(); err != nil {
			return nil, 0, it, err
		}
		if !eig.Factorize(h, true) {
			break
		}
		vals := eig.Values(nil)
		var vecs mat.Dense
		eig.VectorsTo(&vecs)
		top := 0.0
		for _, v := range vals {
			top = math.Max(top, math.Abs(v))
		}
		floor := math.Max(1e-10*top, 1e-14)
		// dir = −Σ vᵢ (vᵢ·g)/max(|λᵢ|, floor): saddle-free Newton.
		dec := 0.0
		for i := range dir {
			dir[i] = 0
		}
		for e, lam := range vals {
			c := 0.0
			for i := 0; i < p; i++ {
				c += vecs.At(i, e) * g[i]
			}
			den := math.Max(math.Abs(lam), floor)
			dec += c * c / den
			for i := 0; i < p; i++ {
				dir[i] -= vecs.At(i, e) * c / den
			}
		}
		if dec < 1e-12 {
			break
		}
		// Cap the step: q are logarithms, a change of 3 is a factor e³.
		scale := 1.0
		for _, v := range dir {
			scale = math.Min(scale, 3/math.Abs(v))
		}
		slope := 0.0
		for i := range g {
			slope += g[i] * dir[i]
		}
		step := scale
		accepted := false
		for ls := 0; ls < 40; ls++ {
			for i := range q {
				trial[i] = q[i] + step*dir[i]
			}
			ft, _, _ := l.eval(trial, false)
			if ft <= f+1e-4*step*slope {
				accepted = true
				break
			}
			step /= 2
		}
		if !accepted {
			break
		}
		copy(q, trial)
		fNew, gNew, hNew := l.eval(q, true)
		// f is the loss's logarithm: a decrease below 1e-11 is a relative
		// loss change below 1e-11 (the iteration converges only linearly
		// where a decay runs to the cap, θ → 1).
		done := f-fNew < 1e-11
		f, g, h = fNew, gNew, hNew
		if done {
			it++
			break
		}
	}
	return qToA(q), f, it, nil
}
