package project

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"

	"github.com/dpsolve/dpsolve/mechanism/functional/basis"
)

// chebT returns T_i(x) for i = 0..n.
func chebT(n int, x float64) []float64 {
	t := make([]float64, n+1)
	t[0] = 1
	if n > 0 {
		t[1] = x
	}
	for i := 2; i <= n; i++ {
		t[i] = 2*x*t[i-1] - t[i-2]
	}
	return t
}

// The Ehlich–Zeller factor against the exact worst case, computed independently
// by linear programming: max p(x₀) over polynomials of degree ≤ n with
// |p| ≤ 1 at the m Chebyshev nodes, maximized over a grid of x₀ ∈ [−1, 1]. It
// must not exceed sec(nπ/(2m)) (the LP optimum is 5/3 for (n, m) = (2, 3) and
// (4, 6), below the factor 2), and it must exceed 1: values between the
// nodes do overshoot the node maximum, so the margin is needed.
func TestEhlichZellerAgainstLP(t *testing.T) {
	for _, c := range []struct{ n, m int }{{2, 3}, {4, 6}, {3, 8}, {5, 7}} {
		nodes := ChebyshevNodes(c.m, -1, 1)
		factor := Inflation(c.n, c.m, 1)
		worst := 0.0
		for i := 0; i <= 40; i++ {
			x0 := -1 + float64(i)/20
			// Variables a⁺, a⁻ (Chebyshev coefficients, n+1 each), slacks s, u
			// (m each): p(x_j) + s_j = 1, −p(x_j) + u_j = 1; minimize −p(x₀).
			nv := 2*(c.n+1) + 2*c.m
			A := mat.NewDense(2*c.m, nv, nil)
			b := make([]float64, 2*c.m)
			for j, xj := range nodes {
				for i, v := range chebT(c.n, xj) {
					A.Set(j, i, v)
					A.Set(j, c.n+1+i, -v)
					A.Set(c.m+j, i, -v)
					A.Set(c.m+j, c.n+1+i, v)
				}
				A.Set(j, 2*(c.n+1)+j, 1)
				A.Set(c.m+j, 2*(c.n+1)+c.m+j, 1)
				b[j], b[c.m+j] = 1, 1
			}
			obj := make([]float64, nv)
			for i, v := range chebT(c.n, x0) {
				obj[i], obj[c.n+1+i] = -v, v
			}
			opt, _, err := lp.Simplex(obj, A, b, 1e-10, nil)
			require.NoError(t, err, "n=%d m=%d x0=%v", c.n, c.m, x0)
			worst = math.Max(worst, -opt)
		}
		// 1e-9: the simplex optimum is exact up to rounding of O(1) data.
		assert.LessOrEqual(t, worst, factor+1e-9, "n=%d m=%d", c.n, c.m)
		assert.Greater(t, worst, 1.0, "off-node values exceed the node maximum")
	}
	assert.True(t, math.IsInf(Inflation(5, 5, 2), 1))
	assert.Equal(t, 1.0, Inflation(0, 3, 2))
	assert.InDelta(t, 4.0, Inflation(2, 3, 2), 1e-12) // sec(π/3)² in 2-D
}

// NT scaling: W²z = s, Wz = W⁻¹s (= λ), W⁻² as a matrix inverts W²; arwInv
// inverts the Jordan product; maxStep finds the cone boundary.
func TestConeAlgebra(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	interior := func(n int) []float64 {
		v := make([]float64, n)
		s := 0.0
		for i := 1; i < n; i++ {
			v[i] = rng.NormFloat64()
			s += v[i] * v[i]
		}
		v[0] = math.Sqrt(s) + 0.1 + rng.Float64()
		return v
	}
	for _, n := range []int{1, 2, 3} {
		for trial := 0; trial < 50; trial++ {
			s, z := interior(n), interior(n)
			sc, ok := newNT(s, z)
			require.True(t, ok)
			wz := make([]float64, n)
			sc.apply(z, wz, false)
			wis := make([]float64, n)
			sc.apply(s, wis, true)
			w2z := make([]float64, n)
			sc.apply(wz, w2z, false)
			m := make([]float64, n*n)
			sc.invSquare(m)
			for i := 0; i < n; i++ {
				assert.InDelta(t, wz[i], wis[i], 1e-10*(1+math.Abs(wz[i])))
				assert.InDelta(t, s[i], w2z[i], 1e-10*(1+math.Abs(s[i])))
				// (W⁻²)(W²z) = z.
				v := 0.0
				for k := 0; k < n; k++ {
					v += m[i*n+k] * w2z[k]
				}
				assert.InDelta(t, z[i], v, 1e-9*(1+math.Abs(z[i])))
			}
			r := make([]float64, n)
			for i := range r {
				r[i] = rng.NormFloat64()
			}
			u := make([]float64, n)
			arwInv(wz, r, u)
			back := make([]float64, n)
			jordan(wz, u, back)
			for i := range r {
				assert.InDelta(t, r[i], back[i], 1e-9*(1+math.Abs(r[i])))
			}
			d := make([]float64, n)
			for i := range d {
				d[i] = 3 * rng.NormFloat64()
			}
			a := maxStep(s, d)
			if !math.IsInf(a, 1) {
				x := make([]float64, n)
				for i := range x {
					x[i] = s[i] + a*d[i]
				}
				assert.InDelta(t, 0, minEig(x), 1e-9*(1+math.Abs(x[0])), "on the boundary")
				for i := range x {
					x[i] = s[i] + 0.999*a*d[i]
				}
				assert.Greater(t, minEig(x), 0.0)
			}
		}
	}
}

