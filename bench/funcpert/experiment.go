// Package experiment runs the privacy–accuracy experiment of Nozari,
// Tallapragada and Cortés (IEEE TCNS 2018, Section VII): ten agents with private
// logistic-regression objectives on D = X = [−5, 5]² release their functions
// through the functional Laplace mechanism (package functional), post-process
// them (truncation and projection onto S, package project), and the group
// minimizes the sum of the released functions; the error |x̃* − x*| is
// recorded against ε for 15, 28 and 120 coefficients, next to the accuracy
// bound of package functional and the message-perturbation baseline
// (package distributed).
//
// The package sits above both of the packages it combines: functional and
// its basis and project subpackages never import distributed, and
// distributed imports only the basis (for its box and polynomial
// objectives).
//
// # Parameters
//
// The paper fixes D = X = [−5, 5]², 10 agents with 100 labelled points each,
// λ = 0.01, the three truncations and the ε sweep; it leaves the rest open,
// and DefaultConfig chooses: features N(0, 0.2²I) clipped to [−0.6, 0.6]² with
// labels from a logistic model with weights (2, −1) (distributed.
// DefaultLogisticConfig); adjacency exponent q = 2, noise decay p = 1 (the
// middle of (1/2, q − 1/2)), radius γ = 1, so ε is per unit of the weighted
// coefficient norm (one record's loss log(1 + e^{−l aᵀx}) − log 2, for features
// in the clipped box, has weighted norm up to ≈ 250 by our estimate at total
// degree 30, so replacing a record is covered at level ≈ 500ε by group
// scaling); S = {α = 0.05, β = 2, u = 15}, which
// contains every agent's objective; 2.5K Chebyshev nodes per axis for the
// certified projection.
//
// x̃* is computed by a centralized projected-Newton solve of Σᵢ f̃ᵢ over X: it is
// the point every convergent distributed algorithm run on the released
// functions reaches (package distributed tests that its goroutine algorithm
// does), so the paper, too, reports it rather than a finite run. The baseline is
// a finite run of the message-perturbing algorithm itself.
//
// The baseline's algorithm parameters (step schedule s₀pᵏ) are tuned once, at
// the smallest ε of the sweep, among a grid of candidates, and kept for every
// ε while its noise is recalibrated to each ε: the designer fixes the
// algorithm for the privacy level it must guarantee. At ε = 10⁻² every
// schedule that moves is drowned by its own noise, so the tuned schedule
// hardly moves and its error stays near |x(0) − x*| for every ε — the paper's
// observation that message perturbation is nearly insensitive to ε, and the
// reason (Section IV of the paper): the noise must decay, so the
// dynamics cannot be asymptotically stable and keep a bias. Retuning the
// schedule for every ε would trade some of that bias for noise, but the
// functional method needs no retuning at all.
//
// All randomness is seeded (noise.NewSeededInsecure): the experiment is a
// simulation, reproducible bit for bit, and releases nothing.
package funcpert

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/mechanism/distributed"
	"github.com/dpsolve/dpsolve/mechanism/functional"
	"github.com/dpsolve/dpsolve/mechanism/functional/basis"
	"github.com/dpsolve/dpsolve/mechanism/functional/project"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/noise"
	"github.com/dpsolve/dpsolve/progress"
)

// ErrInput is wrapped by every error caused by an invalid configuration.
// It is the one dpsolve-wide sentinel (internal/inputerr), so
// errors.Is(err, ErrInput) holds for every package's bad-input errors.
var ErrInput = inputerr.ErrInput

func inputErrorf(format string, a ...any) error {
	return inputerr.Errorf("experiment", format, a...)
}

// Message configures the message-perturbation baseline: steps s₀pᵏ, noise
// scales b₀qᵏ with b₀ from distributed.MessageScale, T rounds on a ring, every
// agent starting at the centre of X.
type Message struct {
	// Candidates for (s₀, p); the pair with the smallest mean error at the
	// smallest ε of the sweep is used for every ε (the designer tunes the
	// algorithm for the privacy level it must guarantee). q = (1 + p)/2.
	S0, P []float64
	// Rounds T of the algorithm.
	Rounds int
	// TuneReps is the number of repetitions per candidate when tuning.
	TuneReps int
	// Delta is the adjacency of the baseline: sup_X |∇f − ∇f′|₁ ≤ Δ, which for
	// the logistic loss covers the change of one data record with features
	// clipped to [−c, c]ᵈ: Δ = 2·d·c.
	Delta float64
}

