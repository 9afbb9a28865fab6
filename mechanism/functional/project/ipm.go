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

// ----- the interior-point solve -----

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

// applyG writes G x = −T·A_W x into out (length R).
func (st *ipmState) applyG(x, out []float64) {
	p := st.p
	l := p.cones
	st.scr.f = grow(st.scr.f, p.nf)
	f := st.scr.f
	var all []float64
	if st.full() {
		all = p.allFields(x, st.scr)
	}
	for a, j := range st.work {
		if all != nil {
			copy(f, all[j*p.nf:(j+1)*p.nf])
		} else {
			p.fields(j, x, f)
		}
		o := out[a*l.nr : (a+1)*l.nr]
		if p.d == 2 { // the rows of T written out (see newConeLayout)
			o = o[:9]
			m, dh := (f[0]+f[2])/2, (f[0]-f[2])/2
			o[0], o[1], o[2] = -m, -dh, -f[1]
			o[3], o[4], o[5] = m, -dh, -f[1]
			o[6], o[7], o[8] = 0, -f[3], -f[4]
			continue
		}
		for r := 0; r < l.nr; r++ {
			v := 0.0
			for e, t := range l.T[r] {
				v += t * f[e]
			}
			o[r] = -v
		}
	}
}

// applyGt writes Gᵀ z = −Σ_j A_jᵀ Tᵀ z_j into out (length K).
func (st *ipmState) applyGt(z, out []float64) {
	p := st.p
	l := p.cones
	K := p.K
	for k := range out {
		out[k] = 0
	}
	st.scr.f = grow(st.scr.f, p.nf)
	f := st.scr.f
	var all []float64
	if st.full() {
		st.scr.fieldsT = grow(st.scr.fieldsT, len(p.nodes)*p.nf)
		all = st.scr.fieldsT
	}
	for a, j := range st.work {
		zj := z[a*l.nr : (a+1)*l.nr]
		if p.d == 2 { // −Tᵀ z written out
			zj = zj[:9]
			f[0] = -(zj[0] + zj[1] - zj[3] + zj[4]) / 2
			f[1] = -(zj[2] + zj[5])
			f[2] = -(zj[0] - zj[1] - zj[3] - zj[4]) / 2
			f[3], f[4] = -zj[7], -zj[8]
		} else {
			for e := range f {
				v := 0.0
				for r := 0; r < l.nr; r++ {
					v += l.T[r][e] * zj[r]
				}
				f[e] = -v
			}
		}
		if all != nil {
			copy(all[j*p.nf:], f)
			continue
		}
		base := j * p.nf * K
		for e := 0; e < p.nf; e++ {
			if f[e] == 0 {
				continue
			}
			row := p.rows[base+e*K : base+(e+1)*K]
			for k, v := range row {
				out[k] += f[e] * v
			}
		}
	}
	if all != nil {
		p.allFieldsT(all, out, st.scr)
	}
}

// full reports whether the working set is the whole 2-D tensor grid.
func (st *ipmState) full() bool { return st.p.d == 2 && len(st.work) == len(st.p.nodes) }

// allFields returns the fields of h_x at every node of the 2-D grid
// (node-major, nf per node) through the tensor structure: field e on the grid
// is U_e C V_eᵀ, C[a][b] the coefficient of ψ_a(x)ψ_b(y).
func (p *Projector) allFields(x []float64, scr *scratch) []float64 {
	m := p.m
	D := p.b.Degree() + 1
	scr.C = grow(scr.C, D*D)
	C := scr.C
	for k, ab := range p.multi {
		C[ab[0]*D+ab[1]] = x[k]
	}
	scr.fields = grow(scr.fields, m*m*p.nf)
	out := scr.fields
	scr.Y = grow(scr.Y, D*m)
	Y := scr.Y // Y = C V_eᵀ
	for e := 0; e < p.nf; e++ {
		U, V := p.tab[0][fieldOrders[e][0]], p.tab[1][fieldOrders[e][1]]
		for a := 0; a < D; a++ {
			for j2 := 0; j2 < m; j2++ {
				v := V[j2*D : j2*D+D-a]
				c := C[a*D : a*D+D-a]
				s := 0.0
				for b := range c {
					s += c[b] * v[b]
				}
				Y[a*m+j2] = s
			}
		}
		for j1 := 0; j1 < m; j1++ {
			u := U[j1*D : (j1+1)*D]
			for j2 := 0; j2 < m; j2++ {
				s := 0.0
				for a := 0; a < D; a++ {
					s += u[a] * Y[a*m+j2]
				}
				out[(j1*m+j2)*p.nf+e] = s
			}
		}
	}
	return out
}

