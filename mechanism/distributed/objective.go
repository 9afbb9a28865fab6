package distributed

import (
	"math"
	"math/rand/v2"

	"github.com/dpsolve/dpsolve/mechanism/functional/basis"
)

// Objective is an agent's local function on ℝᵈ.
type Objective interface {
	// Dim is the dimension d.
	Dim() int
	// Eval returns f(x) and writes ∇f(x) into grad (length d) and ∇²f(x) into
	// hess (length d², row-major) when they are non-nil.
	Eval(x, grad, hess []float64) float64
}

// Gradienter is implemented by objectives that can compute ∇f(x) alone faster
// than Eval; Run uses it when available.
type Gradienter interface {
	Gradient(x, grad []float64)
}

// Logistic is the regularized logistic loss of one agent's labelled data,
//
//	f(x) = Σⱼ log(1 + exp(−lⱼ aⱼᵀx)) + (λ/2)|x|²,   lⱼ ∈ {−1, +1}.
type Logistic struct {
	A      [][]float64 // features aⱼ ∈ ℝᵈ
	Labels []float64   // lⱼ ∈ {−1, +1}
	Lambda float64
}

// Dim is the feature dimension.
func (f *Logistic) Dim() int { return len(f.A[0]) }

// log1pExp returns log(1 + eᶻ) without overflow.
func log1pExp(z float64) float64 {
	if z > 0 {
		return z + math.Log1p(math.Exp(-z))
	}
	return math.Log1p(math.Exp(z))
}

// sigmoid returns 1/(1 + e^{−z}) without overflow.
func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

// Eval implements Objective.
func (f *Logistic) Eval(x, grad, hess []float64) float64 {
	d := len(x)
	for i := range grad {
		grad[i] = f.Lambda * x[i]
	}
	for i := range hess {
		hess[i] = 0
	}
	for i := 0; i < d && hess != nil; i++ {
		hess[i*d+i] = f.Lambda
	}
	v := 0.0
	for i := range x {
		v += f.Lambda / 2 * x[i] * x[i]
	}
	for j, a := range f.A {
		l := f.Labels[j]
		z := 0.0
		for i := range a {
			z += a[i] * x[i]
		}
		z *= l
		v += log1pExp(-z)
		if grad != nil || hess != nil {
			s := sigmoid(-z) // = −dℓ/dz
			for i := 0; i < d && grad != nil; i++ {
				grad[i] -= s * l * a[i]
			}
			if hess != nil {
				w := s * (1 - s)
				for r := 0; r < d; r++ {
					for c := 0; c < d; c++ {
						hess[r*d+c] += w * a[r] * a[c]
					}
				}
			}
		}
	}
	return v
}

// Gradient writes ∇f(x) = λx − Σⱼ σ(−lⱼaⱼᵀx) lⱼ aⱼ into grad.
func (f *Logistic) Gradient(x, grad []float64) {
	for i := range grad {
		grad[i] = f.Lambda * x[i]
	}
	for j, a := range f.A {
		l := f.Labels[j]
		z := 0.0
		for i := range a {
			z += a[i] * x[i]
		}
		s := sigmoid(-l*z) * l
		for i := range grad {
			grad[i] -= s * a[i]
		}
	}
}

// LogisticConfig describes the synthetic data of the experiment of Nozari
// et al. (IEEE TCNS 2018, Section VII).
type LogisticConfig struct {
	Agents, Points int       // 10 and 100 in the paper
	Lambda         float64   // 0.01 in the paper
	Truth          []float64 // labels follow P(l = +1 | a) = σ(aᵀ Truth)
	FeatureStd     float64   // features ~ N(0, FeatureStd² I), clipped
	FeatureClip    float64   // |aᵢ| ≤ FeatureClip per coordinate
	Seed           uint64
}

// DefaultLogisticConfig is the experiment's data: 10 agents with 100 points in
// ℝ², λ = 0.01, Truth = (2, −1), features N(0, 0.2²) clipped to [−0.6, 0.6]
// (the paper does not specify the data distribution; this scale keeps the
// optimum inside D = [−5, 5]² and the Hessians within a factor ≈ 5 of each
// other on D, which the projection's certified margins need).
func DefaultLogisticConfig(seed uint64) LogisticConfig {
	return LogisticConfig{Agents: 10, Points: 100, Lambda: 0.01, Truth: []float64{2, -1}, FeatureStd: 0.2, FeatureClip: 0.6, Seed: seed}
}

// NewLogisticAgents draws the agents' data from cfg (deterministic in Seed).
func NewLogisticAgents(cfg LogisticConfig) ([]*Logistic, error) {
	if cfg.Agents <= 0 || cfg.Points <= 0 || len(cfg.Truth) == 0 {
		return nil, inputErrorf("need positive agents, points and a truth vector, got %d, %d, %d", cfg.Agents, cfg.Points, len(cfg.Truth))
	}
	if !(cfg.Lambda >= 0) || !(cfg.FeatureStd > 0) || !(cfg.FeatureClip > 0) || math.IsInf(cfg.Lambda+cfg.FeatureStd+cfg.FeatureClip, 0) {
		return nil, inputErrorf("need λ ≥ 0 and positive finite feature scale and clip")
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5eed))
	d := len(cfg.Truth)
	out := make([]*Logistic, cfg.Agents)
	for i := range out {
		f := &Logistic{Lambda: cfg.Lambda}
		for j := 0; j < cfg.Points; j++ {
			a := make([]float64, d)
			z := 0.0
			for r := range a {
				a[r] = math.Max(-cfg.FeatureClip, math.Min(cfg.FeatureClip, cfg.FeatureStd*rng.NormFloat64()))
				z += a[r] * cfg.Truth[r]
			}
			l := -1.0
			if rng.Float64() < sigmoid(z) {
				l = 1
			}
			f.A = append(f.A, a)
			f.Labels = append(f.Labels, l)
		}
		out[i] = f
	}
	return out, nil
}

// Polynomial adapts a basis expansion to an Objective.
type Polynomial struct {
	exp *basis.Expansion
	ev  *basis.Evaluator
}

// NewPolynomial wraps an expansion (not safe for concurrent use: give each
// goroutine its own).
func NewPolynomial(e *basis.Expansion) *Polynomial {
	return &Polynomial{exp: e, ev: e.Evaluator()}
}

// Dim implements Objective.
func (p *Polynomial) Dim() int { return p.exp.Basis.Dim() }

// Gradient implements Gradienter (NaN on error, which Run reports).
func (p *Polynomial) Gradient(x, grad []float64) {
	if err := p.ev.Gradient(x, grad); err != nil {
		for i := range grad {
			grad[i] = math.NaN()
		}
	}
}

// Eval implements Objective. Points outside the basis box are evaluated by the
// same polynomial formula.
func (p *Polynomial) Eval(x, grad, hess []float64) float64 {
	v, err := p.ev.Eval(x, grad, hess)
	if err != nil {
		return math.NaN()
	}
	return v
}
