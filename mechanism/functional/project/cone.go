package project

// Second-order cones and their Nesterov–Todd scaling, the building blocks of
// the interior-point projection (ipm.go): each node's constraints are cones
// (coneLayout), iterates are scaled per cone (ntScaling), and steps stop at a
// cone's boundary (maxStep).

import (
	"math"
)

// coneLayout describes the cones of one node: s = h + T·f, f the node's fields,
// s split into second-order cones of the given dimensions
// (cone {(s₀, s₁): s₀ ≥ |s₁|}; dimension 1 is the half-line s₀ ≥ 0).
type coneLayout struct {
	dims []int
	nr   int
	T    [][]float64 // nr × nf
}

func newConeLayout(d int) coneLayout {
	if d == 1 { // fields (h, g)
		return coneLayout{dims: []int{1, 1, 2}, nr: 4, T: [][]float64{
			{1, 0},  // h − α ≥ 0
			{-1, 0}, // β − h ≥ 0
			{0, 0},  // u ≥ |g|
			{0, 1},
		}}
	}
	// fields (h₁₁, h₁₂, h₂₂, g₁, g₂)
	return coneLayout{dims: []int{3, 3, 3}, nr: 9, T: [][]float64{
		{0.5, 0, 0.5, 0, 0}, // (h₁₁+h₂₂)/2 − α ≥ |((h₁₁−h₂₂)/2, h₁₂)|
		{0.5, 0, -0.5, 0, 0},
		{0, 1, 0, 0, 0},
		{-0.5, 0, -0.5, 0, 0}, // β − (h₁₁+h₂₂)/2 ≥ |((h₁₁−h₂₂)/2, h₁₂)|
		{0.5, 0, -0.5, 0, 0},
		{0, 1, 0, 0, 0},
		{0, 0, 0, 0, 0}, // u ≥ |(g₁, g₂)|
		{0, 0, 0, 1, 0},
		{0, 0, 0, 0, 1},
	}}
}

// hvec returns the constant part h of s = h + T f for the given bounds.
func (l coneLayout) hvec(s Set) []float64 {
	if l.nr == 4 {
		return []float64{-s.Alpha, s.Beta, s.U, 0}
	}
	return []float64{-s.Alpha, 0, 0, s.Beta, 0, 0, s.U, 0, 0}
}

// ----- second-order cone algebra -----

// minEig returns the smaller spectral value x₀ − |x₁| of a cone vector.
func minEig(x []float64) float64 {
	n := 0.0
	for _, v := range x[1:] {
		n += v * v
	}
	return x[0] - math.Sqrt(n)
}

// jordan writes x∘y = (xᵀy, x₀y₁ + y₀x₁) into out.
func jordan(x, y, out []float64) {
	d := 0.0
	for i := range x {
		d += x[i] * y[i]
	}
	for i := 1; i < len(x); i++ {
		out[i] = x[0]*y[i] + y[0]*x[i]
	}
	out[0] = d
}

// arwInv solves λ∘u = r for u.
func arwInv(l, r, u []float64) {
	if len(l) == 1 {
		u[0] = r[0] / l[0]
		return
	}
	lr := 0.0
	for i := 1; i < len(l); i++ {
		lr += l[i] * r[i]
	}
	n := math.Sqrt(sq(l[1:]))
	det := (l[0] - n) * (l[0] + n)
	u0 := (l[0]*r[0] - lr) / det
	for i := 1; i < len(l); i++ {
		u[i] = (r[i] - u0*l[i]) / l[0]
	}
	u[0] = u0
}

// ntScaling is the Nesterov–Todd scaling W = θ·Q(w) of one cone, W² z = s, with
// Q(w) = [[w₀, w₁ᵀ], [w₁, I + w₁w₁ᵀ/(1+w₀)]] (w₀² − |w₁|² = 1) and
// W⁻¹ = θ⁻¹ J Q(w) J, J = diag(1, −I).
type ntScaling struct {
	theta float64
	w     [3]float64
	n     int
}