// The 2-D node blocks written out equal the generic Tᵀ W⁻² T computation.
func TestNodeBlock2(t *testing.T) {
	box, _ := basis.Cube(2, -5, 5)
	b, err := basis.New(box, 4)
	require.NoError(t, err)
	p, err := New(b, Set{Alpha: 0.2, Beta: 2, U: 15}, nil)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(8, 9))
	st := &ipmState{p: p, work: []int{0, 5, 7}, scr: &scratch{}}
	for range st.work {
		for c := 0; c < 3; c++ {
			s := []float64{3 + rng.Float64(), rng.NormFloat64(), rng.NormFloat64()}
			z := []float64{3 + rng.Float64(), rng.NormFloat64(), rng.NormFloat64()}
			sc, ok := newNT(s, z)
			require.True(t, ok)
			st.sc = append(st.sc, sc)
		}
	}
	fast := append([]float64(nil), st.nodeBlocks(false)...)
	st.generic = true
	slow := st.nodeBlocks(false)
	for i := range fast {
		assert.InDelta(t, slow[i], fast[i], 1e-12*(1+math.Abs(slow[i])))
	}
}

// The tensor assembly equals the dense one.
func TestTensorAssembly(t *testing.T) {
	box, _ := basis.Cube(2, -5, 5)
	b, err := basis.New(box, 6)
	require.NoError(t, err)
	p, err := New(b, Set{Alpha: 0.2, Beta: 2, U: 15}, &Options{GridSize: 9})
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(1, 1))
	work := make([]int, len(p.nodes))
	for j := range work {
		work[j] = j
	}
	B := make([]float64, len(work)*25)
	for a := range work {
		for e := 0; e < 5; e++ {
			for f := e; f < 5; f++ {
				if e < 3 && f >= 3 {
					continue
				}
				v := rng.NormFloat64()
				B[a*25+e*5+f], B[a*25+f*5+e] = v, v
			}
		}
	}
	N1 := make([]float64, p.K*p.K)
	N2 := make([]float64, p.K*p.K)
	p.assembleDense(work, B, N1)
	p.assembleTensor(B, N2, &scratch{})
	for k := 0; k < p.K; k++ {
		for l := k; l < p.K; l++ {
			require.InDelta(t, N1[k*p.K+l], N2[k*p.K+l], 1e-11*(1+math.Abs(N1[k*p.K+l])))
		}
	}
	// The tensor field evaluation and its adjoint against the dense rows.
	x := make([]float64, p.K)
	for k := range x {
		x[k] = rng.NormFloat64()
	}
	all := append([]float64(nil), p.allFields(x, &scratch{})...)
	f := make([]float64, p.nf)
	for j := range p.nodes {
		p.fields(j, x, f)
		for e := range f {
			require.InDelta(t, f[e], all[j*p.nf+e], 1e-11*(1+math.Abs(f[e])))
		}
	}
	F := make([]float64, len(all))
	for i := range F {
		F[i] = rng.NormFloat64()
	}
	o1 := make([]float64, p.K)
	p.allFieldsT(F, o1, &scratch{})
	for k := 0; k < p.K; k++ {
		o2 := 0.0
		for j := range p.nodes {
			for e := 0; e < p.nf; e++ {
				o2 += F[j*p.nf+e] * p.rows[(j*p.nf+e)*p.K+k]
			}
		}
		require.InDelta(t, o2, o1[k], 1e-10*(1+math.Abs(o2)))
	}
}

