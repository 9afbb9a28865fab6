package lrm

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// checkBudget checks b against the decomposition's ball: the ℓ1 ball
// (Laplace noise) needs a pure ε-DP budget, the ℓ2 ball (Gaussian noise) an
// (ε,δ)-DP or ρ-zCDP budget.
func (r *Result) checkBudget(b calibrate.Budget) error {
	if b.IsZero() {
		return calibrate.ErrNoBudget
	}
	switch r.ball {
	case l1:
		if b.Kind() != calibrate.Pure {
			return inputerr.Errorf("lrm", "the ℓ1 (Laplace) decomposition needs a pure ε-DP budget, got %v", b)
		}
	case l2:
		if b.Kind() == calibrate.Pure {
			return inputerr.Errorf("lrm", "the ℓ2 (Gaussian) decomposition needs an (ε,δ)-DP or zCDP budget, got %v", b)
		}
	default:
		return inputerr.Errorf("lrm", "unknown ball %d", int(r.ball))
	}
	return nil
}

// NoiseVariance returns the variance of each measurement's noise for budget
// b at the decomposition's sensitivity Δ(L): 2(Δ₁/ε)² for Laplace, σ² with
// σ the analytic Gaussian (Balle & Wang 2018) or zCDP scale for Δ₂ for
// Gaussian (calibrate.Scale).
// (Answer calibrates to the snapped sensitivity, larger by a relative
// ~2⁻⁴⁰·r; its Release reports the variance actually used.)
func (r *Result) NoiseVariance(b calibrate.Budget) (float64, error) {
	if err := r.checkBudget(b); err != nil {
		return 0, err
	}
	s, err := calibrate.Scale(b, r.Sensitivity)
	if err != nil {
		return 0, err
	}
	if r.ball == l1 {
		return 2 * s * s, nil
	}
	return s * s, nil
}

// ExpectedNoiseError returns the expected total squared error of the m
// answers caused by the noise, NoiseVariance·Φ: the whole expected error when
// W = BL exactly. It does not depend on the data.
func (r *Result) ExpectedNoiseError(b calibrate.Budget) (float64, error) {
	v, err := r.NoiseVariance(b)
	if err != nil {
		return 0, err
	}
	return v * r.Objective, nil
}

// StructuralError returns ‖(W − BL)·x‖²₂, the squared bias of the answers
// on data x. It depends on the private data: use it for analysis and tests,
// never publish it.
func (r *Result) StructuralError(x []float64) (float64, error) {
	if r.w == nil {
		return 0, inputerr.Errorf("lrm", "result carries no workload (build it with Solve)")
	}
	if err := checkData(x, r.L); err != nil {
		return 0, err
	}
	m, _ := r.w.Dims()
	xv := mat.NewVecDense(len(x), x)
	var lx, blx, wx mat.VecDense
	lx.MulVec(r.L, xv)
	blx.MulVec(r.B, &lx)
	wx.MulVec(r.w, xv)
	var s float64
	for i := 0; i < m; i++ {
		d := wx.AtVec(i) - blx.AtVec(i)
		s += d * d
	}
	return s, nil
}

// StructuralBound returns ‖W − BL‖²_F, so that StructuralError(x) ≤
// StructuralBound·‖x‖²₂ for every x (the seed's Cauchy–Schwarz bound).
func (r *Result) StructuralBound() (float64, error) {
	if r.w == nil {
		return 0, inputerr.Errorf("lrm", "result carries no workload (build it with Solve)")
	}
	var d mat.Dense
	d.Mul(r.B, r.L)
	d.Sub(r.w, &d)
	f := mat.Norm(&d, 2)
	return f * f, nil
}

// ExpectedError returns the expected total squared error of the answers on
// data x, ExpectedNoiseError + StructuralError(x) (the seed's relaxed-
// decomposition theorem with the structural part computed exactly). Like
// StructuralError it depends on the private data.
func (r *Result) ExpectedError(b calibrate.Budget, x []float64) (float64, error) {
	e, err := r.ExpectedNoiseError(b)
	if err != nil {
		return 0, err
	}
	s, err := r.StructuralError(x)
	if err != nil {
		return 0, err
	}
	return e + s, nil
}

// Release is one run of the mechanism.
type Release struct {
	// Measurements is y = L·x + noise (r values): the private release.
	Measurements []float64
	// Answers is B·y (m values), post-processing of y.
	Answers []float64
	// Mechanism is "laplace" or "gaussian".
	Mechanism string
	// Sensitivity is the snapped sensitivity the noise is calibrated to
	// (Δ(L) plus the snapping allowance, see package noise).
	Sensitivity float64
	// Scale is the noise scale actually used: the Laplace b or the Gaussian
	// σ; Grid is the snapping granularity.
	Scale, Grid float64
	// Variance is the noise variance per measurement actually used (2b² or
	// σ²), and ExpectedNoiseError = Variance·Φ the expected total squared
	// noise error of Answers.
	Variance, ExpectedNoiseError float64
}

// Answer runs the mechanism on the histogram x (length n, finite,
// non-negative counts): it releases y = L·x + noise with noise from s
// calibrated to L's sensitivity for budget b, and returns the answers B·y.
// Use noise.NewSecure() for a real release; noise.NewSeededInsecure gives
// reproducible, NOT private, noise for simulations and tests.
func (r *Result) Answer(x []float64, b calibrate.Budget, s noise.Source) (*Release, error) {
	if err := r.checkBudget(b); err != nil {
		return nil, err
	}
	if noise.Missing(s) {
		return nil, inputerr.Errorf("lrm", "nil noise source")
	}
	if err := checkData(x, r.L); err != nil {
		return nil, err
	}
	rows, _ := r.L.Dims()
	y := make([]float64, rows)
	yv := mat.NewVecDense(rows, y)
	yv.MulVec(r.L, mat.NewVecDense(len(x), x))
	c, err := calibrate.Calibrate(b, r.Sensitivity, rows)
	if err != nil {
		return nil, err
	}
	if err := c.Add(s, y); err != nil {
		return nil, err
	}
	rel := &Release{Mechanism: string(c.Noise), Sensitivity: c.SnappedSensitivity, Scale: c.Scale, Grid: c.Grid, Variance: c.Variance}
	m, _ := r.B.Dims()
	ans := mat.NewVecDense(m, nil)
	ans.MulVec(r.B, yv)
	rel.Measurements = y
	rel.Answers = ans.RawVector().Data
	rel.ExpectedNoiseError = rel.Variance * r.Objective
	return rel, nil
}

// checkData validates a histogram for L (r×n).
func checkData(x []float64, l *mat.Dense) error {
	_, n := l.Dims()
	if len(x) != n {
		return inputerr.Errorf("lrm", "data has %d cells, the workload has n = %d", len(x), n)
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return inputerr.Errorf("lrm", "data cell %d is %v, not finite", i, v)
		}
		if v < 0 {
			return inputerr.Errorf("lrm", "data cell %d is %v, a negative count", i, v)
		}
	}
	return nil
}

// ErrInput is wrapped by every error this package returns for bad input
// (workload, options, budget, data); it is the one dpsolve-wide sentinel
// (internal/inputerr), so the command line needs no checks of its own.
var ErrInput = inputerr.ErrInput
