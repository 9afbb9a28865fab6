package release

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/dpsolve/dpsolve/internal/testkit/budgettest"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// auditResult is the outcome of a sampled privacy audit.
type auditResult struct {
	delta      float64 // estimated hockey-stick divergence H_{e^ε}(P‖Q)
	tolerance  float64 // its one-sided 99.9% sampling tolerance
	meanLoss   float64 // empirical mean of the privacy loss under P
	lossSE     float64 // its standard error
	fitDelta   float64 // fitted distance between the two output means along u
	fitDeltaSE float64 // its standard error
	fitSigma   float64 // fitted noise standard deviation along u
}

// auditGaussian estimates the privacy of a Gaussian mechanism from its
// outputs: it runs m on x (nP times) and on the neighbour x + e_j (nQ
// times), j the column of largest norm (the worst direction), projects the
// outputs onto u = A e_j/‖A e_j‖ (the only direction in which the two output
// distributions differ), fits the noise's standard deviation along u (pooled
// over both runs, each around its own sample mean) and estimates
//
//	δ̂ = mean over the P samples of (1 − e^{ε − L(t)})₊ = H_{e^ε}(P‖Q),
//
// L(t) = log p(t)/q(t) the privacy loss for output means Δ = ‖A e_j‖ apart
// (the query difference is known; the noise is what is audited) and the
// fitted σ. The tolerance combines the empirical-Bernstein bound for a mean
// of [0,1] terms (Maurer & Pontil 2009, one-sided at 99.9%) with the effect
// of the fitted σ, taken by re-evaluating δ̂ at σ moved 3.1 standard errors
// towards less privacy. The fitted mean difference is reported so callers
// can check it against Δ.
func auditGaussian(t *testing.T, m *Mechanism, x []float64, eps float64, nP, nQ int, seed uint64) auditResult {
	t.Helper()
	a := m.Strategy()
	p, n := a.Dims()
	j, best := 0, 0.0
	for c := 0; c < n; c++ {
		if v := floats.Norm(mat.Col(nil, c, a), 2); v > best {
			j, best = c, v
		}
	}
	u := mat.Col(nil, j, a)
	floats.Scale(1/best, u)
	ax := make([]float64, p)
	mat.NewVecDense(p, ax).MulVec(a, mat.NewVecDense(n, x))
	xq := append([]float64(nil), x...)
	xq[j]++
	project := func(in []float64, count int, s *noise.Sampler) []float64 {
		out := make([]float64, count)
		for i := range out {
			y, err := m.Measure(in, s)
			require.NoError(t, err)
			floats.Sub(y, ax)
			out[i] = floats.Dot(y, u)
		}
		return out
	}
	s := noise.NewSeededInsecure(seed)
	tp, tq := project(x, nP, s), project(xq, nQ, s)
	muP, varP := stat.MeanVariance(tp, nil)
	muQ, varQ := stat.MeanVariance(tq, nil)
	sigma := math.Sqrt((varP*float64(nP-1) + varQ*float64(nQ-1)) / float64(nP+nQ-2))
	estimate := func(delta, sd float64) (mean, variance, meanLoss, lossSE float64) {
		h := make([]float64, nP)
		loss := make([]float64, nP)
		for i, v := range tp {
			// L = [(t − μ_Q)² − (t − μ_P)²]/(2σ²) with μ_Q = μ_P + Δ.
			d := v - muP
			loss[i] = (delta*delta - 2*delta*d) / (2 * sd * sd)
			h[i] = math.Max(0, -math.Expm1(eps-loss[i]))
		}
		mean, variance = stat.MeanVariance(h, nil)
		ml, vl := stat.MeanVariance(loss, nil)
		return mean, variance, ml, math.Sqrt(vl / float64(nP))
	}
	fitDelta := muQ - muP
	dHat, vHat, ml, lse := estimate(best, sigma)
	const lnTerm = 7.6 // ln(2/α) for α = 1e-3
	bernstein := math.Sqrt(2*vHat*lnTerm/float64(nP)) + 7*lnTerm/(3*float64(nP-1))
	seSigmaRel := math.Sqrt(1 / (2 * float64(nP+nQ-2)))
	worst, _, _, _ := estimate(best, sigma*(1-3.1*seSigmaRel))
	return auditResult{
		delta:     dHat,
		tolerance: bernstein + math.Max(0, worst-dHat),
		meanLoss:  ml, lossSE: lse,
		fitDelta: fitDelta, fitDeltaSE: sigma * math.Sqrt(1/float64(nP)+1/float64(nQ)),
		fitSigma: sigma,
	}
}