// noisyLogistic returns the coefficients of a logistic-regression objective
// (100 records, features N(0, 0.2²) clipped to ±0.6, λ = 0.01) plus Laplace
// noise of scale noise/k on coefficient k.
func noisyLogistic(t *testing.T, b *basis.Basis, rng *rand.Rand, noise float64) []float64 {
	var A [][2]float64
	var L []float64
	for j := 0; j < 100; j++ {
		a := [2]float64{math.Max(-0.6, math.Min(0.6, 0.2*rng.NormFloat64())), math.Max(-0.6, math.Min(0.6, 0.2*rng.NormFloat64()))}
		l := -1.0
		if rng.Float64() < 1/(1+math.Exp(-(2*a[0]-a[1]))) {
			l = 1
		}
		A = append(A, a)
		L = append(L, l)
	}
	c, err := b.Coefficients(func(x []float64) float64 {
		v := 0.005 * (x[0]*x[0] + x[1]*x[1])
		for j, a := range A {
			v += math.Log1p(math.Exp(-L[j] * (a[0]*x[0] + a[1]*x[1])))
		}
		return v
	}, 2*b.Degree()+24)
	require.NoError(t, err)
	for k := range c {
		u := rng.Float64() - 0.5
		c[k] -= noise / float64(k+1) * math.Copysign(math.Log1p(-2*math.Abs(u)), u)
	}
	return c
}

// hessEig returns the extreme eigenvalues of the Hessian and the gradient norm
// of the expansion at x.
func hessEig(t *testing.T, e *basis.Expansion, x []float64) (lmin, lmax, gn float64) {
	ev := e.Evaluator()
	d := len(x)
	g := make([]float64, d)
	H := make([]float64, d*d)
	_, err := ev.Eval(x, g, H)
	require.NoError(t, err)
	if d == 1 {
		return H[0], H[0], math.Abs(g[0])
	}
	mean := (H[0] + H[3]) / 2
	rad := math.Hypot((H[0]-H[3])/2, H[1])
	return mean - rad, mean + rad, math.Hypot(g[0], g[1])
}

// Outputs satisfy the node bounds at every node and the guaranteed bounds at
// random points off the grid; members are fixed points; the projection is
// idempotent; and the result is optimal: the variational inequality
// ⟨c̃ − c, c′ − c⟩ ≤ 0 holds for feasible c′, and the weak-duality certificate
// bounds the distance to the exact projection.
func TestProjection2D(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	box, _ := basis.Cube(2, -5, 5)
	S := Set{Alpha: 0.1, Beta: 2, U: 15}
	for _, tc := range []struct {
		K    int
		mode Mode
	}{{4, Certified}, {6, Certified}, {6, GridOnly}, {8, Certified}} {
		b, err := basis.New(box, tc.K)
		require.NoError(t, err)
		p, err := New(b, S, &Options{Mode: tc.mode})
		require.NoError(t, err)
		g := p.Guaranteed()
		if tc.mode == Certified {
			require.Equal(t, S, g)
			nb := p.NodeBounds()
			assert.Greater(t, nb.Alpha, S.Alpha)
			assert.Less(t, nb.Beta, S.Beta)
			assert.Less(t, nb.U, S.U)
		} else {
			assert.Less(t, g.Alpha, S.Alpha)
		}
		for _, noise := range []float64{0.3, 3, 30} {
			ct := noisyLogistic(t, b, rng, noise)
			c, info, err := p.Project(ct)
			require.NoError(t, err, "K=%d noise=%v", tc.K, noise)
			// Node constraints hold exactly at every node.
			in, err := p.Contains(c)
			require.NoError(t, err)
			require.True(t, in, "K=%d noise=%v", tc.K, noise)
			// Off the grid: the guaranteed bounds (1e-9 relative: rounding in
			// evaluating a polynomial with O(10) coefficients).
			e, _ := basis.NewExpansion(b, c)
			for trial := 0; trial < 300; trial++ {
				x := []float64{-5 + 10*rng.Float64(), -5 + 10*rng.Float64()}
				if trial < 4 { // corners
					x = []float64{[]float64{-5, 5}[trial%2], []float64{-5, 5}[trial/2]}
				}
				lmin, lmax, gn := hessEig(t, e, x)
				require.GreaterOrEqual(t, lmin, g.Alpha-1e-9, "K=%d x=%v", tc.K, x)
				require.LessOrEqual(t, lmax, g.Beta+1e-9)
				require.LessOrEqual(t, gn, g.U*(1+1e-9))
			}
			// Idempotent, and members are left exactly unchanged.
			c2, info2, err := p.Project(c)
			require.NoError(t, err)
			assert.False(t, info2.Moved)
			assert.Equal(t, c, c2)
			if !info.Moved {
				assert.Equal(t, ct, c)
				continue
			}
			// Certificate: the computed projection is within DistanceBound of
			// the exact one, a small fraction of the distance moved.
			assert.Less(t, info.DistanceBound, 0.01*info.Distance+1e-6, "K=%d noise=%v %+v", tc.K, noise, info)
			// Variational inequality against members m of the node set
			// (quadratics inside it): the exact projection c* has
			// ⟨c̃ − c*, m − c*⟩ ≤ 0; with |c − c*| ≤ δ (DistanceBound) the
			// computed c has ⟨c̃ − c, m − c⟩ ≤ δ(|c̃ − c| + |m − c| + δ).
			for trial := 0; trial < 20; trial++ {
				m := insideQuadratic(t, b, p, rng)
				dot, nm := 0.0, 0.0
				for k := range m {
					dot += (ct[k] - c[k]) * (m[k] - c[k])
					nm += (m[k] - c[k]) * (m[k] - c[k])
				}
				db := info.DistanceBound
				assert.LessOrEqual(t, dot, db*(info.Distance+math.Sqrt(nm)+db)+1e-9)
			}
		}
	}
}

