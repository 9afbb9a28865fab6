package mf

import "math"

// bandedLoss is F(c) = log(sens²) + log(error) of the banded Toeplitz
// strategy with coefficients c (len b, c₀ = 1 by convention; F is scale
// free) for n steps of a Toeplitz workload, with its exact gradient and
// Hessian in c, each in O(n·b) time and O(n + b²) memory.
//
// Sensitivity: sens² = Σ_t y_t² with y = P·c, P_tj counting the uses i of
// the earliest pattern with i·per + j = t, so sens² = cᵀGc with the b×b
// Gram G = PᵀP (constant): gradient 2Gc, Hessian 2G.
//
// Error: with generating functions, C⁻¹ is r = 1/c, the decoder is
// s = a/c, u = a/c² (= C⁻¹s) and q = a/c³ (= C⁻¹u), so ∂s/∂c_m = −z^m·u and
// ∂²s/∂c_m∂c_l = 2z^{m+l}·q. For E = Σ_j w_j s_j² (w_j = (n − j)/n for the
// mean error, 1 for the last step's):
//
//	∂E/∂c_m       = −2 Σ_j w_j s_j u_{j−m},
//	∂²E/∂c_m∂c_l  = 2 Σ_j w_j u_{j−m} u_{j−l} + 4 Σ_j w_j s_j q_{j−m−l}.
//
// The second sum depends on m + l only (2b − 1 sums of n terms); the first,
// at lag d = l − m, is Σ_{i ≤ n−1−m} w_{i+m} u_i u_{i−d}, and because w is
// affine in j it is ((n − m)·P0 − P1)/n (mean) or P0 (max) from the prefix
// sums P0 = Σ u_i u_{i−d} and P1 = Σ i·u_i u_{i−d} up to i = n − 1 − m,
// all lags accumulated in one pass over i.
type bandedLoss struct {
	w   ToeplitzWorkload
	n   int
	b   int
	max bool
	g   []float64 // b×b sensitivity Gram, row-major
}

func newBandedLoss(w ToeplitzWorkload, n, b int, s Schema, max bool) *bandedLoss {
	k, per := s.Participations(n), s.Period(n)
	uses := 0
	for i := 0; i < k && i*per < n; i++ {
		uses++
	}
	g := make([]float64, b*b)
	for i := 0; i < uses; i++ {
		for i2 := 0; i2 < uses; i2++ {
			for j := 0; j < b && i*per+j < n; j++ {
				m := j + (i-i2)*per
				if m >= 0 && m < b {
					g[j*b+m]++
				}
			}
		}
	}
	return &bandedLoss{w: w, n: n, b: b, max: max, g: g}
}

func (l *bandedLoss) weight(j int) float64 {
	if l.max {
		return 1
	}
	return float64(l.n-j) / float64(l.n)
}

// eval returns F(c) and, when derivs, its gradient (len b) and Hessian
// (b×b, row-major) in c, entry 0 included. A c whose loss is not finite and
// positive gives +Inf.
func (l *bandedLoss) eval(c []float64, derivs bool) (float64, []float64, []float64) {
	n, b := l.n, l.b
	gc := make([]float64, b)
	S := 0.0
	for j := 0; j < b; j++ {
		v := 0.0
		for m := 0; m < b; m++ {
			v += l.g[j*b+m] * c[m]
		}
		gc[j] = v
		S += c[j] * v
	}
	if !(c[0] > 0) {
		return math.Inf(1), nil, nil
	}
	r := inverseFlushed(c, n)
	s := l.w.decoder(r)
	E := 0.0
	for j, v := range s {
		E += l.weight(j) * v * v
	}
	if !(S > 0 && E > 0) || !finite(S, E) {
		return math.Inf(1), nil, nil
	}
	f := math.Log(S) + math.Log(E)
	if !derivs {
		return f, nil, nil
	}
	u, _ := forwardSolve(c, s)
	q, _ := forwardSolve(c, u)
	if !finite(u[n-1], q[n-1]) {
		return math.Inf(1), nil, nil
	}
	ws := make([]float64, n)
	for j := range s {
		ws[j] = l.weight(j) * s[j]
	}
	// One streaming pass over j (cache-friendly at large n; the window
	// u[j−b+1…j], q[j−2b+2…j] stays in cache): gE[m] = −2 Σ_j ws_j u_{j−m},
	// hk[e] = Σ_j ws_j q_{j−e} (the Hankel part, e = m + l) and, per lag
	// d, the prefix sums a0[d] = Σ_{i≤j} u_i u_{i−d}, a1[d] = Σ i·u_i u_{i−d},
	// recorded at j = n − 1 − m for the rows m < b.
	gS, gE := make([]float64, b), make([]float64, b)
	hk := make([]float64, 2*b-1)
	a0, a1 := make([]float64, b), make([]float64, b)
	p0, p1 := make([]float64, b*b), make([]float64, b*b) // [m*b+d]
	for j := 0; j < n; j++ {
		wj, uj, fj := ws[j], u[j], float64(j)
		for m := 0; m < b && m <= j; m++ {
			gE[m] += wj * u[j-m]
			p := uj * u[j-m]
			a0[m] += p
			a1[m] += fj * p
		}
		for e := 0; e < 2*b-1 && e <= j; e++ {
			hk[e] += wj * q[j-e]
		}
		if m := n - 1 - j; m < b {
			copy(p0[m*b:m*b+b], a0)
			copy(p1[m*b:m*b+b], a1)
		}
	}
	hE := make([]float64, b*b)
	for m := 0; m < b; m++ {
		gS[m] = 2 * gc[m]
		gE[m] *= -2
		for d := 0; m+d < b; d++ {
			var v float64
			if l.max {
				v = p0[m*b+d]
			} else {
				v = (float64(n-m)*p0[m*b+d] - p1[m*b+d]) / float64(n)
			}
			hE[m*b+m+d] = v
			hE[(m+d)*b+m] = v
		}
	}
	grad := make([]float64, b)
	hess := make([]float64, b*b)
	for m := 0; m < b; m++ {
		grad[m] = gS[m]/S + gE[m]/E
		for k := 0; k < b; k++ {
			he := 2 * (hE[m*b+k] + 2*hk[m+k])
			hess[m*b+k] = 2*l.g[m*b+k]/S - gS[m]*gS[k]/(S*S) + he/E - gE[m]*gE[k]/(E*E)
		}
	}
	return f, grad, hess
}

// inverseFlushed is InverseSeries (c[0] > 0) with entries below 1e-290 in
// magnitude set to 0. C⁻¹'s coefficients decay geometrically when c(z)'s
// zeros lie outside the unit disk (as for positive, decreasing c), and at
// n = 10⁶ long stretches of them were subnormal, which made the forward
// substitution ~10× slower; the flushed values change the error sums by
// less than 1e-290 relative to O(1) terms.
func inverseFlushed(c []float64, n int) []float64 {
	r := make([]float64, n)
	for t := 0; t < n; t++ {
		v := boolf(t == 0)
		for j := 1; j < len(c) && j <= t; j++ {
			v -= c[j] * r[t-j]
		}
		v /= c[0]
		if math.Abs(v) < 1e-290 {
			v = 0
		}
		r[t] = v
	}
	return r
}