// Config is the experiment's configuration.
type Config struct {
	// Eps are the privacy levels ε (default logspace(−2, 3, 11)).
	Eps []float64
	// Degrees are the total degrees K of the truncation (default 4, 6, 14:
	// 15, 28 and 120 coefficients).
	Degrees []int
	// Reps is the number of repetitions per (ε, degree) (default 20).
	Reps int
	// Data describes the agents' private data.
	Data distributed.LogisticConfig
	// Gamma, Q, P are the mechanism's adjacency radius and exponents.
	Gamma, Q, P float64
	// S is the regularity class the released functions are projected onto.
	S project.Set
	// GridFactor sets the projection grid: ⌈GridFactor·K⌉ Chebyshev nodes per
	// axis (≥ K + 1). Finer grids cost more and tighten the certified node
	// bounds less.
	GridFactor float64
	// Message configures the baseline; Rounds = 0 skips it.
	Message Message
	// Seed seeds the noise (the data has its own seed in Data).
	Seed uint64
	// Workers bounds the goroutines that run repetitions (0: GOMAXPROCS).
	Workers int
}

// DefaultConfig is the paper's experiment: 10 agents, 100 points, λ = 0.01,
// ε ∈ logspace(−2, 3, 11), 15/28/120 coefficients, 20 repetitions.
func DefaultConfig() Config {
	eps := make([]float64, 11)
	for i := range eps {
		eps[i] = math.Pow(10, -2+0.5*float64(i))
	}
	data := distributed.DefaultLogisticConfig(1)
	return Config{
		Eps:     eps,
		Degrees: []int{4, 6, 14},
		Reps:    20,
		Data:    data,
		Gamma:   1,
		Q:       2,
		P:       1,
		// The agents' Hessians lie in [0.33, 1.42] and their gradients below 9.6
		// on D (for every truncation K ≥ 6 too), so S contains them; with 2.5K
		// nodes per axis the certified node bounds still do (for K = 14:
		// [0.31, 1.74] and 10.5), so the noise-free post-processing is exact
		// and the smoothing error is the truncation error.
		S:          project.Set{Alpha: 0.05, Beta: 2, U: 15},
		GridFactor: 2.5,
		Message: Message{
			S0:       []float64{1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1},
			P:        []float64{0.9, 0.97, 0.99},
			Rounds:   600,
			TuneReps: 4,
			Delta:    2 * float64(len(data.Truth)) * data.FeatureClip,
		},
		Seed: 2,
	}
}

// Validate reports the first problem with c.
func (c Config) Validate() error {
	if len(c.Eps) == 0 || len(c.Degrees) == 0 || c.Reps <= 0 {
		return inputErrorf("need at least one ε, one degree and one repetition")
	}
	for _, e := range c.Eps {
		if !(e > 0) || math.IsInf(e, 0) {
			return inputErrorf("ε must be positive and finite, got %v", e)
		}
	}
	for _, K := range c.Degrees {
		if K < 2 || K > 30 {
			return inputErrorf("degree must be in [2, 30], got %d", K)
		}
	}
	unit, err := calibrate.PureDP(1) // the budget does not enter these checks (c.Eps is checked above)
	if err != nil {
		return err
	}
	if err := (functional.Params{Budget: unit, Gamma: c.Gamma, Q: c.Q, P: c.P}).Validate(); err != nil {
		return err
	}
	if err := c.S.Validate(); err != nil {
		return err
	}
	if !(c.GridFactor >= 1) || math.IsInf(c.GridFactor, 0) {
		return inputErrorf("grid factor must be at least 1, got %v", c.GridFactor)
	}
	// Every α-strongly convex function on X = [−5, 5]² has sup|∇h| ≥ α·diam/2.
	if c.S.U <= c.S.Alpha*10*math.Sqrt2/2 {
		return inputErrorf("S is empty: u = %v ≤ α·diam(X)/2 = %v", c.S.U, c.S.Alpha*10*math.Sqrt2/2)
	}
	if c.Data.Agents < 2 || len(c.Data.Truth) != 2 {
		return inputErrorf("need at least 2 agents in 2-D, got %d agents in %d-D", c.Data.Agents, len(c.Data.Truth))
	}
	if c.Workers < 0 {
		return inputErrorf("negative worker count")
	}
	m := c.Message
	if m.Rounds < 0 || (m.Rounds > 0 && (len(m.S0) == 0 || len(m.P) == 0 || m.TuneReps <= 0 || !(m.Delta > 0))) {
		return inputErrorf("message baseline needs step candidates, tuning repetitions and Δ > 0")
	}
	for _, p := range m.P {
		if !(p > 0 && p < 1) {
			return inputErrorf("step decay p must be in (0, 1), got %v", p)
		}
	}
	return nil
}

