package distributed

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/dpsolve/dpsolve/mechanism/functional/basis"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// StepSize returns the step s_k of iteration k = 0, 1, ….
type StepSize func(k int) float64

// Harmonic returns s_k = s0/(k + k0)^τ with τ ∈ (1/2, 1]: Σ s_k = ∞ and
// Σ s_k² < ∞, the conditions under which distributed projected gradient
// converges to the minimizer.
func Harmonic(s0, k0, tau float64) (StepSize, error) {
	if !(s0 > 0) || math.IsInf(s0, 0) || !(k0 >= 1) || math.IsInf(k0, 0) || !(tau > 0.5 && tau <= 1) {
		return nil, inputErrorf("need s0 > 0, k0 ≥ 1 and τ ∈ (1/2, 1], got %v, %v, %v", s0, k0, tau)
	}
	return func(k int) float64 { return s0 / math.Pow(float64(k)+k0, tau) }, nil
}

// Geometric returns s_k = s0·ρᵏ, ρ ∈ (0, 1): summable steps, as used by
// message-perturbing algorithms whose noise must decay (the dynamics are then
// not asymptotically stable, which is the only way they can be DP).
func Geometric(s0, rho float64) (StepSize, error) {
	if !(s0 > 0) || math.IsInf(s0, 0) || !(rho > 0 && rho < 1) {
		return nil, inputErrorf("need s0 > 0 and ρ ∈ (0, 1), got %v, %v", s0, rho)
	}
	return func(k int) float64 { return s0 * math.Pow(rho, float64(k)) }, nil
}

// MessageNoise perturbs every message: agent i sends yᵢ(k) = xᵢ(k) + ηᵢ(k), each
// coordinate of ηᵢ(k) ~ Laplace(Scale(k)), drawn from Sources[i].
type MessageNoise struct {
	Scale   func(k int) float64
	Sources []noise.Source
}

// Config configures Run.
type Config struct {
	Graph *Graph
	// X is the common constraint box; iterates are projected onto it.
	X basis.Box
	// Steps are the step sizes s_k.
	Steps StepSize
	// Iterations is the number of rounds T.
	Iterations int
	// Init[i] is agent i's starting point (nil: the centre of X for everyone).
	Init [][]float64
	// Noise, when non-nil, turns on message perturbation.
	Noise *MessageNoise
	// Observe, when non-nil, is called by agent i's goroutine with every
	// message it sends (round k; msg must not be retained). It sees what an
	// eavesdropper sees; calls from different agents are concurrent.
	Observe func(k, i int, msg []float64)
}

// Result holds the agents' final states xᵢ(T).
type Result struct {
	X [][]float64
}

// Mean returns the average of the agents' final states.
func (r *Result) Mean() []float64 {
	m := make([]float64, len(r.X[0]))
	for _, x := range r.X {
		for i := range m {
			m[i] += x[i] / float64(len(r.X))
		}
	}
	return m
}

type message struct {
	round int
	y     []float64
}