func TestPrivacyAuditGaussian(t *testing.T) {
	// H2 on two cells (A = [1 1; 1 0; 0 1], Δ₂ = √2, p = 3) keeps each
	// release cheap enough for 10⁵ audited runs; the audit sees the real
	// Measure path: snapping, discrete Gaussian, calibration.
	a := h2Matrix(t, 2)
	x := []float64{3, 7}
	const nP, nQ = 100000, 20000
	eps := 1.0

	for _, tc := range []struct {
		delta float64
		seed  uint64
	}{{1e-6, 101}, {1e-2, 102}} {
		m, err := New(a, budgettest.ApproxDP(eps, tc.delta))
		require.NoError(t, err)
		r := auditGaussian(t, m, x, eps, nP, nQ, tc.seed)
		t.Logf("delta=%g: audited δ̂ = %.3g ± %.2g (fit Δ=%.4f σ=%.4f; mechanism Δ=%.4f σ=%.4f)",
			tc.delta, r.delta, r.tolerance, r.fitDelta, r.fitSigma, m.Sensitivity(), m.Sigma())
		assert.LessOrEqual(t, r.delta, tc.delta+r.tolerance, "audit: δ̂ exceeds δ beyond sampling tolerance")
		// The audit is not just an upper bound: where δ is large enough to be
		// measured with 10⁵ samples it recovers the calibrated δ.
		if tc.delta >= 1e-3 {
			assert.InDelta(t, tc.delta, r.delta, r.tolerance, "audit does not recover δ")
		}
		// The outputs' means differ by exactly the query difference ‖A e_j‖
		// (unbiased noise), checked at 4 standard errors.
		assert.InDelta(t, m.Sensitivity(), r.fitDelta, 4*r.fitDeltaSE)
		// The privacy-loss distribution of the Gaussian mechanism along the
		// worst direction is N(μ, 2μ), μ = Δ²/(2σ²).
		mu := m.Sensitivity() * m.Sensitivity() / (2 * m.NoiseVariance())
		assert.InDelta(t, mu, r.meanLoss, 4*r.lossSE+4*mu*math.Sqrt(2.0/(nP+nQ)))
	}

	// A deliberately mis-calibrated mechanism — σ halved — must FAIL the
	// same audit.
	m, err := New(a, budgettest.ApproxDP(eps, 1e-6))
	require.NoError(t, err)
	bad := *m
	bad.cal.Calibrated = m.cal.Calibrated / 2
	bad.cal.Scale, err = noise.EffectiveScale(bad.cal.Calibrated, bad.cal.Grid)
	require.NoError(t, err)
	bad.cal.Variance = bad.cal.Scale * bad.cal.Scale
	r := auditGaussian(t, &bad, x, eps, nP, nQ, 103)
	trueDelta, err := calibrate.GaussianDelta(bad.cal.Scale, eps, m.Sensitivity())
	require.NoError(t, err)
	t.Logf("σ/2: audited δ̂ = %.3g ± %.2g (exact δ of the broken mechanism %.3g)", r.delta, r.tolerance, trueDelta)
	assert.Greater(t, r.delta, 1e-6+r.tolerance, "the audit failed to catch a mechanism with half the noise")
	assert.InDelta(t, trueDelta, r.delta, r.tolerance)
}
