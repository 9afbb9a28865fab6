package calibrate_test

import (
	"errors"
	"math"
	"testing"

	"github.com/dpsolve/dpsolve/mechanism/calibrate"
	"github.com/dpsolve/dpsolve/mechanism/noise"
)

func TestBudgetValidate(t *testing.T) {
	good := []calibrate.Budget{calibrate.PureDP(0.5), calibrate.ApproxDP(1, 1e-6), calibrate.ZCDP(0.1)}
	for _, b := range good {
		if err := b.Validate(); err != nil {
			t.Errorf("%v: %v", b, err)
		}
	}
	bad := map[string]calibrate.Budget{
		"zero value":       {},
		"eps 0":            calibrate.PureDP(0),
		"eps NaN":          calibrate.PureDP(math.NaN()),
		"eps Inf":          calibrate.ApproxDP(math.Inf(1), 1e-6),
		"delta 0":          calibrate.ApproxDP(1, 0),
		"delta 1":          calibrate.ApproxDP(1, 1),
		"delta NaN":        calibrate.ApproxDP(1, math.NaN()),
		"pure with delta":  {Kind: calibrate.Pure, Epsilon: 1, Delta: 1e-6},
		"approx with rho":  {Kind: calibrate.Approx, Epsilon: 1, Delta: 1e-6, Rho: 1},
		"rho 0":            calibrate.ZCDP(0),
		"rho -1":           calibrate.ZCDP(-1),
		"zcdp with eps":    {Kind: calibrate.Concentrated, Rho: 1, Epsilon: 1},
		"unknown kind":     {Kind: "renyi", Epsilon: 1},
		"pure with rho":    {Kind: calibrate.Pure, Epsilon: 1, Rho: 0.5},
		"zcdp with delta":  {Kind: calibrate.Concentrated, Rho: 1, Delta: 1e-9},
		"approx delta < 0": calibrate.ApproxDP(1, -1e-9),
	}
	for name, b := range bad {
		if err := b.Validate(); !errors.Is(err, calibrate.ErrInput) {
			t.Errorf("%s: got %v, want an error wrapping ErrInput", name, err)
		}
		if _, err := calibrate.Calibrate(b, 1, 4); !errors.Is(err, calibrate.ErrInput) {
			t.Errorf("%s: Calibrate got %v, want ErrInput", name, err)
		}
	}
}

func TestParseKind(t *testing.T) {
	for s, want := range map[string]calibrate.Kind{"laplace": calibrate.Pure, "Gaussian": calibrate.Approx, "ZCDP": calibrate.Concentrated} {
		got, err := calibrate.ParseKind(s)
		if err != nil || got != want {
			t.Errorf("ParseKind(%q) = %q, %v; want %q", s, got, err, want)
		}
	}
	if _, err := calibrate.ParseKind("gauss"); !errors.Is(err, calibrate.ErrInput) {
		t.Errorf("ParseKind(gauss): %v, want ErrInput", err)
	}
}

// The zCDP ⇒ (ε,δ)-DP conversion is checked against the exact privacy
// profile of the Gaussian mechanism that is ρ-zCDP (σ = 1/√(2ρ) at unit
// sensitivity; Balle & Wang's Theorem 8, an independent computation): the
// converted ε must be sound (profile ≤ δ) and, being a bound, not tighter
// than the exact ε — the profile at 0.9·ε must exceed δ for these
// parameters, so a conversion that returned too small an ε would fail.
func TestZCDPToApproxIsSound(t *testing.T) {
	for _, rho := range []float64{0.01, 0.125, 0.5, 2} {
		for _, delta := range []float64{1e-3, 1e-6, 1e-10} {
			eps, err := calibrate.ZCDP(rho).ApproxEpsilon(delta)
			if err != nil {
				t.Fatal(err)
			}
			if want := rho + 2*math.Sqrt(rho*math.Log(1/delta)); eps != want {
				t.Fatalf("rho=%v delta=%v: eps %v, want %v", rho, delta, eps, want)
			}
			sigma := 1 / math.Sqrt(2*rho)
			d, err := calibrate.GaussianDelta(sigma, eps, 1)
			if err != nil {
				t.Fatal(err)
			}
			if d > delta {
				t.Errorf("rho=%v: (%v, %v)-DP claimed but the exact profile gives delta %v", rho, eps, delta, d)
			}
			exact, _ := calibrate.GaussianDelta(sigma, eps/4, 1)
			if exact <= delta {
				t.Errorf("rho=%v delta=%v: eps/4 = %v already suffices; the test cannot tell a wrong conversion", rho, delta, eps/4)
			}
		}
	}
}