func newNT(s, z []float64) (ntScaling, bool) {
	n := len(s)
	var sc ntScaling
	sc.n = n
	if n == 1 {
		if !(s[0] > 0 && z[0] > 0) {
			return sc, false
		}
		sc.theta = math.Sqrt(s[0] / z[0])
		return sc, true
	}
	// γ(v) = √((v₀ − |v₁|)(v₀ + |v₁|)), factored to avoid cancellation.
	ns, nz := math.Sqrt(sq(s[1:])), math.Sqrt(sq(z[1:]))
	if !(s[0] > ns && z[0] > nz) {
		return sc, false
	}
	gs := math.Sqrt((s[0] - ns) * (s[0] + ns))
	gz := math.Sqrt((z[0] - nz) * (z[0] + nz))
	sc.theta = math.Sqrt(gs / gz)
	dot := s[0] * z[0]
	for i := 1; i < n; i++ {
		dot += s[i] * z[i]
	}
	gw := math.Sqrt((1 + dot/(gs*gz)) / 2)
	sc.w[0] = (s[0]/gs + z[0]/gz) / (2 * gw)
	for i := 1; i < n; i++ {
		sc.w[i] = (s[i]/gs - z[i]/gz) / (2 * gw)
	}
	return sc, true
}

func sq(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x * x
	}
	return s
}

// apply writes W v (inv=false) or W⁻¹ v (inv=true) into out (may alias v).
func (sc *ntScaling) apply(v, out []float64, inv bool) {
	if sc.n == 1 {
		if inv {
			out[0] = v[0] / sc.theta
		} else {
			out[0] = v[0] * sc.theta
		}
		return
	}
	n := sc.n
	w := sc.w[:n]
	sgn := 1.0
	f := sc.theta
	if inv {
		sgn, f = -1, 1/sc.theta
	}
	// Q(w) with w₁ replaced by sgn·w₁ equals J Q(w) J.
	w1v := 0.0
	for i := 1; i < n; i++ {
		w1v += sgn * w[i] * v[i]
	}
	o0 := w[0]*v[0] + w1v
	c := v[0] + w1v/(1+w[0])
	for i := 1; i < n; i++ {
		out[i] = f * (v[i] + c*sgn*w[i])
	}
	out[0] = f * o0
}

// invSquare writes the matrix W⁻² = θ⁻²(2 (Jw)(Jw)ᵀ − J) into m (n×n row-major).
func (sc *ntScaling) invSquare(m []float64) {
	n := sc.n
	t2 := 1 / (sc.theta * sc.theta)
	if n == 1 {
		m[0] = t2
		return
	}
	var jw [3]float64
	jw[0] = sc.w[0]
	for i := 1; i < n; i++ {
		jw[i] = -sc.w[i]
	}
	for i := 0; i < n; i++ {
		for k := 0; k < n; k++ {
			v := 2 * jw[i] * jw[k]
			if i == k {
				if i == 0 {
					v--
				} else {
					v++
				}
			}
			m[i*n+k] = t2 * v
		}
	}
}

// maxStep returns sup{α ≥ 0 : x + α·dx ∈ cone} (+Inf if unbounded); x must be
// in the interior.
func maxStep(x, dx []float64) float64 {
	if len(x) == 1 {
		if dx[0] < 0 {
			return -x[0] / dx[0]
		}
		return math.Inf(1)
	}
	// det(x + α dx) = a α² + 2b α + c with x₀ + α dx₀ ≥ 0.
	a := dx[0]*dx[0] - sq(dx[1:])
	b := x[0] * dx[0]
	for i := 1; i < len(x); i++ {
		b -= x[i] * dx[i]
	}
	nx := math.Sqrt(sq(x[1:]))
	c := (x[0] - nx) * (x[0] + nx)
	best := math.Inf(1)
	if dx[0] < 0 {
		best = -x[0] / dx[0]
	}
	// Smallest positive root of aα² + 2bα + c (c > 0).
	var root float64 = math.Inf(1)
	if math.Abs(a) <= 1e-300 {
		if b < 0 {
			root = -c / (2 * b)
		}
	} else {
		disc := b*b - a*c
		if disc >= 0 {
			sd := math.Sqrt(disc)
			// Stable pair of roots.
			q := -(b + math.Copysign(sd, b))
			r1, r2 := q/a, c/q
			if q == 0 {
				r1, r2 = math.Inf(1), math.Inf(1)
			}
			for _, r := range []float64{r1, r2} {
				if r > 0 && r < root {
					root = r
				}
			}
		}
	}
	return math.Min(best, root)
}