// allFieldsT adds the adjoint of allFields applied to F (node-major fields) to
// out: out[k] += Σ_j Σ_e F[j][e] A_j[e][k], via U_eᵀ F_e V_e.
func (p *Projector) allFieldsT(F, out []float64, scr *scratch) {
	m := p.m
	D := p.b.Degree() + 1
	scr.Y = grow(scr.Y, D*m)
	Z := scr.Y // Z = U_eᵀ F_e
	scr.C = grow(scr.C, D*D)
	C := scr.C
	for e := 0; e < p.nf; e++ {
		U, V := p.tab[0][fieldOrders[e][0]], p.tab[1][fieldOrders[e][1]]
		for i := range Z {
			Z[i] = 0
		}
		for j1 := 0; j1 < m; j1++ {
			u := U[j1*D : (j1+1)*D]
			for j2 := 0; j2 < m; j2++ {
				f := F[(j1*m+j2)*p.nf+e]
				if f == 0 {
					continue
				}
				for a, uv := range u {
					Z[a*m+j2] += uv * f
				}
			}
		}
		for a := 0; a < D; a++ {
			z := Z[a*m : (a+1)*m]
			for b := 0; b < D-a; b++ {
				s := 0.0
				for j2, zv := range z {
					s += zv * V[j2*D+b]
				}
				C[a*D+b] += s
			}
		}
	}
	for k, ab := range p.multi {
		out[k] += C[ab[0]*D+ab[1]]
	}
}

// nodeBlocks returns B_j = Σ_cones T_cᵀ W_c⁻² T_c (nf×nf) for every working
// node, or TᵀT when identity is set (the initialization).
func (st *ipmState) nodeBlocks(identity bool) []float64 {
	p := st.p
	l := p.cones
	nf := p.nf
	st.scr.B = grow(st.scr.B, len(st.work)*nf*nf)
	B := st.scr.B
	var wm [9]float64
	// Nonzero pattern of T per cone row, to skip zero products.
	nc := len(l.dims)
	for a := range st.work {
		Bj := B[a*nf*nf : (a+1)*nf*nf]
		if p.d == 2 && !identity && !st.generic {
			st.nodeBlock2(a, Bj)
			continue
		}
		off := 0
		for c, n := range l.dims {
			if identity {
				for i := 0; i < n*n; i++ {
					wm[i] = 0
				}
				for i := 0; i < n; i++ {
					wm[i*n+i] = 1
				}
			} else {
				st.sc[a*nc+c].invSquare(wm[:n*n])
			}
			rows := l.T[off : off+n]
			for r, tr := range rows {
				for q, tq := range rows {
					w := wm[r*n+q]
					for e, te := range tr {
						if te == 0 {
							continue
						}
						we := te * w
						be := Bj[e*nf : (e+1)*nf]
						for f, tf := range tq {
							be[f] += we * tf
						}
					}
				}
			}
			off += n
		}
	}
	return B
}

// nodeBlock2 writes B_j (5×5) for a 2-D node: the two Hessian cones act on
// (h₁₁, h₁₂, h₂₂) through s = (±(h₁₁+h₂₂)/2, (h₁₁−h₂₂)/2, h₁₂) + const, the
// gradient cone on (g₁, g₂) through its last two rows.
func (st *ipmState) nodeBlock2(a int, Bj []float64) {
	var w [9]float64
	Bj = Bj[:25]
	for c := 0; c < 2; c++ {
		st.sc[a*3+c].invSquare(w[:])
		sg := 1.0
		if c == 1 {
			sg = -1
		}
		// Rows of T_c as vectors over (h₁₁, h₁₂, h₂₂): t0 = sg·(½, 0, ½),
		// t1 = (½, 0, −½), t2 = (0, 1, 0). B += Σ_rq w_rq t_r t_qᵀ.
		t := [3][3]float64{{sg / 2, 0, sg / 2}, {0.5, 0, -0.5}, {0, 1, 0}}
		for r := 0; r < 3; r++ {
			for q := 0; q < 3; q++ {
				wr := w[r*3+q]
				for e := 0; e < 3; e++ {
					te := wr * t[r][e]
					if te == 0 {
						continue
					}
					for f := 0; f < 3; f++ {
						Bj[e*5+f] += te * t[q][f]
					}
				}
			}
		}
	}
	st.sc[a*3+2].invSquare(w[:])
	Bj[3*5+3], Bj[3*5+4] = w[1*3+1], w[1*3+2]
	Bj[4*5+3], Bj[4*5+4] = w[2*3+1], w[2*3+2]
}

