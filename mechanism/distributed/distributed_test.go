package distributed

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/internal/testkit/budgettest"
	"github.com/dpsolve/dpsolve/mechanism/functional"
	"github.com/dpsolve/dpsolve/mechanism/functional/basis"
	"github.com/dpsolve/dpsolve/mechanism/functional/project"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

func box2(t *testing.T) basis.Box {
	b, err := basis.Cube(2, -5, 5)
	require.NoError(t, err)
	return b
}

func logisticObjectives(t *testing.T) []Objective {
	agents, err := NewLogisticAgents(DefaultLogisticConfig(1))
	require.NoError(t, err)
	require.Len(t, agents, 10)
	objs := make([]Objective, len(agents))
	for i, a := range agents {
		require.Len(t, a.A, 100)
		objs[i] = a
	}
	return objs
}

func TestGraphs(t *testing.T) {
	r, err := Ring(10)
	require.NoError(t, err)
	for i, nb := range r.Adj {
		assert.Equal(t, []int{min((i+9)%10, (i+1)%10), max((i+9)%10, (i+1)%10)}, nb)
	}
	for seed := uint64(0); seed < 20; seed++ {
		g, err := RandomConnected(10, 0.2, seed)
		require.NoError(t, err)
		require.True(t, g.Connected())
		W := g.MetropolisWeights()
		for i := range W {
			row, col := 0.0, 0.0
			for j := range W {
				row += W[i][j]
				col += W[j][i]
				assert.Equal(t, W[i][j], W[j][i])
				assert.GreaterOrEqual(t, W[i][j], 0.0)
				if i != j && W[i][j] > 0 {
					assert.Contains(t, g.Adj[i], j, "weights only on edges")
				}
			}
			assert.InDelta(t, 1, row, 1e-15)
			assert.InDelta(t, 1, col, 1e-15)
			assert.Greater(t, W[i][i], 0.0)
		}
	}
	// A path is connected, two components are not.
	_, err = NewGraph(3, [][2]int{{0, 1}, {1, 2}})
	require.NoError(t, err)
	_, err = NewGraph(4, [][2]int{{0, 1}, {2, 3}})
	require.ErrorIs(t, err, ErrInput)
	_, err = NewGraph(3, [][2]int{{0, 0}})
	require.ErrorIs(t, err, ErrInput)
	_, err = NewGraph(3, [][2]int{{0, 3}})
	require.ErrorIs(t, err, ErrInput)
	_, err = NewGraph(0, nil)
	require.ErrorIs(t, err, ErrInput)
	_, err = RandomConnected(5, 1.5, 1)
	require.ErrorIs(t, err, ErrInput)
}

// quadratic is ½(x − c)ᵀ diag(q) (x − c), whose box-constrained minimizer is
// known in closed form for sums (coordinatewise clamp of the weighted mean).
type quadratic struct{ c, q []float64 }

func (f quadratic) Dim() int { return len(f.c) }
func (f quadratic) Eval(x, grad, hess []float64) float64 {
	v := 0.0
	d := len(x)
	for i := range x {
		r := x[i] - f.c[i]
		v += f.q[i] * r * r / 2
		if grad != nil {
			grad[i] = f.q[i] * r
		}
	}
	for i := range hess {
		hess[i] = 0
	}
	for i := 0; i < d && hess != nil; i++ {
		hess[i*d+i] = f.q[i]
	}
	return v
}