// Row is one line of the results: the error of one repetition.
type Row struct {
	Eps    float64
	Coeffs int // number of coefficients; 0 for the message baseline
	Method string
	Rep    int
	Error  float64
}

// Series summarizes the errors of one method and coefficient count per ε.
type Series struct {
	Method string
	Coeffs int
	Eps    []float64
	Mean   []float64
	Min    []float64
	Max    []float64
	// Bound is the theoretical accuracy bound (functional method only).
	Bound []float64
}

// Result is the outcome of Run.
type Result struct {
	Config Config
	Rows   []Row
	Series []Series
	// XStar is the true minimizer of Σᵢ fᵢ over X.
	XStar []float64
	// Smoothing[K] = |x̄ − x*| for the noise-free post-processed functions.
	Smoothing map[int]float64
	// ProjectionCertificate is the largest certified distance between a
	// computed projection and the exact one, over every projection made, and
	// ProjectionRelative the largest ratio of that distance to the distance
	// the projection moved its input.
	ProjectionCertificate, ProjectionRelative float64
	// MessageS0, MessageP are the tuned baseline parameters.
	MessageS0, MessageP float64
	Elapsed             time.Duration
}

// agentSeed derives a distinct stream for every (degree, ε, repetition, agent).
func agentSeed(base uint64, K, e, r, i int) uint64 {
	h := base ^ 0x9e3779b97f4a7c15
	for _, v := range []int{K, e, r, i} {
		h ^= uint64(v) + 0x9e3779b97f4a7c15 + (h << 6) + (h >> 2)
		h *= 0xbf58476d1ce4e5b9
	}
	return h
}

type degreeSetup struct {
	K      int
	b      *basis.Basis
	proj   *project.Projector
	coef   [][]float64
	xbar   []float64
	cert   float64
	M      float64
	smooth float64
}

// Run executes the experiment, reporting through report (may be nil)
// dpsolve's progress events with Stage "funcpert": remarks on the setup as
// Notes (the true minimizer, each degree's projector, the tuned message
// baseline), the functionals computed (Count of Total, Unit
// "functionals") about twenty times, and a final event with Done set.
func Run(ctx context.Context, cfg Config, report progress.Func) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	x := &run{cfg: cfg, report: report, start: time.Now()}
	if err := x.problem(); err != nil {
		return nil, err
	}
	res := &Result{Config: cfg, XStar: x.xstar, Smoothing: map[int]float64{}}
	x.remark("x* = (%.6f, %.6f)", x.xstar[0], x.xstar[1])
	setups, err := x.setupDegrees(res)
	if err != nil {
		return nil, err
	}
	out, err := x.functionalTasks(ctx, setups)
	if err != nil {
		return nil, err
	}
	for _, o := range out {
		res.Rows = append(res.Rows, Row{Eps: cfg.Eps[o.e], Coeffs: setups[o.di].b.Len(), Method: "functional", Rep: o.r, Error: o.err})
		res.ProjectionCertificate = math.Max(res.ProjectionCertificate, o.cert)
		res.ProjectionRelative = math.Max(res.ProjectionRelative, o.rel)
	}
	if err := x.functionalSeries(res, setups, out); err != nil {
		return nil, err
	}
	if cfg.Message.Rounds > 0 {
		if err := runMessage(ctx, cfg, res, x.agents, x.box, x.xstar, x.remark); err != nil {
			return nil, err
		}
		res.Series = append(res.Series, summarize(res.Rows, "message", 0, cfg.Eps))
	}
	res.Elapsed = time.Since(x.start)
	if report.Enabled() {
		e := x.event(0, 0, "")
		e.Done = true
		report(e)
	}
	return res, nil
}

// run is one execution of Run: the configuration, the agents' problem and
// the progress reporting.
type run struct {
	cfg    Config
	report progress.Func
	start  time.Time
	agents []*distributed.Logistic
	box    basis.Box
	xstar  []float64
}

// event is a progress event of Stage "funcpert" (no objective or gap: the
// experiment has none).
func (x *run) event(count, total int64, note string) progress.Event {
	return progress.Event{Stage: "funcpert", Count: count, Total: total, Objective: math.NaN(), Bound: math.NaN(),
		Gap: math.NaN(), Seconds: time.Since(x.start).Seconds(), Note: note}
}