// factor assembles and factors N = I + Σ_j A_jᵀ B_j A_j.
func (st *ipmState) factor(B []float64) error {
	p := st.p
	K := p.K
	st.scr.N = grow(st.scr.N, K*K)
	N := st.scr.N
	if p.d == 2 && len(st.work) == len(p.nodes) {
		p.assembleTensor(B, N, st.scr)
	} else {
		p.assembleDense(st.work, B, N)
	}
	if st.scr.sym == nil {
		st.scr.sym = mat.NewSymDense(K, nil)
	}
	S := st.scr.sym
	for i := 0; i < K; i++ {
		for j := i; j < K; j++ {
			v := N[i*K+j]
			if i == j {
				v++
			}
			S.SetSym(i, j, v)
		}
	}
	if !st.chol.Factorize(S) {
		return fmt.Errorf("%w: Newton system is not positive definite", ErrNotConverged)
	}
	return nil
}

// assembleDense adds Σ_j A_jᵀ B_j A_j (upper triangle) over the given nodes.
func (p *Projector) assembleDense(work []int, B, N []float64) {
	K, nf := p.K, p.nf
	BA := make([]float64, nf*K)
	for a, j := range work {
		Bj := B[a*nf*nf : (a+1)*nf*nf]
		base := j * nf * K
		for e := 0; e < nf; e++ {
			o := BA[e*K : (e+1)*K]
			for k := range o {
				o[k] = 0
			}
			for f := 0; f < nf; f++ {
				w := Bj[e*nf+f]
				if w == 0 {
					continue
				}
				row := p.rows[base+f*K : base+(f+1)*K]
				for k, v := range row {
					o[k] += w * v
				}
			}
		}
		for e := 0; e < nf; e++ {
			row := p.rows[base+e*K : base+(e+1)*K]
			be := BA[e*K : (e+1)*K]
			for k := 0; k < K; k++ {
				v := row[k]
				if v == 0 {
					continue
				}
				nk := N[k*K : (k+1)*K]
				for l := k; l < K; l++ {
					nk[l] += v * be[l]
				}
			}
		}
	}
}

// fieldOrders are the (x, y) derivative orders of the 2-D fields
// (h₁₁, h₁₂, h₂₂, g₁, g₂).
var fieldOrders = [5][2]int{{2, 0}, {1, 1}, {0, 2}, {1, 0}, {0, 1}}