// Run executes distributed projected gradient (Nedić, Ozdaglar & Parrilo 2010)
// with one goroutine per agent, exchanging messages over channels along the
// graph's edges:
//
//	vᵢ(k)   = Σⱼ Wᵢⱼ yⱼ(k)           (Metropolis weights, j = i included)
//	xᵢ(k+1) = Π_X( vᵢ(k) − s_k ∇fᵢ(vᵢ(k)) )
//
// where yⱼ(k) = xⱼ(k) is the message of agent j (plus Laplace noise under
// message perturbation). fs[i] is used only by agent i's goroutine, so
// objectives need not be safe for concurrent use, but they must be distinct
// values when they are not. With Σ s_k = ∞, Σ s_k² < ∞, convex fᵢ with bounded
// gradients on X and a connected graph, every xᵢ(k) converges to a minimizer of
// Σᵢ fᵢ over X.
func Run(ctx context.Context, fs []Objective, cfg Config) (*Result, error) {
	if err := checkRun(fs, &cfg); err != nil {
		return nil, err
	}
	g := cfg.Graph
	n, d := g.N(), cfg.X.Dim()
	res := &Result{X: make([][]float64, n)}
	for i := range res.X {
		x, err := initialState(&cfg, i)
		if err != nil {
			return nil, err
		}
		res.X[i] = x
	}
	W := g.MetropolisWeights()
	// ch[i][j] carries i's messages to its neighbour j; buffer 1 lets every
	// agent send round k before anyone receives it, and keeps agents within one
	// round of each other.
	ch := make([]map[int]chan message, n)
	for i := range ch {
		ch[i] = map[int]chan message{}
		for _, j := range g.Adj[i] {
			ch[i][j] = make(chan message, 1)
		}
	}
	parent := ctx
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	var (
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	// The first agent to fail stops all: the others would block on its
	// messages.
	fail := func(err error) {
		errOnce.Do(func() { firstErr = err; cancel() })
	}
	for i := 0; i < n; i++ {
		ag := &agent{i: i, cfg: &cfg, f: fs[i], x: res.X[i], self: W[i][i], neighbours: g.Adj[i],
			v: make([]float64, d), grad: make([]float64, d),
			bufs: [2][]float64{make([]float64, d), make([]float64, d)}, fail: fail}
		for _, j := range g.Adj[i] {
			ag.out = append(ag.out, ch[i][j])
			ag.in = append(ag.in, ch[j][i])
			ag.wts = append(ag.wts, W[i][j])
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ag.run(ctx)
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := parent.Err(); err != nil {
		return nil, fmt.Errorf("distributed: %w", err)
	}
	return res, nil
}

// checkRun refuses a configuration Run cannot execute, before any
// goroutine starts.
func checkRun(fs []Objective, cfg *Config) error {
	g := cfg.Graph
	if g == nil {
		return inputErrorf("nil graph")
	}
	n := g.N()
	if len(fs) != n {
		return inputErrorf("%d objectives for %d agents", len(fs), n)
	}
	if _, err := basis.NewBox(cfg.X.Lo, cfg.X.Hi); err != nil {
		return inputErrorf("constraint box: %v", err)
	}
	d := cfg.X.Dim()
	for i, f := range fs {
		if f == nil || f.Dim() != d {
			return inputErrorf("objective %d is nil or has the wrong dimension", i)
		}
	}
	if cfg.Steps == nil || cfg.Iterations <= 0 {
		return inputErrorf("need step sizes and a positive number of iterations")
	}
	if cfg.Init != nil && len(cfg.Init) != n {
		return inputErrorf("%d initial points for %d agents", len(cfg.Init), n)
	}
	if cfg.Noise != nil && (cfg.Noise.Scale == nil || len(cfg.Noise.Sources) != n) {
		return inputErrorf("message noise needs a scale and one source per agent")
	}
	if cfg.Noise != nil {
		for i, s := range cfg.Noise.Sources {
			if noise.Missing(s) {
				return inputErrorf("agent %d has no noise source", i)
			}
		}
	}
	return nil
}

// initialState is agent i's x(0): its Init point clamped to X, or the
// centre of X.
func initialState(cfg *Config, i int) ([]float64, error) {
	d := cfg.X.Dim()
	x := make([]float64, d)
	if cfg.Init != nil {
		if len(cfg.Init[i]) != d {
			return nil, inputErrorf("initial point %d has length %d, want %d", i, len(cfg.Init[i]), d)
		}
		cfg.X.Clamp(x, cfg.Init[i])
		return x, nil
	}
	for r := range x {
		x[r] = (cfg.X.Lo[r] + cfg.X.Hi[r]) / 2
	}
	return x, nil
}

// agent is one goroutine of Run: its state x, its objective, and its
// channels to and from its neighbours (out[a], in[a] and the weight wts[a]
// belong to neighbours[a]).
type agent struct {
	i          int
	cfg        *Config
	f          Objective
	x, v, grad []float64
	self       float64 // W_ii
	neighbours []int
	out, in    []chan message
	wts        []float64
	// Double-buffered outgoing messages: a neighbour has finished with
	// the round-k buffer before this agent can send round k+2 (channel
	// capacity 1 and the round-by-round receive order guarantee it).
	bufs [2][]float64
	fail func(error)
}

// run executes the rounds; it returns early when ctx is cancelled (another
// agent failed, or the caller cancelled) or after reporting its own failure.
func (ag *agent) run(ctx context.Context) {
	for k := 0; k < ag.cfg.Iterations; k++ {
		y, ok := ag.send(ctx, k)
		if !ok || !ag.mix(ctx, k, y) || !ag.step(k) {
			return
		}
	}
}

// send forms the round-k message y = x (+ Laplace noise under message
// perturbation), shows it to Observe and sends it to every neighbour.
func (ag *agent) send(ctx context.Context, k int) ([]float64, bool) {
	y := ag.bufs[k%2]
	copy(y, ag.x)
	if nz := ag.cfg.Noise; nz != nil {
		b := nz.Scale(k)
		grid, err := messageGrid(b, y)
		if err == nil {
			_, err = nz.Sources[ag.i].AddLaplace(y, b, grid)
		}
		if err != nil {
			ag.fail(fmt.Errorf("distributed: agent %d round %d: %w", ag.i, k, err))
			return nil, false
		}
	}
	if ag.cfg.Observe != nil {
		ag.cfg.Observe(k, ag.i, y)
	}
	for _, c := range ag.out {
		select {
		case c <- message{round: k, y: y}:
		case <-ctx.Done():
			return nil, false
		}
	}
	return y, true
}

// mix receives the neighbours' round-k messages and sets v = Σⱼ Wᵢⱼ yⱼ.
func (ag *agent) mix(ctx context.Context, k int, y []float64) bool {
	v := ag.v
	for r := range v {
		v[r] = ag.self * y[r]
	}
	for a, c := range ag.in {
		select {
		case m := <-c:
			if m.round != k {
				ag.fail(fmt.Errorf("distributed: agent %d got round %d from %d in round %d", ag.i, m.round, ag.neighbours[a], k))
				return false
			}
			for r := range v {
				v[r] += ag.wts[a] * m.y[r]
			}
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// step sets x = Π_X(v − s_k ∇f(v)); a non-finite gradient fails the run.
func (ag *agent) step(k int) bool {
	v, grad, x := ag.v, ag.grad, ag.x
	if gr, ok := ag.f.(Gradienter); ok {
		gr.Gradient(v, grad)
	} else {
		ag.f.Eval(v, grad, nil)
	}
	s := ag.cfg.Steps(k)
	lo, hi := ag.cfg.X.Lo, ag.cfg.X.Hi
	for r := range x {
		if math.IsNaN(grad[r]) || math.IsInf(grad[r], 0) {
			ag.fail(fmt.Errorf("distributed: agent %d: gradient not finite at %v", ag.i, v))
			return false
		}
		x[r] = math.Min(math.Max(v[r]-s*grad[r], lo[r]), hi[r])
	}
	return true
}

// MessageScale returns b₀ = s₀Δ/((ε − S)(q − p)) with S = T·d·2⁻⁴⁰: with steps
// s₀pᵏ and noise scales b₀qᵏ (0 < p < q < 1) the T rounds of d-dimensional
// messages are ε-DP for functions whose gradients differ by at most Δ in L¹
// norm on X (see the package doc). S pays for the secure sampler's snapping to
// the grid noise.Grid(b_k) ≤ b_k·2⁻⁴⁰, which can move each snapped coordinate by
// one grid step.
func MessageScale(eps, delta, s0, p, q float64, T, d int) (float64, error) {
	if !(eps > 0) || math.IsInf(eps, 0) || !(delta > 0) || math.IsInf(delta, 0) || !(s0 > 0) || math.IsInf(s0, 0) {
		return 0, inputErrorf("need ε > 0, Δ > 0, s0 > 0 (finite), got %v, %v, %v", eps, delta, s0)
	}
	if !(p > 0 && p < q && q < 1) {
		return 0, inputErrorf("need 0 < p < q < 1, got p=%v q=%v", p, q)
	}
	if T <= 0 || d <= 0 {
		return 0, inputErrorf("need positive rounds and dimension, got %d, %d", T, d)
	}
	S := float64(T) * float64(d) * 0x1p-40
	if S >= eps/2 {
		return 0, inputErrorf("ε = %v is too small for %d rounds of snapped noise", eps, T)
	}
	return s0 * delta / ((eps - S) * (q - p)), nil
}

// messageGrid returns the snapping grid for message noise of scale b on y:
// noise.Grid(b), coarsened to the smallest power of two on which every
// |y_r|/g stays below 2⁶¹ (the samplers' integer range). Geometric schedules
// shrink b by many orders of magnitude while the iterates stay O(1), so the
// default grid (b·2⁻⁴⁰) would overflow late in a run; the coarser grid only
// rounds the message more finely than its noise, and a grid above b itself
// is an error.
func messageGrid(b float64, y []float64) (float64, error) {
	g, err := noise.Grid(b)
	if err != nil {
		return 0, err
	}
	var big float64
	for _, v := range y {
		big = math.Max(big, math.Abs(v))
	}
	for big/g >= 0x1p61 {
		g *= 2
	}
	if g > b {
		return 0, inputErrorf("message noise scale %v is too small for values of size %v", b, big)
	}
	return g, nil
}
