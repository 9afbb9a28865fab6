package tables

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/dpsolve/dpsolve/internal/testkit/budgettest"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// audit is the sampled hockey-stick audit of package release's tests,
// applied to the released vector of a tables release: measure x (nP
// times) and its neighbour x + e_j (nQ times), project the outputs on
// u = A e_j/‖A e_j‖ (the only direction in which the two distributions
// differ), fit the noise's standard deviation along u, and estimate
// δ̂ = mean over the P samples of (1 − e^{ε − L})₊ = H_{e^ε}(P‖Q) and the
// mean privacy loss E[L] (= ρ for a ρ-zCDP Gaussian: L ~ N(ρ, 2ρ)). The
// tolerance is the empirical-Bernstein bound (one-sided 99.9%) plus the
// effect of moving the fitted σ 3.1 standard errors towards less privacy.
type auditOut struct{ delta, tol, meanLoss, lossSE, fitSigma float64 }

func audit(t *testing.T, r *Release, x []float64, j int, delta, eps float64, nP, nQ int, seed uint64) auditOut {
	t.Helper()
	s := r.Strategy().(KronStrategy)
	e := make([]float64, len(x))
	e[j] = 1
	u, err := s.A.MulVec(e)
	require.NoError(t, err)
	floats.Scale(1/floats.Norm(u, 2), u)
	ax, err := s.A.MulVec(x)
	require.NoError(t, err)
	xq := append([]float64(nil), x...)
	xq[j]++
	src := noise.NewSeededInsecure(seed)
	project := func(in []float64, count int) []float64 {
		out := make([]float64, count)
		for i := range out {
			y, _, _, err := r.measure(context.Background(), Data{Histogram: in}, src, nil)
			require.NoError(t, err)
			floats.Sub(y, ax)
			out[i] = floats.Dot(y, u)
		}
		return out
	}
	tp, tq := project(x, nP), project(xq, nQ)
	muP, varP := stat.MeanVariance(tp, nil)
	_, varQ := stat.MeanVariance(tq, nil)
	sigma := math.Sqrt((varP*float64(nP-1) + varQ*float64(nQ-1)) / float64(nP+nQ-2))
	est := func(sd float64) (mean, variance, ml, lse float64) {
		h, loss := make([]float64, nP), make([]float64, nP)
		for i, v := range tp {
			d := v - muP
			loss[i] = (delta*delta - 2*delta*d) / (2 * sd * sd)
			h[i] = math.Max(0, -math.Expm1(eps-loss[i]))
		}
		mean, variance = stat.MeanVariance(h, nil)
		ml, vl := stat.MeanVariance(loss, nil)
		return mean, variance, ml, math.Sqrt(vl / float64(nP))
	}
	d, v, ml, lse := est(sigma)
	const lnTerm = 7.6 // ln(2/α), α = 1e-3
	bern := math.Sqrt(2*v*lnTerm/float64(nP)) + 7*lnTerm/(3*float64(nP-1))
	worst, _, _, _ := est(sigma * (1 - 3.1*math.Sqrt(1/(2*float64(nP+nQ-2)))))
	return auditOut{delta: d, tol: bern + math.Max(0, worst-d), meanLoss: ml, lossSE: lse, fitSigma: sigma}
}

func TestPrivacyAuditDiscreteGaussianRho(t *testing.T) {
	if testing.Short() {
		t.Skip("1.1·10⁵ audited releases")
	}
	// A 2×2 domain measured by H ⊗ H, H = [1 1; 1 0; 0 1]/√2 (unit column
	// norms, Δ₂ = 1, 9 measurements): the audit sees the real path —
	// Kronecker measurement, calibrate.Calibrate, snapping, the exact
	// discrete Gaussian sampler.
	h := mat.NewDense(3, 2, []float64{1, 1, 1, 0, 0, 1})
	h.Scale(1/math.Sqrt2, h)
	dom := []domain.Attribute{{Name: "a", Size: 2}, {Name: "b", Size: 2}}
	w := &explicitWorkload{Domain: dom, Terms: []explicitTerm{{Name: "m", Weight: 1, Products: []explicitProduct{marginalProduct(dom, []int{0, 1})}}}}
	const rho, eps = 0.125, 1.0 // σ = Δ/√(2ρ) = 2
	r, err := prepare(w, kronStrategy(t, h, h), budgettest.ZCDP(rho))
	require.NoError(t, err)
	x := []float64{3, 7, 0, 12}
	const nP, nQ = 40000, 15000
	sens, _ := r.Sensitivity()
	// The tight (ε,δ) curve of a ρ-zCDP Gaussian mechanism (Balle & Wang's
	// profile; the discrete Gaussian's equals it up to exp(−Ω(s²)) with
	// s ≈ 2^40 grid units).
	claim, err := calibrate.GaussianDelta(sens/math.Sqrt(2*rho), eps, sens)
	require.NoError(t, err)
	a := audit(t, r, x, 0, sens, eps, nP, nQ, 7)
	t.Logf("rho=%g: audited δ̂(ε=1) = %.4g ± %.2g (claim %.4g), mean loss %.4f ± %.2g (ρ = %g), fitted σ %.4f (mechanism %.4f)",
		rho, a.delta, a.tol, claim, a.meanLoss, a.lossSE, rho, a.fitSigma, r.Sigma())
	assert.LessOrEqual(t, a.delta, claim+a.tol, "audit: δ̂ exceeds the ρ-zCDP Gaussian's profile")
	assert.InDelta(t, claim, a.delta, a.tol, "audit does not recover the calibrated δ")
	// The mean privacy loss along the worst direction is ρ itself (the
	// loss of a Gaussian mechanism is N(ρ, 2ρ)); 4 se plus the fitted σ's
	// own relative uncertainty.
	assert.InDelta(t, rho, a.meanLoss, 4*a.lossSE+4*rho*math.Sqrt(2.0/(nP+nQ)))

	// The same release with σ halved must FAIL the audit.
	bad := *r
	bad.cal.Calibrated /= 2
	bad.cal.Scale, err = noise.EffectiveScale(bad.cal.Calibrated, bad.cal.Grid)
	require.NoError(t, err)
	bad.cal.Variance = bad.cal.Scale * bad.cal.Scale
	b := audit(t, &bad, x, 0, sens, eps, nP, nQ, 8)
	t.Logf("σ/2: audited δ̂ = %.4g ± %.2g, mean loss %.4f", b.delta, b.tol, b.meanLoss)
	assert.Greater(t, b.delta, claim+b.tol, "the audit missed a release with half the noise")
	assert.Greater(t, b.meanLoss, rho+4*b.lossSE, "the mean loss missed a release with half the noise")
}
