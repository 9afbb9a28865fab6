package calibrate

import (
	"math"
	"testing"

	"github.com/google/differential-privacy/go/v3/noise"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scipyReference holds the exact analytic-Gaussian σ for unit sensitivity,
// computed independently with SciPy (brentq on log δ(σ) with ndtr/log_ndtr,
// xtol=rtol=1e-15):
//
//	def delta(s, eps):
//	    a, b = 1/(2*s), eps*s
//	    return ndtr(a-b) - np.exp(eps + log_ndtr(-a-b))
var scipyReference = []struct{ eps, delta, sigma float64 }{
	{0.1, 0.001, 17.4043962030312},
	{0.1, 1e-06, 36.3046904261963},
	{0.1, 1e-10, 54.206295836901},
	{0.5, 0.001, 4.61012795072814},
	{0.5, 1e-06, 8.05761848072502},
	{0.5, 1e-10, 11.4362399950919},
	{0.9, 0.001, 2.8127255538331},
	{0.9, 1e-06, 4.65884647759529},
	{0.9, 1e-10, 6.4926486151102},
	{1, 0.001, 2.57465701863721},
	{1, 1e-06, 4.22467888932684},
	{1, 1e-10, 5.86777774963055},
	{2, 0.001, 1.44523916092978},
	{2, 1e-06, 2.23047627118642},
	{2, 1e-10, 3.02579354409467},
	{8, 0.001, 0.48001375248011},
	{8, 1e-06, 0.652935384358216},
	{8, 1e-10, 0.83398922953799},
}

func TestGaussianSigmaMatchesSciPy(t *testing.T) {
	for _, c := range scipyReference {
		for _, sens := range []float64{1, 3.5} {
			got, err := GaussianSigma(c.eps, c.delta, sens)
			require.NoError(t, err)
			// The SciPy root is accurate to ~1e-12 relative (ndtr's absolute
			// error ~1e-16 against a δ slope of order δ/σ); 1e-9 leaves
			// margin and is still six orders below Google's 1e-3 accuracy.
			assert.InDelta(t, 1, got/(c.sigma*sens), 1e-9, "eps=%v delta=%v sens=%v", c.eps, c.delta, sens)
		}
	}
}

func TestGaussianSigmaMatchesGoogleDP(t *testing.T) {
	// Google's noise.SigmaForGaussian bisects the same Theorem 8 condition to a
	// relative accuracy of 1e-3 and returns the upper end of its bracket, so
	// its value lies in [σ*, (1+1e-3)σ*] for the exact root σ*.
	for _, eps := range []float64{0.05, 0.3, 1, 2.5, 10} {
		for _, delta := range []float64{1e-2, 1e-5, 1e-9, 1e-14} {
			for _, sens := range []float64{0.25, 1, 7} {
				ours, err := GaussianSigma(eps, delta, sens)
				require.NoError(t, err)
				google := noise.SigmaForGaussian(1, sens, eps, delta)
				assert.InDelta(t, 1, google/ours, 1e-3, "eps=%v delta=%v", eps, delta)
				// ours is the (near-)exact root, so it may not exceed Google's
				// conservative upper bracket end beyond our own 1e-13.
				assert.LessOrEqual(t, ours, google*(1+1e-13), "eps=%v delta=%v", eps, delta)
			}
		}
	}
}

func TestGaussianSigmaIsTightAndValid(t *testing.T) {
	for _, eps := range []float64{1e-3, 0.1, 1, 5, 50, 800} {
		for _, delta := range []float64{0.5, 1e-3, 1e-8, 1e-15, 1e-30} {
			sigma, err := GaussianSigma(eps, delta, 2)
			require.NoError(t, err)
			require.False(t, math.IsNaN(sigma) || math.IsInf(sigma, 0))
			d, err := GaussianDelta(sigma, eps, 2)
			require.NoError(t, err)
			// Valid: the returned σ achieves δ (never above it).
			assert.LessOrEqual(t, d, delta, "eps=%v delta=%v", eps, delta)
			// Tight: a σ 1e-9 relative smaller already violates δ, i.e. σ is
			// the minimum to 1e-9 (the bisection stops at 1e-14; δ's own
			// evaluation rounding limits what can be asserted).
			dLess, err := GaussianDelta(sigma*(1-1e-9), eps, 2)
			require.NoError(t, err)
			assert.Greater(t, dLess, delta*(1+1e-12), "eps=%v delta=%v", eps, delta)
		}
	}
}

func TestAnalyticBelowClassic(t *testing.T) {
	for _, eps := range []float64{0.01, 0.1, 0.5, 0.9, 0.999} {
		for _, delta := range []float64{0.1, 1e-3, 1e-6, 1e-10, 1e-20} {
			a, err := GaussianSigma(eps, delta, 1.7)
			require.NoError(t, err)
			c, err := ClassicGaussianSigma(eps, delta, 1.7)
			require.NoError(t, err)
			assert.Less(t, a, c, "eps=%v delta=%v", eps, delta)
			// Cross-check with the closed form.
			assert.InDelta(t, 1.7*math.Sqrt(2*math.Log(1.25/delta))/eps, c, 1e-12*c)
			// The classic σ is valid (Dwork & Roth Theorem A.1), so the exact
			// privacy profile at the classic σ must already be below δ.
			d, err := GaussianDelta(c, eps, 1.7)
			require.NoError(t, err)
			assert.Less(t, d, delta)
		}
	}
}

func TestZCDPAndLaplace(t *testing.T) {
	s, err := ZCDPSigma(0.5, 2)
	require.NoError(t, err)
	assert.InDelta(t, 2.0, s, 1e-15) // σ² = 4/(2·0.5) = 4
	s, err = ZCDPSigma(0.02, 1)
	require.NoError(t, err)
	assert.InDelta(t, 1/(2*0.02), s*s, 1e-12)
	b, err := LaplaceScale(0.5, 3)
	require.NoError(t, err)
	assert.Equal(t, 6.0, b)
}

func TestBadInputs(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, eps := range []float64{0, -1, nan, inf} {
		_, err := GaussianSigma(eps, 1e-6, 1)
		assert.ErrorIs(t, err, ErrInput, "epsilon", "eps=%v", eps)
		_, err = ClassicGaussianSigma(eps, 1e-6, 1)
		assert.ErrorIs(t, err, ErrInput, "epsilon")
		_, err = LaplaceScale(eps, 1)
		assert.ErrorIs(t, err, ErrInput, "epsilon")
		_, err = GaussianDelta(1, eps, 1)
		assert.ErrorIs(t, err, ErrInput, "epsilon")
	}
	for _, delta := range []float64{0, 1, -0.1, 1.5, nan} {
		_, err := GaussianSigma(1, delta, 1)
		assert.ErrorIs(t, err, ErrInput, "delta", "delta=%v", delta)
		_, err = ClassicGaussianSigma(0.5, delta, 1)
		assert.ErrorIs(t, err, ErrInput, "delta")
	}
	for _, rho := range []float64{0, -1, nan, inf} {
		_, err := ZCDPSigma(rho, 1)
		assert.ErrorIs(t, err, ErrInput, "rho")
	}
	for _, s := range []float64{0, -2, nan, inf} {
		_, err := GaussianSigma(1, 1e-6, s)
		assert.ErrorIs(t, err, ErrInput, "sensitivity")
		_, err = ZCDPSigma(1, s)
		assert.ErrorIs(t, err, ErrInput, "sensitivity")
		_, err = LaplaceScale(1, s)
		assert.ErrorIs(t, err, ErrInput, "sensitivity")
	}
	_, err := ClassicGaussianSigma(1, 1e-6, 1)
	assert.ErrorIs(t, err, ErrInput, "epsilon < 1")
	_, err = GaussianDelta(0, 1, 1)
	assert.ErrorIs(t, err, ErrInput, "sigma")
}

func TestProfileQuadratureMatchesClosedForm(t *testing.T) {
	// Where the closed form Φ(a−b) − e^ε Φ(−a−b) suffers little cancellation
	// (its two terms within a factor ~100 of δ), it is an independent check
	// of the quadrature used by GaussianDelta. Its own error is ~1e-16·Φ(a−b)/δ
	// ≤ 1e-13 relative here, so 1e-10 is a safe bound.
	phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	for _, eps := range []float64{0.5, 1, 3} {
		for _, sigma := range []float64{0.3, 0.8, 1.5, 3, 6} {
			a, b := 1/(2*sigma), eps*sigma
			first := phi(a - b)
			closed := first - math.Exp(eps)*phi(-a-b)
			if closed <= 0 || first/closed > 100 {
				continue
			}
			got, err := GaussianDelta(sigma*2, eps, 2) // sensitivity scales out
			require.NoError(t, err)
			assert.InDelta(t, 1, got/closed, 1e-10, "eps=%v sigma=%v", eps, sigma)
		}
	}
}