// Pure ε-DP ⇒ ε²/2-zCDP, checked against the Rényi divergence of the
// Laplace mechanism (Mironov 2017, Table II, an independent closed form):
// D_α(Lap(0,1/ε) ‖ Lap(1,1/ε)) = 1/(α−1)·log(α/(2α−1)·e^{(α−1)ε} +
// (α−1)/(2α−1)·e^{−αε}) must be ≤ ρ·α for every order α > 1.
func TestPureToZCDPIsSound(t *testing.T) {
	for _, eps := range []float64{0.1, 0.5, 1, 3} {
		rho, err := calibrate.PureDP(eps).ZCDPRho()
		if err != nil || rho != eps*eps/2 {
			t.Fatalf("eps=%v: rho %v, %v; want %v", eps, rho, err, eps*eps/2)
		}
		for alpha := 1.01; alpha < 200; alpha *= 1.1 {
			d := math.Log(alpha/(2*alpha-1)*math.Exp((alpha-1)*eps)+(alpha-1)/(2*alpha-1)*math.Exp(-alpha*eps)) / (alpha - 1)
			if d > rho*alpha*(1+1e-12) {
				t.Errorf("eps=%v alpha=%v: Rényi divergence %v exceeds rho·alpha = %v", eps, alpha, d, rho*alpha)
			}
		}
	}
	if _, err := calibrate.ApproxDP(1, 1e-6).ZCDPRho(); !errors.Is(err, calibrate.ErrInput) {
		t.Errorf("(ε,δ) → zCDP: %v, want ErrInput", err)
	}
	if eps, err := calibrate.PureDP(0.7).ApproxEpsilon(1e-6); err != nil || eps != 0.7 {
		t.Errorf("pure → approx: %v, %v", eps, err)
	}
	if _, err := calibrate.ApproxDP(1, 1e-5).ApproxEpsilon(1e-6); !errors.Is(err, calibrate.ErrInput) {
		t.Errorf("smaller delta: %v, want ErrInput", err)
	}
}

// Calibrate's output is checked against independent references, not by
// re-deriving its formulas: the nominal scales from the papers' closed
// forms (Laplace b = Δ/ε, Dwork et al. 2006; zCDP σ = Δ/√(2ρ), Bun & Steinke
// 2016, Prop. 1.6) and SciPy's analytic-Gaussian σ (Balle & Wang 2018;
// σ(ε=1, δ=1e-6) per unit sensitivity from the table in calibrate_test.go,
// calibrate.SciPySigma); the privacy each calibrated scale buys at the snapped
// sensitivity; and the variance of the noise actually drawn (seeded
// simulation source, not private).
func TestCalibrate(t *testing.T) {
	const sens, rows = 1.7, 64
	sigma1 := calibrate.SciPySigma(1, 1e-6)
	if sigma1 == 0 {
		t.Fatal("no SciPy reference for ε = 1, δ = 1e-6")
	}
	for _, tc := range []struct {
		b       calibrate.Budget
		nominal float64                              // the scale at the unsnapped sensitivity
		spent   func(scale, snapped float64) float64 // the budget parameter that scale buys
		want    float64                              // … which must be the budget's
		tol     float64                              // relative accuracy of the reference
		kurt    float64                              // the noise's kurtosis: 6 for Laplace, 3 for Gaussian
	}{
		{calibrate.PureDP(0.5), sens / 0.5, func(s, d float64) float64 { return d / s }, 0.5, 1e-14, 6},
		{calibrate.ApproxDP(1, 1e-6), sens * sigma1, func(s, d float64) float64 { return s / d }, sigma1, 2e-12, 3},
		{calibrate.ZCDP(0.1), sens / math.Sqrt(0.2), func(s, d float64) float64 { return d * d / (2 * s * s) }, 0.1, 1e-14, 3},
	} {
		b := tc.b
		c, err := calibrate.Calibrate(b, sens, rows)
		if err != nil {
			t.Fatal(err)
		}
		// The grid is the power of two just at or below 2⁻⁴⁰ of the nominal
		// scale (package noise's GridExponentGap); 2⁻⁴⁰ also makes the
		// scipy reference's 15 digits more than enough to place it.
		if fr, _ := math.Frexp(c.Grid); fr != 0.5 || !(c.Grid <= tc.nominal*0x1p-40 && c.Grid > tc.nominal*0x1p-41) {
			t.Errorf("%v: grid %v is not the power of two in (2⁻⁴¹, 2⁻⁴⁰]·%v", b, c.Grid, tc.nominal)
		}
		want := noise.SnappedL2Sensitivity(sens, c.Grid, rows)
		if b.Kind == calibrate.Pure {
			want = noise.SnappedL1Sensitivity(sens, c.Grid, rows)
		}
		if c.SnappedSensitivity != want || !(c.SnappedSensitivity > sens) {
			t.Errorf("%v: snapped sensitivity %v, want %v (> %v)", b, c.SnappedSensitivity, want, sens)
		}
		// The calibrated scale buys exactly the budget at the snapped
		// sensitivity: to rounding (1e-14) for the closed forms, to 2e-12 for
		// the analytic Gaussian (the SciPy root is accurate to ~1e-12, and so
		// is GaussianSigma's). Calibrating at the unsnapped sensitivity would
		// be off by the snapping charge, 3e-11 to 1e-10 relative here.
		if got := tc.spent(c.Calibrated, c.SnappedSensitivity); math.Abs(got-tc.want) > tc.tol*tc.want {
			t.Errorf("%v: the calibrated scale %v buys %v, want %v", b, c.Calibrated, got, tc.want)
		}
		if b.Kind == calibrate.Approx {
			if d, _ := calibrate.GaussianDelta(c.Calibrated, b.Epsilon, c.SnappedSensitivity); d > b.Delta {
				t.Errorf("%v: profile %v > delta", b, d)
			}
		}
		// The sampler's scale is the next grid multiple at or above it.
		if k := c.Scale / c.Grid; k != math.Trunc(k) || c.Scale < c.Calibrated || c.Scale >= c.Calibrated+c.Grid {
			t.Errorf("%v: scale %v is not the grid multiple in [%v, %v + grid)", b, c.Scale, c.Calibrated, c.Calibrated)
		}
		checkVariance(t, c, tc.kurt)
		y := make([]float64, rows)
		if err := c.Add(noise.NewSeededInsecure(1), y); err != nil {
			t.Fatal(err)
		}
		if err := c.Add(noise.NewSeededInsecure(1), y[:3]); !errors.Is(err, calibrate.ErrInput) {
			t.Errorf("short vector: %v", err)
		}
	}
	if _, err := calibrate.Calibrate(calibrate.PureDP(1), 0, 3); !errors.Is(err, calibrate.ErrInput) {
		t.Errorf("zero sensitivity: %v", err)
	}
	if _, err := calibrate.Calibrate(calibrate.PureDP(1), 1, 0); !errors.Is(err, calibrate.ErrInput) {
		t.Errorf("zero rows: %v", err)
	}
}