// Minimize against closed forms: a sum of separable quadratics is minimized
// over a box by clamping the curvature-weighted mean coordinatewise, both
// inside the box and with active bounds. And on the logistic agents the KKT
// conditions hold at the result.
func TestMinimize(t *testing.T) {
	X := box2(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 20; trial++ {
		var fs []Objective
		num, den := []float64{0, 0}, []float64{0, 0}
		spread := 2.0
		if trial%2 == 1 {
			spread = 8 // pushes the minimizer against the bounds
		}
		for i := 0; i < 5; i++ {
			f := quadratic{c: []float64{spread * rng.NormFloat64(), spread * rng.NormFloat64()}, q: []float64{0.1 + rng.Float64(), 0.1 + rng.Float64()}}
			fs = append(fs, f)
			for r := 0; r < 2; r++ {
				num[r] += f.q[r] * f.c[r]
				den[r] += f.q[r]
			}
		}
		x, err := Minimize(fs, X, nil, 1e-12)
		require.NoError(t, err)
		for r := 0; r < 2; r++ {
			want := math.Min(math.Max(num[r]/den[r], -5), 5)
			assert.InDelta(t, want, x[r], 1e-10)
		}
	}
	objs := logisticObjectives(t)
	x, err := Minimize(objs, X, nil, 1e-12)
	require.NoError(t, err)
	g := make([]float64, 2)
	total := []float64{0, 0}
	for _, f := range objs {
		f.Eval(x, g, nil)
		total[0] += g[0]
		total[1] += g[1]
	}
	require.True(t, X.Contains(x))
	// Interior minimizer: ∇F = 0 to the rounding scale of Σ|∇fᵢ| (~10).
	assert.InDelta(t, 0, math.Hypot(total[0], total[1]), 1e-9)
	_, err = Minimize(nil, X, nil, 1e-8)
	require.ErrorIs(t, err, ErrInput)
	_, err = Minimize(objs, X, []float64{0}, 1e-8)
	require.ErrorIs(t, err, ErrInput)
	_, err = Minimize(objs, X, nil, 0)
	require.ErrorIs(t, err, ErrInput)
}

// The logistic gradient and Hessian against central finite differences
// (step 1e-5: truncation error ~1e-10·f‴, rounding ~1e-16·f/1e-5 ≈ 1e-9 for
// f ≈ 100; tolerance 1e-6 relative).
func TestLogisticDerivatives(t *testing.T) {
	objs := logisticObjectives(t)
	f := objs[0].(*Logistic)
	rng := rand.New(rand.NewPCG(3, 4))
	g := make([]float64, 2)
	g2 := make([]float64, 2)
	H := make([]float64, 4)
	gp, gm := make([]float64, 2), make([]float64, 2)
	for trial := 0; trial < 10; trial++ {
		x := []float64{-5 + 10*rng.Float64(), -5 + 10*rng.Float64()}
		f.Eval(x, g, H)
		f.Gradient(x, g2)
		const h = 1e-5
		for i := 0; i < 2; i++ {
			xp := append([]float64(nil), x...)
			xm := append([]float64(nil), x...)
			xp[i] += h
			xm[i] -= h
			fd := (f.Eval(xp, gp, nil) - f.Eval(xm, gm, nil)) / (2 * h)
			assert.InDelta(t, fd, g[i], 1e-6*(1+math.Abs(fd)))
			assert.InDelta(t, g[i], g2[i], 1e-12*(1+math.Abs(g[i])))
			for j := 0; j < 2; j++ {
				fdH := (gp[j] - gm[j]) / (2 * h)
				assert.InDelta(t, fdH, H[i*2+j], 1e-6*(1+math.Abs(fdH)))
			}
		}
	}
}

// maxDist returns max_i |xᵢ − x*|.
func maxDist(res *Result, xs []float64) float64 {
	w := 0.0
	for _, x := range res.X {
		w = math.Max(w, math.Hypot(x[0]-xs[0], x[1]-xs[1]))
	}
	return w
}

// Distributed projected gradient with steps 1.5/(k+10) (square-summable, not
// summable) brings every agent within 1e-4 of the centralized minimizer on a
// ring (120 000 rounds; measured 6.5e-5) and on a random connected graph
// (60 000 rounds; 7.2e-5). The error decays like 1/k, so the round counts
// are what 1e-4 costs.
func TestConvergesToCentralizedMinimizer(t *testing.T) {
	X := box2(t)
	objs := logisticObjectives(t)
	xs, err := Minimize(objs, X, nil, 1e-12)
	require.NoError(t, err)
	steps, err := Harmonic(1.5, 10, 1)
	require.NoError(t, err)
	ring, err := Ring(10)
	require.NoError(t, err)
	rnd, err := RandomConnected(10, 0.3, 7)
	require.NoError(t, err)
	for _, c := range []struct {
		name string
		g    *Graph
		T    int
	}{{"ring", ring, 120000}, {"random", rnd, 60000}} {
		res, err := Run(context.Background(), objs, Config{Graph: c.g, X: X, Steps: steps, Iterations: c.T})
		require.NoError(t, err)
		assert.Less(t, maxDist(res, xs), 1e-4, c.name)
	}
}

// With perturbed functions (functional mechanism, K = 6, ε = 1, projected), the
// same algorithm converges to the minimizer of the perturbed sum, which is
// not the true minimizer.
func TestConvergesToPerturbedMinimizer(t *testing.T) {
	X := box2(t)
	agents, err := NewLogisticAgents(DefaultLogisticConfig(1))
	require.NoError(t, err)
	b, err := basis.New(X, 6)
	require.NoError(t, err)
	proj, err := project.New(b, project.Set{Alpha: 0.1, Beta: 2, U: 15}, nil)
	require.NoError(t, err)
	var exps []*basis.Expansion
	for i, a := range agents {
		c, err := b.Coefficients(func(x []float64) float64 { return a.Eval(x, nil, nil) }, 36)
		require.NoError(t, err)
		m, err := functional.New(functional.Params{Budget: budgettest.PureDP(1), Gamma: 1, Q: 2, P: 1}, b.Len(), noise.NewSeededInsecure(uint64(100+i)))
		require.NoError(t, err)
		y, err := m.Release(c)
		require.NoError(t, err)
		pc, _, err := proj.Project(y)
		require.NoError(t, err)
		e, err := basis.NewExpansion(b, pc)
		require.NoError(t, err)
		exps = append(exps, e)
	}
	central := make([]Objective, len(exps))
	local := make([]Objective, len(exps))
	for i, e := range exps {
		central[i] = NewPolynomial(e)
		local[i] = NewPolynomial(e) // one evaluator per goroutine
	}
	xt, err := Minimize(central, X, nil, 1e-12)
	require.NoError(t, err)
	trueObjs := logisticObjectives(t)
	xs, err := Minimize(trueObjs, X, nil, 1e-12)
	require.NoError(t, err)
	assert.Greater(t, math.Hypot(xt[0]-xs[0], xt[1]-xs[1]), 1e-3, "the perturbed minimizer differs")
	rnd, err := RandomConnected(10, 0.3, 7)
	require.NoError(t, err)
	steps, err := Harmonic(1.5, 10, 1)
	require.NoError(t, err)
	res, err := Run(context.Background(), local, Config{Graph: rnd, X: X, Steps: steps, Iterations: 60000})
	require.NoError(t, err)
	assert.Less(t, maxDist(res, xt), 1e-4)
}

// shifted is f + aᵀx: its gradient differs from f's by the constant a, the
// worst case of the adjacency sup_X |∇f − ∇f′|₁ ≤ |a|₁.
type shifted struct {
	f *Logistic
	a []float64
}

func (s shifted) Dim() int { return 2 }
func (s shifted) Eval(x, grad, hess []float64) float64 {
	v := s.f.Eval(x, grad, hess)
	for i := range grad {
		grad[i] += s.a[i]
	}
	return v + s.a[0]*x[0] + s.a[1]*x[1]
}
func (s shifted) Gradient(x, grad []float64) {
	s.f.Gradient(x, grad)
	for i := range grad {
		grad[i] += s.a[i]
	}
}

// The message-perturbed algorithm is ε-DP. Adjacent problems differ in agent
// 0's objective by a linear term with |a|₁ = Δ. (1) On eavesdropped message
// sequences of real runs (Observe), replaying the dynamics under both
// objectives gives a log-density ratio ≤ ε. (2) At the worst-case messages
// (agent 0's message just beyond its state, away from the adjacent state, every
// round) the ratio is ε up to the (p/q)^T tail — the accounting is tight — and
// with noise scales 20% smaller it exceeds ε.
func TestMessagePerturbationPrivacy(t *testing.T) {
	X := box2(t)
	objs := logisticObjectives(t)
	g, err := Ring(10)
	require.NoError(t, err)
	const (
		T    = 300
		s0   = 0.2
		p, q = 0.9, 0.95
		eps  = 1.0
	)
	a := []float64{0.7, -0.5}
	delta := 1.2
	base := objs[0].(*Logistic)
	alt := shifted{f: base, a: a}
	steps, err := Geometric(s0, p)
	require.NoError(t, err)
	b0, err := MessageScale(eps, delta, s0, p, q, T, 2)
	require.NoError(t, err)
	scale := func(k int) float64 { return b0 * math.Pow(q, float64(k)) }
	for rep := 0; rep < 20; rep++ {
		srcs := make([]noise.Source, 10)
		for i := range srcs {
			srcs[i] = noise.NewSeededInsecure(uint64(1000*rep + i))
		}
		msgs := make([][][]float64, T)
		for k := range msgs {
			msgs[k] = make([][]float64, 10)
		}
		var mu sync.Mutex
		obs := func(k, i int, y []float64) {
			mu.Lock()
			msgs[k][i] = append([]float64(nil), y...)
			mu.Unlock()
		}
		_, err := Run(context.Background(), objs, Config{Graph: g, X: X, Steps: steps, Iterations: T,
			Noise: &MessageNoise{Scale: scale, Sources: srcs}, Observe: obs})
		require.NoError(t, err)
		loss := replayLoss(g, X, base, alt, msgs, steps, scale, nil)
		require.LessOrEqual(t, math.Abs(loss), eps, "rep %d", rep)
	}
	// Worst case: other agents send their centre, agent 0 sends x + 1e-3·sign(x − x′).
	worst := func(scale func(int) float64) float64 {
		msgs := make([][][]float64, T)
		for k := range msgs {
			msgs[k] = make([][]float64, 10)
			for i := range msgs[k] {
				msgs[k][i] = []float64{1, -0.5}
			}
		}
		return replayLoss(g, X, base, alt, msgs, steps, scale, func(x, xa []float64) []float64 {
			y := make([]float64, 2)
			for r := range y {
				y[r] = x[r]
				if x[r] != xa[r] {
					y[r] += 1e-3 * math.Copysign(1, x[r]-xa[r])
				}
			}
			return y
		})
	}
	tight := worst(scale)
	assert.LessOrEqual(t, tight, eps)
	assert.Greater(t, tight, 0.999*eps, "the accounting is tight")
	small := worst(func(k int) float64 { return 0.8 * scale(k) })
	assert.Greater(t, small, eps, "scales 20%% too small break ε")
}

// replayLoss returns log p(messages | f) − log p(messages | f′) where f′
// replaces agent 0's objective base by alt: given the messages every state is
// determined, so the densities are products of Laplace densities of
// yᵢ(k) − xᵢ(k), and only agent 0's factors differ. When choose is non-nil it
// sets agent 0's message from its states under f and f′ (a constructed
// sequence).
func replayLoss(g *Graph, X basis.Box, base *Logistic, alt shifted, msgs [][][]float64, steps StepSize, scale func(int) float64,
	choose func(x, xa []float64) []float64) float64 {
	W := g.MetropolisWeights()
	loss := 0.0
	x := []float64{0, 0} // both start at the centre of X
	xa := []float64{0, 0}
	grad := make([]float64, 2)
	for k := range msgs {
		if choose != nil {
			msgs[k][0] = choose(x, xa)
		}
		b := scale(k)
		y := msgs[k][0]
		for r := 0; r < 2; r++ {
			loss += (math.Abs(y[r]-xa[r]) - math.Abs(y[r]-x[r])) / b
		}
		v := []float64{W[0][0] * y[0], W[0][0] * y[1]}
		for _, j := range g.Adj[0] {
			v[0] += W[0][j] * msgs[k][j][0]
			v[1] += W[0][j] * msgs[k][j][1]
		}
		s := steps(k)
		base.Gradient(v, grad)
		x = X.Clamp(nil, []float64{v[0] - s*grad[0], v[1] - s*grad[1]})
		alt.Gradient(v, grad)
		xa = X.Clamp(nil, []float64{v[0] - s*grad[0], v[1] - s*grad[1]})
	}
	return loss
}

func TestRunBadInput(t *testing.T) {
	X := box2(t)
	objs := logisticObjectives(t)
	g, _ := Ring(10)
	steps, _ := Harmonic(1, 10, 1)
	ctx := context.Background()
	cases := []Config{
		{Graph: nil, X: X, Steps: steps, Iterations: 10},
		{Graph: g, X: basis.Box{Lo: []float64{0, 0}, Hi: []float64{0, 1}}, Steps: steps, Iterations: 10},
		{Graph: g, X: X, Steps: nil, Iterations: 10},
		{Graph: g, X: X, Steps: steps, Iterations: 0},
		{Graph: g, X: X, Steps: steps, Iterations: 10, Init: [][]float64{{0, 0}}},
		{Graph: g, X: X, Steps: steps, Iterations: 10, Noise: &MessageNoise{Scale: func(int) float64 { return 1 }}},
	}
	for i, c := range cases {
		_, err := Run(ctx, objs, c)
		require.ErrorIs(t, err, ErrInput, "case %d", i)
	}
	_, err := Run(ctx, objs[:3], Config{Graph: g, X: X, Steps: steps, Iterations: 10})
	require.ErrorIs(t, err, ErrInput)
	// A gradient that turns NaN is reported, not propagated.
	nanObjs := append([]Objective(nil), objs...)
	nanObjs[3] = nanObjective{}
	_, err = Run(ctx, nanObjs, Config{Graph: g, X: X, Steps: steps, Iterations: 10})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not finite")
	// Cancellation.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = Run(cctx, objs, Config{Graph: g, X: X, Steps: steps, Iterations: 1000})
	require.ErrorIs(t, err, context.Canceled)
	for _, bad := range [][3]float64{{0, 1, 1}, {1, 0, 1}, {1, 1, 0.5}, {1, 1, 1.5}} {
		_, err := Harmonic(bad[0], bad[1], bad[2])
		require.ErrorIs(t, err, ErrInput)
	}
	_, err = Geometric(1, 1)
	require.ErrorIs(t, err, ErrInput)
	_, err = MessageScale(0, 1, 1, 0.5, 0.9, 10, 2)
	require.ErrorIs(t, err, ErrInput)
	_, err = MessageScale(1, 1, 1, 0.9, 0.5, 10, 2)
	require.ErrorIs(t, err, ErrInput)
	_, err = NewLogisticAgents(LogisticConfig{})
	require.ErrorIs(t, err, ErrInput)
}

type nanObjective struct{}

func (nanObjective) Dim() int { return 2 }
func (nanObjective) Eval(x, grad, hess []float64) float64 {
	for i := range grad {
		grad[i] = math.NaN()
	}
	return math.NaN()
}