// remark reports a note on the setup.
func (x *run) remark(format string, a ...any) {
	if x.report.Enabled() {
		x.report(x.event(0, 0, fmt.Sprintf(format, a...)))
	}
}

// problem builds the agents, the box X = [−5, 5]² and the true minimizer
// x*, the centralized reference every method's error is measured from.
func (x *run) problem() error {
	agents, err := distributed.NewLogisticAgents(x.cfg.Data)
	if err != nil {
		return err
	}
	box, err := basis.Cube(2, -5, 5)
	if err != nil {
		return err
	}
	objs := make([]distributed.Objective, len(agents))
	for i, a := range agents {
		objs[i] = a
	}
	xstar, err := distributed.Minimize(objs, box, nil, 1e-11)
	if err != nil {
		return fmt.Errorf("experiment: true minimizer: %w", err)
	}
	x.agents, x.box, x.xstar = agents, box, xstar
	return nil
}

// setupDegrees prepares every degree (basis, projector, noise-free
// smoothing error) and records the smoothing errors in res.
func (x *run) setupDegrees(res *Result) ([]*degreeSetup, error) {
	cfg := x.cfg
	setups := make([]*degreeSetup, len(cfg.Degrees))
	for di, K := range cfg.Degrees {
		s, err := setupDegree(x.agents, x.box, K, cfg.S, max(K+1, int(math.Ceil(cfg.GridFactor*float64(K)))), x.xstar)
		if err != nil {
			return nil, err
		}
		setups[di] = s
		res.Smoothing[K] = s.smooth
		res.ProjectionCertificate = math.Max(res.ProjectionCertificate, s.cert)
		sH, sG := s.proj.InflationFactors()
		x.remark("%d coefficients: grid %d², s_H=%.3f s_G=%.3f, node bounds %+v, smoothing error %.3g",
			s.b.Len(), s.proj.GridSize(), sH, sG, s.proj.NodeBounds(), s.smooth)
	}
	return setups, nil
}

// task is one functional-perturbation repetition: degree di, ε index e,
// repetition r.
type task struct{ di, e, r int }

// outcome is a task's error |x̂ − x*|, its projection certificates, and a
// fault that stops the experiment.
type outcome struct {
	task
	err, cert, rel float64
	fault          error
}

