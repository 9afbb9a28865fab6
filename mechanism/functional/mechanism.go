package functional

import (
	"fmt"
	"math"

	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// ErrInput is wrapped by every error caused by invalid arguments; it is the
// one dpsolve-wide sentinel (internal/inputerr).
var ErrInput = inputerr.ErrInput

func inputErrorf(format string, a ...any) error { return inputerr.Errorf("functional", format, a...) }

// Params are the privacy parameters of the functional Laplace mechanism.
type Params struct {
	// Budget is the privacy budget: pure ε-DP (calibrate.PureDP(ε)), the
	// only notion the functional Laplace mechanism meets.
	Budget calibrate.Budget
	// Gamma is the adjacency radius γ > 0: f and f′ are adjacent when
	// (Σ_k (k^Q (c_k − c′_k))²)^{1/2} ≤ γ.
	Gamma float64
	// Q > 1 is the weight exponent of the adjacency norm.
	Q float64
	// P ∈ (1/2, Q − 1/2) is the decay exponent of the noise scales.
	P float64
}

// Validate reports why p cannot parameterize an ε-DP mechanism, or nil.
func (p Params) Validate() error {
	fin := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	if p.Budget.IsZero() {
		return calibrate.ErrNoBudget
	}
	switch {
	case p.Budget.Kind() != calibrate.Pure:
		return inputErrorf("the functional Laplace mechanism needs a pure ε-DP budget, got %v", p.Budget)
	case !fin(p.Gamma) || p.Gamma <= 0:
		return inputErrorf("γ must be positive and finite, got %v", p.Gamma)
	case !fin(p.Q) || p.Q <= 1:
		return inputErrorf("q must be > 1 (the range (1/2, q−1/2) for p is empty otherwise), got %v", p.Q)
	case !fin(p.P) || p.P <= 0.5 || p.P >= p.Q-0.5:
		return inputErrorf("p must lie in (1/2, q−1/2) = (0.5, %v) (p ≤ 1/2: the noise is not square-summable; p ≥ q−1/2: Σ k^{−2(q−p)} diverges), got %v", p.Q-0.5, p.P)
	}
	return nil
}

// ScaleConstant returns C_K = (Σ_{k=1}^{K} k^{−2(q−p)})^{1/2}; K ≤ 0 returns the
// infinite-series constant ζ(2(q−p))^{1/2} (summed to relative accuracy 1e-14
// with an integral tail correction).
func ScaleConstant(q, p float64, K int) float64 {
	s := 2 * (q - p)
	if K > 0 {
		sum := 0.0
		for k := K; k >= 1; k-- { // small terms first
			sum += math.Pow(float64(k), -s)
		}
		return math.Sqrt(sum)
	}
	// ζ(s) = Σ_{k<N} k^{−s} + Euler–Maclaurin tail N^{1−s}/(s−1) + N^{−s}/2 + s N^{−s−1}/12.
	const N = 1000
	sum := 0.0
	for k := N - 1; k >= 1; k-- {
		sum += math.Pow(float64(k), -s)
	}
	n := float64(N)
	sum += math.Pow(n, 1-s)/(s-1) + math.Pow(n, -s)/2 + s*math.Pow(n, -s-1)/12
	return math.Sqrt(sum)
}

// Scales returns b_k = γ C_K / (ε k^p), k = 1..K: the smallest scales of this
// form that make the release of K coefficients ε-DP (see the package doc).
func Scales(p Params, K int) ([]float64, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if K <= 0 {
		return nil, inputErrorf("number of coefficients must be positive, got %d", K)
	}
	C := ScaleConstant(p.Q, p.P, K)
	b := make([]float64, K)
	for k := 1; k <= K; k++ {
		b[k-1] = p.Gamma * C / (p.Budget.Epsilon() * math.Pow(float64(k), p.P))
	}
	return b, nil
}

// WeightedNorm returns (Σ_k (k^q δ_k)²)^{1/2} with k = 1..len(delta): the
// adjacency norm of a coefficient difference.
func WeightedNorm(delta []float64, q float64) float64 {
	s := 0.0
	for i, d := range delta {
		w := math.Pow(float64(i+1), q) * d
		s += w * w
	}
	return math.Sqrt(s)
}

// CoefficientBound is the public bound on |c_k| used by the mechanism: inputs
// are clamped to [−CoefficientBound, CoefficientBound] before noise is added.
// Clamping is a contraction in every coordinate, so it cannot increase
// |c_k − c′_k| and the privacy proof is unchanged; it keeps |c_k|/g_k < 2⁶² for
// the snapping sampler. Coefficients this large (≈ 10⁶) do not occur in the
// experiment.
const CoefficientBound = 1 << 20

// minGrid is the coarsest grid floor compatible with CoefficientBound:
// |c|/g ≤ 2²⁰/2⁻⁴¹ = 2⁶¹.
const minGrid = 0x1p-41

// Mechanism is the functional Laplace mechanism for K coefficients.
//
// Snapping: the secure sampler rounds c_k to a power-of-two grid g_k before
// adding discrete Laplace noise, which can move adjacent inputs apart by up to
// g_k more per coordinate. The mechanism therefore uses the scales
// b_k·(1+τ), τ = S/(ε − S), S = Σ_k g_k/b_k, for which
// Σ_k (|δ_k| + g_k)/(b_k(1+τ)) ≤ (ε + S)/(1+τ) = (ε² − S²)/ε ≤ ε; with
// g_k = max(b_k·2⁻⁴⁰, 2⁻⁴¹) the inflation τ is about K·2⁻⁴⁰/ε (≈ 1e-10).
type Mechanism struct {
	params  Params
	nominal []float64 // b_k
	scales  []float64 // b_k(1+τ), used
	grids   []float64 // g_k
	noise   noise.Source
}

// New returns the mechanism releasing K coefficients with parameters p and
// noise source src (noise.NewSecure() for real releases;
// noise.NewSeededInsecure for reproducible simulations that are NOT private).
func New(p Params, K int, src noise.Source) (*Mechanism, error) {
	b, err := Scales(p, K)
	if err != nil {
		return nil, err
	}
	if noise.Missing(src) {
		return nil, inputErrorf("nil noise source")
	}
	// The snapping allowance (the 1+τ of the type's doc) is the shared
	// calibration step for per-coordinate Laplace scales.
	c, err := calibrate.CalibrateScaled(p.Budget, b, minGrid)
	if err != nil {
		return nil, err
	}
	m := &Mechanism{params: p, nominal: b, scales: c.Scales, grids: c.Grids, noise: src}
	return m, nil
}

// Params returns the mechanism's parameters.
func (m *Mechanism) Params() Params { return m.params }

// Len is the number K of released coefficients.
func (m *Mechanism) Len() int { return len(m.scales) }

// Scales returns (a copy of) the Laplace scales used, b_k(1+τ), k = 1..K.
func (m *Mechanism) Scales() []float64 { return append([]float64(nil), m.scales...) }

// NominalScales returns (a copy of) b_k = γ C_K/(ε k^p) before the snapping
// allowance.
func (m *Mechanism) NominalScales() []float64 { return append([]float64(nil), m.nominal...) }

// ExpectedNoiseNorm returns (2 Σ_k b_k²)^{1/2} = (E‖η‖²)^{1/2} ≥ E‖η‖.
func (m *Mechanism) ExpectedNoiseNorm() float64 {
	s := 0.0
	for _, b := range m.scales {
		s += 2 * b * b
	}
	return math.Sqrt(s)
}

// Release returns y_k = clamp(c_k) + η_k for the first K coefficients of coef
// (which must have at least K finite entries; extra entries are the truncated
// tail and are dropped before any noise is drawn).
func (m *Mechanism) Release(coef []float64) ([]float64, error) {
	K := len(m.scales)
	if len(coef) < K {
		return nil, inputErrorf("got %d coefficients, the mechanism releases %d", len(coef), K)
	}
	y := make([]float64, K)
	for k := 0; k < K; k++ {
		c := coef[k]
		if math.IsNaN(c) || math.IsInf(c, 0) {
			return nil, inputErrorf("coefficient %d is not finite: %v", k, c)
		}
		y[k] = clamp(c)
		if _, err := m.noise.AddLaplace(y[k:k+1], m.scales[k], m.grids[k]); err != nil {
			return nil, fmt.Errorf("functional: noise for coefficient %d: %w", k, err)
		}
	}
	return y, nil
}

// LogDensity returns log p(y | coef), the log-density of the released vector y
// under the continuous Laplace law when the input has coefficients coef (first
// K entries used, clamped as in Release).
func (m *Mechanism) LogDensity(y, coef []float64) (float64, error) {
	K := len(m.scales)
	if len(y) != K || len(coef) < K {
		return 0, inputErrorf("need %d outputs and ≥ %d coefficients, got %d and %d", K, K, len(y), len(coef))
	}
	s := 0.0
	for k, b := range m.scales {
		s += -math.Abs(y[k]-clamp(coef[k]))/b - math.Log(2*b)
	}
	return s, nil
}

// PrivacyLoss returns log p(y | c) − log p(y | c2), computed as a sum of
// differences so that it is accurate even when the densities underflow.
func (m *Mechanism) PrivacyLoss(y, c, c2 []float64) (float64, error) {
	K := len(m.scales)
	if len(y) != K || len(c) < K || len(c2) < K {
		return 0, inputErrorf("need %d outputs and ≥ %d coefficients per input", K, K)
	}
	s := 0.0
	for k, b := range m.scales {
		s += (math.Abs(y[k]-clamp(c2[k])) - math.Abs(y[k]-clamp(c[k]))) / b
	}
	return s, nil
}

// WorstCaseDirection returns the adjacent difference δ with ‖δ‖_q = γ that
// maximizes Σ_k |δ_k|/b_k (equality in Cauchy–Schwarz): δ_k = γ k^{p−2q}/C_K,
// all positive. For it the privacy loss reaches exactly ε.
func WorstCaseDirection(p Params, K int) ([]float64, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if K <= 0 {
		return nil, inputErrorf("number of coefficients must be positive, got %d", K)
	}
	C := ScaleConstant(p.Q, p.P, K)
	d := make([]float64, K)
	for k := 1; k <= K; k++ {
		d[k-1] = p.Gamma * math.Pow(float64(k), p.P-2*p.Q) / C
	}
	return d, nil
}

func clamp(c float64) float64 { return math.Max(-CoefficientBound, math.Min(CoefficientBound, c)) }