// insideQuadratic returns the coefficients of a random quadratic
// ½(x−x₀)ᵀQ(x−x₀) + c₀ whose Hessian eigenvalues lie inside the node bounds and
// whose gradient stays below u_g on D.
func insideQuadratic(t *testing.T, b *basis.Basis, p *Projector, rng *rand.Rand) []float64 {
	nb := p.NodeBounds()
	for {
		l1 := nb.Alpha + (nb.Beta-nb.Alpha)*(0.05+0.9*rng.Float64())
		l2 := nb.Alpha + (nb.Beta-nb.Alpha)*(0.05+0.9*rng.Float64())
		th := rng.Float64() * math.Pi
		cs, sn := math.Cos(th), math.Sin(th)
		Q := [4]float64{l1*cs*cs + l2*sn*sn, (l1 - l2) * cs * sn, 0, l1*sn*sn + l2*cs*cs}
		Q[2] = Q[1]
		x0 := []float64{2 * rng.NormFloat64(), 2 * rng.NormFloat64()}
		// sup |Q(x − x₀)| over the box's corners bounds the gradient norm.
		ok := true
		for _, cx := range []float64{-5, 5} {
			for _, cy := range []float64{-5, 5} {
				gx := Q[0]*(cx-x0[0]) + Q[1]*(cy-x0[1])
				gy := Q[2]*(cx-x0[0]) + Q[3]*(cy-x0[1])
				if math.Hypot(gx, gy) > 0.95*nb.U {
					ok = false
				}
			}
		}
		if !ok {
			continue
		}
		c0 := 10 * rng.NormFloat64()
		c, err := b.Coefficients(func(x []float64) float64 {
			dx, dy := x[0]-x0[0], x[1]-x0[1]
			return 0.5*(Q[0]*dx*dx+2*Q[1]*dx*dy+Q[3]*dy*dy) + c0
		}, b.Degree()+1)
		require.NoError(t, err)
		in, err := p.Contains(c)
		require.NoError(t, err)
		require.True(t, in)
		return c
	}
}

// A function already in the set (a quadratic strictly inside, and a noise-free
// logistic objective for K = 6, whose Hessians lie in [0.38, 1.4] on D) is
// returned unchanged, bit for bit.
func TestFixedPoints(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	box, _ := basis.Cube(2, -5, 5)
	b, err := basis.New(box, 6)
	require.NoError(t, err)
	p, err := New(b, Set{Alpha: 0.1, Beta: 2, U: 15}, nil)
	require.NoError(t, err)
	for i := 0; i < 5; i++ {
		c := insideQuadratic(t, b, p, rng)
		out, info, err := p.Project(c)
		require.NoError(t, err)
		assert.False(t, info.Moved)
		assert.Equal(t, c, out)
	}
	c := noisyLogistic(t, b, rng, 0)
	out, info, err := p.Project(c)
	require.NoError(t, err)
	assert.False(t, info.Moved)
	assert.Equal(t, c, out)
}