// functionalTasks runs every (degree, ε, repetition) on cfg.Workers
// goroutines and returns the outcomes in task order, so the rows do not
// depend on scheduling. The first fault cancels the rest.
func (x *run) functionalTasks(ctx context.Context, setups []*degreeSetup) ([]outcome, error) {
	cfg := x.cfg
	workers := cfg.Workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var tasks []task
	for di := range setups {
		for e := range cfg.Eps {
			for r := 0; r < cfg.Reps; r++ {
				tasks = append(tasks, task{di, e, r})
			}
		}
	}
	out := make([]outcome, len(tasks))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	next := make(chan int)
	var done int
	var mu sync.Mutex
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ti := range next {
				t := tasks[ti]
				e, c, rel, err := runFunctional(setups[t.di], cfg, t.e, t.r, x.agents, x.box, x.xstar)
				out[ti] = outcome{task: t, err: e, cert: c, rel: rel, fault: err}
				if err != nil {
					cancel()
				}
				mu.Lock()
				done++
				if done%max(1, len(tasks)/20) == 0 && x.report.Enabled() {
					e := x.event(int64(done), int64(len(tasks)), "")
					e.Unit = "functionals"
					x.report(e)
				}
				mu.Unlock()
			}
		}()
	}
	for ti := range tasks {
		select {
		case next <- ti:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(next)
	wg.Wait()
	for _, o := range out {
		if o.fault != nil {
			return nil, o.fault
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// functionalSeries summarizes the functional rows per degree and adds the
// accuracy bound per ε, with the largest projection certificate of that
// degree and ε in the bound.
func (x *run) functionalSeries(res *Result, setups []*degreeSetup, out []outcome) error {
	cfg := x.cfg
	for di, s := range setups {
		ser := summarize(res.Rows, "functional", s.b.Len(), cfg.Eps)
		ser.Bound = make([]float64, len(cfg.Eps))
		for e, eps := range cfg.Eps {
			certMax := s.cert
			for _, o := range out {
				if o.di == di && o.e == e {
					certMax = math.Max(certMax, o.cert)
				}
			}
			b, err := accuracyBound(cfg, s, eps, x.box, len(x.agents), certMax)
			if err != nil {
				return err
			}
			ser.Bound[e] = b
		}
		res.Series = append(res.Series, ser)
	}
	return nil
}

// setupDegree computes the agents' coefficients, the projector, the noise-free
// post-processed minimizer x̄ and the smoothing error |x̄ − x*|.
func setupDegree(agents []*distributed.Logistic, box basis.Box, K int, S project.Set, m int, xstar []float64) (*degreeSetup, error) {
	b, err := basis.New(box, K)
	if err != nil {
		return nil, err
	}
	// Projection accuracy 1e-6 (relative residuals and gap) is ample here: the
	// certified distance to the exact projection is reported and enters the
	// bound, and it is far below the errors measured.
	proj, err := project.New(b, S, &project.Options{Tol: 1e-6, GridSize: m})
	if err != nil {
		return nil, err
	}
	// The logistic sums are entire functions whose Legendre coefficients decay
	// geometrically; 2K + 24 Gauss nodes per axis make the quadrature error
	// negligible against the truncation (checked in the tests).
	g, err := basis.QuadratureGrid(box, 2*K+24)
	if err != nil {
		return nil, err
	}
	s := &degreeSetup{K: K, b: b, proj: proj, M: b.GradientBound()}
	polys := make([]distributed.Objective, len(agents))
	for i, a := range agents {
		vals := make([]float64, len(g.Points))
		for q, x := range g.Points {
			vals[q] = a.Eval(x, nil, nil)
		}
		c, err := b.CoefficientsFromValues(g, vals)
		if err != nil {
			return nil, err
		}
		s.coef = append(s.coef, c)
		pc, info, err := proj.Project(c)
		if err != nil {
			return nil, fmt.Errorf("experiment: noise-free projection (K=%d, agent %d): %w", K, i, err)
		}
		s.cert = math.Max(s.cert, info.DistanceBound)
		e, err := basis.NewExpansion(b, pc)
		if err != nil {
			return nil, err
		}
		polys[i] = distributed.NewPolynomial(e)
	}
	s.xbar, err = distributed.Minimize(polys, box, xstar, 1e-11)
	if err != nil {
		return nil, fmt.Errorf("experiment: noise-free minimizer (K=%d): %w", K, err)
	}
	s.smooth = math.Hypot(s.xbar[0]-xstar[0], s.xbar[1]-xstar[1])
	return s, nil
}

// runFunctional runs one repetition: every agent releases and projects its
// function, then the released sum is minimized. It returns the error, the
// largest projection certificate and the largest certificate relative to the
// distance moved.
func runFunctional(s *degreeSetup, cfg Config, e, r int, agents []*distributed.Logistic, box basis.Box, xstar []float64) (float64, float64, float64, error) {
	b, err := calibrate.PureDP(cfg.Eps[e])
	if err != nil {
		return 0, 0, 0, err
	}
	p := functional.Params{Budget: b, Gamma: cfg.Gamma, Q: cfg.Q, P: cfg.P}
	polys := make([]distributed.Objective, len(agents))
	cert, rel := 0.0, 0.0
	for i := range agents {
		m, err := functional.New(p, s.b.Len(), noise.NewSeededInsecure(agentSeed(cfg.Seed, s.K, e, r, i)))
		if err != nil {
			return 0, 0, 0, err
		}
		y, err := m.Release(s.coef[i])
		if err != nil {
			return 0, 0, 0, err
		}
		pc, info, err := s.proj.Project(y)
		if err != nil {
			return 0, 0, 0, fmt.Errorf("experiment: projection (K=%d, ε=%g, rep %d, agent %d): %w", s.K, cfg.Eps[e], r, i, err)
		}
		cert = math.Max(cert, info.DistanceBound)
		if info.Moved && info.Distance > 0 {
			rel = math.Max(rel, info.DistanceBound/info.Distance)
		}
		ex, err := basis.NewExpansion(s.b, pc)
		if err != nil {
			return 0, 0, 0, err
		}
		polys[i] = distributed.NewPolynomial(ex)
	}
	x, err := distributed.Minimize(polys, box, s.xbar, 1e-10)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("experiment: released minimizer (K=%d, ε=%g, rep %d): %w", s.K, cfg.Eps[e], r, err)
	}
	return math.Hypot(x[0]-xstar[0], x[1]-xstar[1]), cert, rel, nil
}

// accuracyBound evaluates the bound of package functional for one degree and
// ε, widened by the projections' certified inexactness: each computed
// projection is within cert of the exact (non-expansive) one, which adds
// 2·cert per agent to the coefficient distance.
func accuracyBound(cfg Config, s *degreeSetup, eps float64, box basis.Box, n int, cert float64) (float64, error) {
	b, err := calibrate.PureDP(eps)
	if err != nil {
		return 0, err
	}
	m, err := functional.New(functional.Params{Budget: b, Gamma: cfg.Gamma, Q: cfg.Q, P: cfg.P}, s.b.Len(), noise.NewSeededInsecure(0))
	if err != nil {
		return 0, err
	}
	norms := make([]float64, n)
	for i := range norms {
		norms[i] = m.ExpectedNoiseNorm() + 2*cert
	}
	return functional.Accuracy{
		Smoothing:     s.smooth,
		GradientBound: s.M,
		Alpha:         s.proj.Guaranteed().Alpha,
		NoiseNorms:    norms,
		Diameter:      box.Diameter(),
	}.Bound()
}

// summarize groups rows of one method/coefficient count by ε.
func summarize(rows []Row, method string, coeffs int, eps []float64) Series {
	s := Series{Method: method, Coeffs: coeffs}
	for _, e := range eps {
		var v []float64
		for _, r := range rows {
			if r.Method == method && r.Coeffs == coeffs && r.Eps == e {
				v = append(v, r.Error)
			}
		}
		if len(v) == 0 {
			continue
		}
		sort.Float64s(v)
		sum := 0.0
		for _, x := range v {
			sum += x
		}
		s.Eps = append(s.Eps, e)
		s.Mean = append(s.Mean, sum/float64(len(v)))
		s.Min = append(s.Min, v[0])
		s.Max = append(s.Max, v[len(v)-1])
	}
	return s
}

// runMessage tunes and runs the message-perturbation baseline.
func runMessage(ctx context.Context, cfg Config, res *Result, agents []*distributed.Logistic, box basis.Box, xstar []float64, remark func(string, ...any)) error {
	mc := cfg.Message
	g, err := distributed.Ring(len(agents))
	if err != nil {
		return err
	}
	run := func(eps, s0, p float64, seed uint64) (float64, error) {
		q := (1 + p) / 2
		b0, err := distributed.MessageScale(eps, mc.Delta, s0, p, q, mc.Rounds, 2)
		if err != nil {
			return 0, err
		}
		steps, err := distributed.Geometric(s0, p)
		if err != nil {
			return 0, err
		}
		srcs := make([]noise.Source, len(agents))
		objs := make([]distributed.Objective, len(agents))
		for i := range srcs {
			srcs[i] = noise.NewSeededInsecure(seed + uint64(i)*0x9e3779b97f4a7c15)
			objs[i] = agents[i]
		}
		out, err := distributed.Run(ctx, objs, distributed.Config{
			Graph: g, X: box, Steps: steps, Iterations: mc.Rounds,
			Noise: &distributed.MessageNoise{Scale: func(k int) float64 { return b0 * math.Pow(q, float64(k)) }, Sources: srcs},
		})
		if err != nil {
			return 0, err
		}
		e := 0.0
		for _, x := range out.X {
			e += math.Hypot(x[0]-xstar[0], x[1]-xstar[1])
		}
		return e / float64(len(out.X)), nil
	}
	// Tune (s₀, p) at the smallest ε.
	epsMin := cfg.Eps[0]
	for _, e := range cfg.Eps {
		epsMin = math.Min(epsMin, e)
	}
	best := math.Inf(1)
	for _, s0 := range mc.S0 {
		for _, p := range mc.P {
			sum := 0.0
			for r := 0; r < mc.TuneReps; r++ {
				e, err := run(epsMin, s0, p, agentSeed(cfg.Seed^0x7777, 0, 0, r, 0))
				if err != nil {
					return err
				}
				sum += e
			}
			if m := sum / float64(mc.TuneReps); m < best {
				best, res.MessageS0, res.MessageP = m, s0, p
			}
		}
	}
	remark("message baseline tuned at ε=%g: s0=%g p=%g (mean error %.3g)", epsMin, res.MessageS0, res.MessageP, best)
	for e, eps := range cfg.Eps {
		for r := 0; r < cfg.Reps; r++ {
			v, err := run(eps, res.MessageS0, res.MessageP, agentSeed(cfg.Seed, 0, e, r, 1))
			if err != nil {
				return err
			}
			res.Rows = append(res.Rows, Row{Eps: eps, Coeffs: 0, Method: "message", Rep: r, Error: v})
		}
	}
	return nil
}