// assembleTensor adds Σ_j A_jᵀ B_j A_j (upper triangle) over the full 2-D tensor
// grid using A_j[e][k] = U_e(x_{j₁}, a_k)·V_e(y_{j₂}, b_k). For each field pair
// (e, f), T[j₁][b][b′] = Σ_{j₂} (B_j[e][f] + B_j[f][e]) V_e[j₂][b] V_f[j₂][b′]
// (e ≠ f; B_j[e][e] for e = f); pairs whose x-tables (U_e, U_f) coincide share
// T, and then N[k][l] += Σ_{j₁} U_e[j₁][a_k] U_f[j₁][a_l] T[j₁][b_k][b_l] once per
// x-table pair. The result is symmetrized: the e ≠ f terms hold
// A_eᵀ diag(B_ef + B_fe) A_f, whose symmetric part is A_eᵀB_efA_f + A_fᵀB_feA_e.
func (p *Projector) assembleTensor(B, N []float64, scr *scratch) {
	m, K, nf := p.m, p.K, p.nf
	D := p.b.Degree() + 1
	scr.full = grow(scr.full, K*K)
	full := scr.full
	scr.M2 = grow(scr.M2, D*D)
	M2 := scr.M2
	// Group the field pairs (e ≤ f, Hessian–Hessian or gradient–gradient) by
	// their x derivative orders.
	type pair struct{ e, f int }
	groups := map[[2]int][]pair{}
	var keys [][2]int
	for e := 0; e < nf; e++ {
		for f := e; f < nf; f++ {
			if e < 3 && f >= 3 {
				continue // Hessian and gradient cones never couple
			}
			key := [2]int{fieldOrders[e][0], fieldOrders[f][0]}
			if _, ok := groups[key]; !ok {
				keys = append(keys, key)
			}
			groups[key] = append(groups[key], pair{e, f})
		}
	}
	scr.T = grow(scr.T, m*D*D)
	T := scr.T
	for _, key := range keys {
		for i := range T {
			T[i] = 0
		}
		for _, pr := range groups[key] {
			e, f := pr.e, pr.f
			Ve, Vf := p.tab[1][fieldOrders[e][1]], p.tab[1][fieldOrders[f][1]]
			for j1 := 0; j1 < m; j1++ {
				Tj := T[j1*D*D : (j1+1)*D*D]
				for j2 := 0; j2 < m; j2++ {
					bj := B[(j1*m+j2)*nf*nf:]
					w := bj[e*nf+f]
					if e != f {
						w += bj[f*nf+e]
					}
					if w == 0 {
						continue
					}
					ve := Ve[j2*D : (j2+1)*D]
					vf := Vf[j2*D : (j2+1)*D]
					for b, vb := range ve {
						c := w * vb
						row := Tj[b*D : (b+1)*D]
						row = row[:len(vf)]
						for b2, v := range vf {
							row[b2] += c * v
						}
					}
				}
			}
		}
		Ue, Uf := p.tab[0][key[0]], p.tab[0][key[1]]
		for k := 0; k < K; k++ {
			ak, bk := p.multi[k][0], p.multi[k][1]
			for i := range M2 {
				M2[i] = 0
			}
			for j1 := 0; j1 < m; j1++ {
				u := Ue[j1*D+ak]
				if u == 0 {
					continue
				}
				trow := T[j1*D*D+bk*D : j1*D*D+(bk+1)*D]
				uf := Uf[j1*D : (j1+1)*D]
				for a2, ufv := range uf {
					c := u * ufv
					n := D - a2
					mrow := M2[a2*D : a2*D+n]
					tr := trow[:n]
					mrow = mrow[:len(tr)]
					for b2, t := range tr {
						mrow[b2] += c * t
					}
				}
			}
			fk := full[k*K : (k+1)*K]
			for l, ab := range p.multi {
				fk[l] += M2[ab[0]*D+ab[1]]
			}
		}
	}
	for k := 0; k < K; k++ {
		for l := k; l < K; l++ {
			N[k*K+l] += (full[k*K+l] + full[l*K+k]) / 2
		}
	}
}