// In 1-D the node constraints are linear (α ≤ h″ ≤ β, −u ≤ h′ ≤ u), so the
// projection is a QP; an independent solver (ADMM with 20000 iterations on the
// same constraints, written here) agrees with the interior-point result.
func TestProjection1DAgainstADMM(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	box, _ := basis.Cube(1, -2, 3)
	b, err := basis.New(box, 6)
	require.NoError(t, err)
	p, err := New(b, Set{Alpha: 0.5, Beta: 3, U: 8}, &Options{Tol: 1e-10})
	require.NoError(t, err)
	for trial := 0; trial < 4; trial++ {
		ct := make([]float64, b.Len())
		for k := range ct {
			ct[k] = 5 * rng.NormFloat64()
		}
		c, info, err := p.Project(ct)
		require.NoError(t, err)
		require.True(t, info.Moved)
		ref := admm1D(p, ct, 20000)
		for k := range c {
			// 1e-5: the interior-point solution keeps a relative margin of 1e-6
			// inside the node bounds; the ADMM reference does not.
			assert.InDelta(t, ref[k], c[k], 1e-5*(1+math.Abs(ref[k])), "coefficient %d", k)
		}
	}
}

// admm1D solves min ½‖c − c̃‖² s.t. lo ≤ A c ≤ hi (rows: h″ and h′ at the nodes)
// by ADMM with ρ = 1.
func admm1D(p *Projector, ct []float64, iters int) []float64 {
	K := p.K
	R := len(p.nodes) * 2
	A := mat.NewDense(R, K, nil)
	lo := make([]float64, R)
	hi := make([]float64, R)
	nb := p.NodeBounds()
	for j := range p.nodes {
		for e := 0; e < 2; e++ {
			for k := 0; k < K; k++ {
				A.Set(2*j+e, k, p.rows[(j*2+e)*K+k])
			}
		}
		lo[2*j], hi[2*j] = nb.Alpha, nb.Beta
		lo[2*j+1], hi[2*j+1] = -nb.U, nb.U
	}
	var M mat.SymDense
	M.SymOuterK(1, A.T())
	for k := 0; k < K; k++ {
		M.SetSym(k, k, M.At(k, k)+1)
	}
	var ch mat.Cholesky
	ch.Factorize(&M)
	c := mat.NewVecDense(K, append([]float64(nil), ct...))
	z := make([]float64, R)
	w := make([]float64, R)
	Ac := mat.NewVecDense(R, nil)
	rhs := mat.NewVecDense(K, nil)
	zw := mat.NewVecDense(R, nil)
	for it := 0; it < iters; it++ {
		for r := range z {
			zw.SetVec(r, z[r]-w[r])
		}
		rhs.MulVec(A.T(), zw)
		rhs.AddVec(rhs, mat.NewVecDense(K, ct))
		_ = ch.SolveVecTo(c, rhs)
		Ac.MulVec(A, c)
		for r := range z {
			v := Ac.AtVec(r) + w[r]
			z[r] = math.Min(math.Max(v, lo[r]), hi[r])
			w[r] = v - z[r]
		}
	}
	return append([]float64(nil), c.RawVector().Data...)
}

func TestBadInput(t *testing.T) {
	box, _ := basis.Cube(2, -5, 5)
	b, _ := basis.New(box, 4)
	for _, s := range []Set{{Alpha: -1, Beta: 1, U: 1}, {Alpha: 1, Beta: 1, U: 1}, {Alpha: 0, Beta: 1, U: 0}, {Alpha: math.NaN(), Beta: 1, U: 1}} {
		_, err := New(b, s, nil)
		require.ErrorIs(t, err, ErrInput, "%+v", s)
	}
	_, err := New(nil, Set{Alpha: 0.1, Beta: 1, U: 10}, nil)
	require.ErrorIs(t, err, ErrInput)
	_, err = New(b, Set{Alpha: 0.1, Beta: 1, U: 10}, &Options{GridSize: 3})
	require.ErrorIs(t, err, ErrInput)
	// u too small for any α-strongly convex function on D.
	_, err = New(b, Set{Alpha: 1, Beta: 2, U: 5}, nil)
	require.ErrorIs(t, err, ErrInput)
	assert.Contains(t, err.Error(), "empty set")
	b1, _ := basis.New(box, 1)
	_, err = New(b1, Set{Alpha: 0.1, Beta: 1, U: 10}, nil)
	require.ErrorIs(t, err, ErrInput)
	box3, _ := basis.Cube(3, -1, 1)
	b3, _ := basis.New(box3, 3)
	_, err = New(b3, Set{Alpha: 0.1, Beta: 1, U: 10}, nil)
	require.ErrorIs(t, err, ErrInput)
	p, err := New(b, Set{Alpha: 0.1, Beta: 2, U: 15}, nil)
	require.NoError(t, err)
	_, _, err = p.Project(make([]float64, 3))
	require.ErrorIs(t, err, ErrInput)
	bad := make([]float64, b.Len())
	bad[4] = math.NaN()
	_, _, err = p.Project(bad)
	require.ErrorIs(t, err, ErrInput)
	_, err = p.Contains(bad)
	require.ErrorIs(t, err, ErrInput)
}