// checkVariance compares c.Variance with the sample variance of 100,032
// values drawn by c.Add from a seeded (simulation-only) source. The sample
// variance's relative standard error is √((κ−1)/N) for kurtosis κ (0.71%
// for Laplace, 0.45% for Gaussian); 5 standard errors are allowed, while a
// Laplace variance of b² instead of 2b² would be 50% off.
func checkVariance(t *testing.T, c calibrate.Calibration, kurt float64) {
	t.Helper()
	const batches = 1563
	src := noise.NewSeededInsecure(7)
	var sum, sumSq float64
	y := make([]float64, c.Rows)
	for i := 0; i < batches; i++ {
		clear(y)
		if err := c.Add(src, y); err != nil {
			t.Fatal(err)
		}
		for _, v := range y {
			sum += v
			sumSq += v * v
		}
	}
	n := float64(batches * c.Rows)
	mean := sum / n
	v := sumSq/n - mean*mean
	se := math.Sqrt((kurt - 1) / n)
	if math.Abs(v/c.Variance-1) > 5*se {
		t.Errorf("%v: sample variance %v, calibrated %v (%.2g%% off, allowed %.2g%%)", c.Budget, v, c.Variance, 100*math.Abs(v/c.Variance-1), 500*se)
	}
}

// CalibrateScaled's inflated scales pay for snapping: for the worst
// neighbour at the nominal scales (Σ|δ_k|/b_k = ε, spread over the
// coordinates), Σ(|δ_k| + g_k)/scale_k ≤ ε, checked directly.
func TestCalibrateScaledPaysForSnapping(t *testing.T) {
	nominal := []float64{3, 1.5, 0.7, 0.2, 1e-3}
	for _, eps := range []float64{0.05, 1, 8} {
		c, err := calibrate.CalibrateScaled(calibrate.PureDP(eps), nominal, 0x1p-41)
		if err != nil {
			t.Fatal(err)
		}
		var loss float64
		for k, b := range nominal {
			delta := eps * b / float64(len(nominal)) // contributes ε/K at the nominal scale
			loss += (delta + c.Grids[k]) / c.Scales[k]
			if c.Scales[k] != b*(1+c.Inflation) {
				t.Errorf("eps=%v: scale %v for nominal %v, inflation %v", eps, c.Scales[k], b, c.Inflation)
			}
		}
		if loss > eps {
			t.Errorf("eps=%v: privacy loss %v after snapping exceeds ε", eps, loss)
		}
		// The allowance is what snapping costs, no more: S = Σ g_k/b_k is
		// ~1e-9 here, so τ = S/(ε − S) must stay below 1e-6.
		if !(c.Inflation > 0 && c.Inflation < 1e-6) {
			t.Errorf("eps=%v: inflation %v", eps, c.Inflation)
		}
	}
	if _, err := calibrate.CalibrateScaled(calibrate.ApproxDP(1, 1e-6), nominal, 0); !errors.Is(err, calibrate.ErrInput) {
		t.Errorf("approx budget: %v", err)
	}
	if _, err := calibrate.CalibrateScaled(calibrate.PureDP(1e-12), nominal, 0x1p-41); !errors.Is(err, calibrate.ErrInput) {
		t.Errorf("tiny ε: %v", err)
	}
}