// solve runs the interior-point method on the working nodes and returns the
// solution, the certified distance bound and the iteration count.
func (p *Projector) solve(ct []float64, work []int) ([]float64, float64, int, error) {
	l := p.cones
	st := &ipmState{p: p, work: work, R: len(work) * l.nr, scr: &scratch{}}
	R, K := st.R, p.K
	// Shrunk bounds for the cones.
	r := (p.node.Beta - p.node.Alpha) / 2
	shr := Set{Alpha: p.node.Alpha + innerMargin*r, Beta: p.node.Beta - innerMargin*r, U: p.node.U * (1 - innerMargin)}
	hs := l.hvec(shr)
	st.h = make([]float64, R)
	for a := range work {
		copy(st.h[a*l.nr:], hs)
	}
	ncones := len(work) * len(l.dims)
	// Initial point (CVXOPT): x from (I + GᵀG) x = c̃ + Gᵀh, s = h − Gx, z = −s,
	// both shifted into the cone interiors.
	if err := st.factor(st.nodeBlocks(true)); err != nil {
		return nil, 0, 0, err
	}
	x := make([]float64, K)
	tmpK := make([]float64, K)
	st.applyGt(st.h, tmpK)
	for k := range tmpK {
		tmpK[k] += ct[k]
	}
	st.cholSolve(tmpK, x)
	s := make([]float64, R)
	z := make([]float64, R)
	Gx := make([]float64, R)
	st.applyG(x, Gx)
	for i := range s {
		s[i] = st.h[i] - Gx[i]
		z[i] = -s[i]
	}
	shift := func(v []float64) {
		worst := math.Inf(-1)
		st.eachCone(v, func(c []float64) { worst = math.Max(worst, -minEig(c)) })
		if worst >= -1e-8*math.Max(1, math.Sqrt(sq(v))) {
			st.eachCone(v, func(c []float64) { c[0] += 1 + worst })
		}
	}
	shift(s)
	shift(z)
	st.sc = make([]ntScaling, ncones)
	st.lambda = make([]float64, R)
	st.refine = make([]float64, K)
	rx := make([]float64, K)
	rz := make([]float64, R)
	rs := make([]float64, R)
	dx, ds, dz := make([]float64, K), make([]float64, R), make([]float64, R)
	dx2, ds2, dz2 := make([]float64, K), make([]float64, R), make([]float64, R)
	tmpR, tmpR2 := make([]float64, R), make([]float64, R)
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
	for it := 0; it < p.iters; it++ {
		st.applyG(x, Gx)
		st.applyGt(z, rx)
		for k := range rx {
			rx[k] += x[k] - ct[k]
		}
		for i := range rz {
			rz[i] = Gx[i] + s[i] - st.h[i]
		}
		gap := 0.0
		for i := range s {
			gap += s[i] * z[i]
		}
		pcost := 0.0
		for k := range x {
			pcost += (x[k] - ct[k]) * (x[k] - ct[k]) / 2
		}
		pres := maxAbs(rz) / hn
		dres := maxAbs(rx) / cn
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
		mu := gap / float64(ncones)
		// Scaling and λ = W z.
		ok := true
		st.eachPair(s, z, func(c int, sc, zc []float64) {
			var good bool
			st.sc[c], good = newNT(sc, zc)
			ok = ok && good
		})
		if !ok {
			return accept(it, fmt.Errorf("%w: iterate left the cone interior (iteration %d, pres %.2g, dres %.2g, gap %.2g)", ErrNotConverged, it, pres, dres, gap))
		}
		st.eachCone3(z, st.lambda, nil, func(c int, zc, lc, _ []float64) { st.sc[c].apply(zc, lc, false) })
		if err := st.factor(st.nodeBlocks(false)); err != nil {
			return accept(it, err)
		}
		// Predictor: rs = −λ∘λ.
		st.eachCone3(st.lambda, rs, nil, func(_ int, lc, rc, _ []float64) {
			jordan(lc, lc, rc)
			for i := range rc {
				rc[i] = -rc[i]
			}
		})
		st.newton(rx, rz, rs, dx, ds, dz, tmpR, tmpR2, tmpK)
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
		st.newton(rx, rz, rs, dx2, ds2, dz2, tmpR, tmpR2, tmpK)
		step := math.Min(1, 0.99*math.Min(st.maxStep(s, ds2), st.maxStep(z, dz2)))
		for k := range x {
			x[k] += step * dx2[k]
		}
		for i := range s {
			s[i] += step * ds2[i]
			z[i] += step * dz2[i]
		}
	}
	return accept(p.iters, fmt.Errorf("%w: %d interior-point iterations", ErrNotConverged, p.iters))
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

// applyN writes N v = v + Gᵀ W⁻² G v into out, using scratch (length R).
func (st *ipmState) applyN(v, scratch, out []float64) {
	st.applyG(v, scratch)
	st.eachCone3(scratch, scratch, nil, func(c int, a, b, _ []float64) {
		st.sc[c].apply(a, b, true)
		st.sc[c].apply(b, b, true)
	})
	st.applyGt(scratch, out)
	for k := range out {
		out[k] += v[k]
	}
}

func (st *ipmState) cholSolve(rhs, out []float64) {
	var v mat.VecDense
	if err := st.chol.SolveVecTo(&v, mat.NewVecDense(len(rhs), rhs)); err != nil {
		for i := range out {
			out[i] = math.NaN()
		}
		return
	}
	copy(out, v.RawVector().Data)
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
