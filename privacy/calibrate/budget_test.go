package calibrate_test

import (
	"errors"
	"math"
	"testing"

	"github.com/dpsolve/dpsolve/internal/testkit/budgettest"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// Every constructor goes through New, which validates once: a Budget that
// exists is valid, so the invalid parameter sets are refused here, at
// construction, and the consumers only ever meet the zero Budget.
func TestBudgetValidate(t *testing.T) {
	good := []struct {
		b               calibrate.Budget
		kind            calibrate.Kind
		eps, delta, rho float64
	}{
		{budgettest.PureDP(0.5), calibrate.Pure, 0.5, 0, 0},
		{budgettest.ApproxDP(1, 1e-6), calibrate.Approx, 1, 1e-6, 0},
		{budgettest.ZCDP(0.1), calibrate.Concentrated, 0, 0, 0.1},
	}
	for _, g := range good {
		b := g.b
		if b.IsZero() || b.Kind() != g.kind || b.Epsilon() != g.eps || b.Delta() != g.delta || b.Rho() != g.rho {
			t.Errorf("%v: kind %q ε %v δ %v ρ %v, want %q %v %v %v", b, b.Kind(), b.Epsilon(), b.Delta(), b.Rho(), g.kind, g.eps, g.delta, g.rho)
		}
		if nb, err := calibrate.New(g.kind, g.eps, g.delta, g.rho); err != nil || nb != b {
			t.Errorf("New(%q, %v, %v, %v) = %v, %v; want %v", g.kind, g.eps, g.delta, g.rho, nb, err, b)
		}
	}
	second := func(_ calibrate.Budget, err error) error { return err }
	bad := map[string]error{
		"eps 0":            second(calibrate.PureDP(0)),
		"eps NaN":          second(calibrate.PureDP(math.NaN())),
		"eps Inf":          second(calibrate.ApproxDP(math.Inf(1), 1e-6)),
		"delta 0":          second(calibrate.ApproxDP(1, 0)),
		"delta 1":          second(calibrate.ApproxDP(1, 1)),
		"delta NaN":        second(calibrate.ApproxDP(1, math.NaN())),
		"pure with delta":  second(calibrate.New(calibrate.Pure, 1, 1e-6, 0)),
		"approx with rho":  second(calibrate.New(calibrate.Approx, 1, 1e-6, 1)),
		"rho 0":            second(calibrate.ZCDP(0)),
		"rho -1":           second(calibrate.ZCDP(-1)),
		"zcdp with eps":    second(calibrate.New(calibrate.Concentrated, 1, 0, 1)),
		"unknown kind":     second(calibrate.New("renyi", 1, 0, 0)),
		"no kind":          second(calibrate.New("", 0, 0, 0)),
		"pure with rho":    second(calibrate.New(calibrate.Pure, 1, 0, 0.5)),
		"zcdp with delta":  second(calibrate.New(calibrate.Concentrated, 0, 1e-9, 1)),
		"approx delta < 0": second(calibrate.ApproxDP(1, -1e-9)),
	}
	for name, err := range bad {
		if !errors.Is(err, calibrate.ErrInput) {
			t.Errorf("%s: got %v, want an error wrapping ErrInput", name, err)
		}
	}
	// The zero Budget is "no budget": every consumer refuses it.
	var zero calibrate.Budget
	if !zero.IsZero() || zero.String() != "no budget" {
		t.Errorf("zero Budget: IsZero %v, String %q", zero.IsZero(), zero)
	}
	if _, err := calibrate.Calibrate(zero, 1, 4); !errors.Is(err, calibrate.ErrNoBudget) || !errors.Is(err, calibrate.ErrInput) {
		t.Errorf("Calibrate(zero): got %v, want ErrNoBudget wrapping ErrInput", err)
	}
	for name, err := range map[string]error{
		"Scale":           second2(calibrate.Scale(zero, 1)),
		"CalibrateScaled": second2(calibrate.CalibrateScaled(zero, []float64{1}, 0)),
		"ZCDPRho":         second2(zero.ZCDPRho()),
		"ApproxEpsilon":   second2(zero.ApproxEpsilon(1e-6)),
		"Split":           second(zero.Split(2)),
		"Share":           second(zero.Share(0.5)),
	} {
		if !errors.Is(err, calibrate.ErrNoBudget) {
			t.Errorf("%s(zero): got %v, want ErrNoBudget", name, err)
		}
	}
}

func second2[T any](_ T, err error) error { return err }

// The zCDP ⇒ (ε,δ)-DP conversion is checked against the exact privacy
// profile of the Gaussian mechanism that is ρ-zCDP (σ = 1/√(2ρ) at unit
// sensitivity; Balle & Wang's Theorem 8, an independent computation): the
// converted ε must be sound (profile ≤ δ) and, being a bound, not tighter
// than the exact ε — the profile at 0.9·ε must exceed δ for these
// parameters, so a conversion that returned too small an ε would fail.
func TestZCDPToApproxIsSound(t *testing.T) {
	for _, rho := range []float64{0.01, 0.125, 0.5, 2} {
		for _, delta := range []float64{1e-3, 1e-6, 1e-10} {
			eps, err := budgettest.ZCDP(rho).ApproxEpsilon(delta)
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
		rho, err := budgettest.PureDP(eps).ZCDPRho()
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
	if _, err := budgettest.ApproxDP(1, 1e-6).ZCDPRho(); !errors.Is(err, calibrate.ErrInput) {
		t.Errorf("(ε,δ) → zCDP: %v, want ErrInput", err)
	}
	if eps, err := budgettest.PureDP(0.7).ApproxEpsilon(1e-6); err != nil || eps != 0.7 {
		t.Errorf("pure → approx: %v, %v", eps, err)
	}
	if _, err := budgettest.ApproxDP(1, 1e-5).ApproxEpsilon(1e-6); !errors.Is(err, calibrate.ErrInput) {
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
		{budgettest.PureDP(0.5), sens / 0.5, func(s, d float64) float64 { return d / s }, 0.5, 1e-14, 6},
		{budgettest.ApproxDP(1, 1e-6), sens * sigma1, func(s, d float64) float64 { return s / d }, sigma1, 2e-12, 3},
		{budgettest.ZCDP(0.1), sens / math.Sqrt(0.2), func(s, d float64) float64 { return d * d / (2 * s * s) }, 0.1, 1e-14, 3},
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
		if b.Kind() == calibrate.Pure {
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
		if b.Kind() == calibrate.Approx {
			if d, _ := calibrate.GaussianDelta(c.Calibrated, b.Epsilon(), c.SnappedSensitivity); d > b.Delta() {
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
	if _, err := calibrate.Calibrate(budgettest.PureDP(1), 0, 3); !errors.Is(err, calibrate.ErrInput) {
		t.Errorf("zero sensitivity: %v", err)
	}
	if _, err := calibrate.Calibrate(budgettest.PureDP(1), 1, 0); !errors.Is(err, calibrate.ErrInput) {
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
		c, err := calibrate.CalibrateScaled(budgettest.PureDP(eps), nominal, 0x1p-41)
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
	if _, err := calibrate.CalibrateScaled(budgettest.ApproxDP(1, 1e-6), nominal, 0); !errors.Is(err, calibrate.ErrInput) {
		t.Errorf("approx budget: %v", err)
	}
	if _, err := calibrate.CalibrateScaled(budgettest.PureDP(1e-12), nominal, 0x1p-41); !errors.Is(err, calibrate.ErrInput) {
		t.Errorf("tiny ε: %v", err)
	}
}
