// Package accounting computes the expected error of answering a workload of
// linear queries with the matrix mechanism, and the lower bounds it is judged
// against.
//
// A workload W (m×n, Gram V = WᵀW) is answered through a strategy A (p×n,
// Gram X = AᵀA): the curator releases y = A·x + z and the analyst reconstructs
// W·A⁺·y. With z calibrated to A's sensitivity the release is differentially
// private, and the reconstruction is post-processing, so the answers are too:
//
//   - Gaussian noise, (ε,δ)-DP: z ~ N(0, σ²Δ₂(A)²·I), Δ₂ the largest column
//     2-norm of A and σ the unit-sensitivity scale from package calibrate
//     (the analytic Gaussian mechanism of Balle & Wang 2018, or the classic
//     √(2 ln(1.25/δ))/ε). Expected total squared error
//     σ²·Δ₂(A)²·tr(W X⁺ Wᵀ) = σ²·Δ₂(A)²·tr(V X⁺).
//   - Laplace noise, ε-DP: i.i.d. Laplace(Δ₁(A)/ε), Δ₁ the largest column
//     1-norm. Expected total squared error 2·Δ₁(A)²/ε²·tr(V X⁺).
//
// The trace uses the pseudo-inverse, which is correct whenever every query
// lies in the row space of A (then W A⁺ A = W and the answers are unbiased);
// when it does not, the strategy cannot answer the workload and Evaluate
// returns ErrUnsupported rather than a misleading number.
//
// Per-query RMSE is √(total/m). The literature also reports the unit-noise
// RMSE √(tr(V X⁺)·max diag(X)/m), i.e. the Gaussian error with σ = 1
// (McKenna et al., VLDB 2018). The SVD bound (Σσᵢ(W))²/n = (tr V^{1/2})²/n
// (Li & Miklau 2012) is a lower bound on Δ₂(A)²·tr(V X⁺) over every strategy
// A; multiplied by σ² it bounds the Gaussian error of every matrix-mechanism
// strategy, and since Δ₁ ≥ Δ₂, multiplied by 2/ε² it bounds the Laplace error.
package accounting

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

// Matrix is what accounting reads of a matrix-mechanism strategy A (p×n):
// its size, its Gram X = AᵀA and its sensitivities. Package strategy's
// baselines satisfy it; accounting declares it itself so that the error
// formulas do not import a solver (strategy's optimized baseline links
// newton and its kernels).
type Matrix interface {
	// Name is a short description, e.g. "h2(n=1024)".
	Name() string
	// Domain is n, the number of histogram cells (columns of A).
	Domain() int
	// Rows is p, the number of measurements (rows of A).
	Rows() int
	// Gram returns X = AᵀA (n×n).
	Gram() *mat.SymDense
	// L2Sensitivity is Δ₂(A) = max_j ‖A_{:,j}‖₂.
	L2Sensitivity() float64
	// L1Sensitivity is Δ₁(A) = max_j ‖A_{:,j}‖₁.
	L1Sensitivity() float64
}

// ErrUnsupported reports a strategy whose row space does not contain the
// workload: some query cannot be reconstructed from its measurements.
var ErrUnsupported = errors.New("strategy does not support the workload")

// Calibration selects how the Gaussian σ is computed.
type Calibration string

const (
	// Analytic is the analytic Gaussian mechanism (Balle & Wang 2018), the
	// smallest σ that is (ε,δ)-DP.
	Analytic Calibration = "analytic"
	// Classic is σ = √(2 ln(1.25/δ))/ε (Dwork & Roth 2014), proven for ε < 1.
	Classic Calibration = "classic"
)

// Noise is a calibrated noise distribution at unit sensitivity.
type Noise struct {
	// Budget is the privacy budget the noise meets (calibrate's one budget
	// type: its Epsilon and Delta are what reports print).
	Budget calibrate.Budget
	// Mechanism is the noise model (calibrate's one NoiseKind).
	Mechanism   calibrate.NoiseKind
	Calibration Calibration // "" for Laplace
	// Scale is σ (Gaussian, for L2 sensitivity 1) or b = 1/ε (Laplace, for
	// L1 sensitivity 1).
	Scale float64
}

// GaussianNoise returns the (ε,δ)-DP Gaussian noise at unit L2 sensitivity.
func GaussianNoise(eps, delta float64, cal Calibration) (Noise, error) {
	var sigma float64
	var err error
	switch cal {
	case Analytic, "":
		cal = Analytic
		sigma, err = calibrate.GaussianSigma(eps, delta, 1)
	case Classic:
		sigma, err = calibrate.ClassicGaussianSigma(eps, delta, 1)
	default:
		return Noise{}, inputerr.Errorf("accounting", "unknown Gaussian calibration %q (want analytic or classic)", cal)
	}
	if err != nil {
		return Noise{}, fmt.Errorf("accounting: %w", err)
	}
	b, err := calibrate.ApproxDP(eps, delta) // valid: the calibration accepted eps and delta
	if err != nil {
		return Noise{}, fmt.Errorf("accounting: %w", err)
	}
	return Noise{Budget: b, Mechanism: calibrate.Gaussian, Calibration: cal, Scale: sigma}, nil
}

// LaplaceNoise returns the ε-DP Laplace noise at unit L1 sensitivity.
func LaplaceNoise(eps float64) (Noise, error) {
	scale, err := calibrate.LaplaceScale(eps, 1)
	if err != nil {
		return Noise{}, fmt.Errorf("accounting: %w", err)
	}
	b, err := calibrate.PureDP(eps)
	if err != nil {
		return Noise{}, fmt.Errorf("accounting: %w", err)
	}
	return Noise{Budget: b, Mechanism: calibrate.Laplace, Scale: scale}, nil
}

// NoiseFor returns the unit-sensitivity noise that meets budget b: Laplace
// for pure ε-DP, Gaussian with calibration cal ("" or Analytic, or Classic)
// for (ε,δ)-DP, and the zCDP Gaussian σ = 1/√(2ρ) for ρ-zCDP.
func NoiseFor(b calibrate.Budget, cal Calibration) (Noise, error) {
	if b.IsZero() {
		return Noise{}, calibrate.ErrNoBudget
	}
	switch b.Kind() {
	case calibrate.Pure:
		return LaplaceNoise(b.Epsilon())
	case calibrate.Approx:
		return GaussianNoise(b.Epsilon(), b.Delta(), cal)
	}
	sigma, err := calibrate.ZCDPSigma(b.Rho(), 1)
	if err != nil {
		return Noise{}, err
	}
	return Noise{Budget: b, Mechanism: calibrate.Gaussian, Scale: sigma}, nil
}

// UnitVariance is the noise variance per measurement at unit sensitivity:
// σ² (Gaussian) or 2b² (Laplace).
func (nz Noise) UnitVariance() float64 {
	if nz.Mechanism == calibrate.Laplace {
		return 2 * nz.Scale * nz.Scale
	}
	return nz.Scale * nz.Scale
}

// Sensitivity returns the sensitivity of s that this noise is calibrated to:
// Δ₂ (Gaussian) or Δ₁ (Laplace).
func (nz Noise) Sensitivity(s Matrix) float64 {
	if nz.Mechanism == calibrate.Laplace {
		return s.L1Sensitivity()
	}
	return s.L2Sensitivity()
}

func (nz Noise) valid() error {
	if nz.Mechanism != calibrate.Gaussian && nz.Mechanism != calibrate.Laplace {
		return inputerr.Errorf("accounting", "unknown mechanism %q", nz.Mechanism)
	}
	if !(nz.Scale > 0) || math.IsInf(nz.Scale, 0) {
		return inputerr.Errorf("accounting", "noise scale must be positive and finite, got %v (derive it from the privacy budget: Gaussian σ or Laplace b)", nz.Scale)
	}
	return nil
}

// Report is the expected error of one strategy on one workload.
type Report struct {
	Strategy string
	// N, M and Rows are the domain size, the number of queries and the
	// number of measurements (0 when not a matrix-mechanism strategy).
	N, M, Rows int
	// Trace is tr(V X⁺) = tr(W (AᵀA)⁺ Wᵀ) (NaN when not applicable).
	Trace float64
	// L2Sensitivity and L1Sensitivity are Δ₂(A) and Δ₁(A).
	L2Sensitivity, L1Sensitivity float64
	// UnitRMSE is √(Trace·Δ₂²/m), the RMSE with unit Gaussian noise.
	UnitRMSE float64
	// TotalError is the expected total squared error Σ_q E(answer_q − true_q)²
	// under the noise.
	TotalError float64
	// RMSE is √(TotalError/m), the root mean squared error per query.
	RMSE float64
}

// RatioTo returns r.RMSE / o.RMSE.
func (r *Report) RatioTo(o *Report) float64 { return r.RMSE / o.RMSE }

// NewReport records the error of a mechanism that is not a plain matrix
// mechanism (e.g. the Low-Rank Mechanism, whose reconstruction is not least
// squares), given its expected total squared error on m queries.
func NewReport(name string, n, m int, totalError float64) (*Report, error) {
	if m <= 0 || n <= 0 {
		return nil, inputerr.Errorf("accounting", "n and m must be positive, got n=%d, m=%d", n, m)
	}
	if math.IsNaN(totalError) || math.IsInf(totalError, 0) || totalError < 0 {
		return nil, inputerr.Errorf("accounting", "total error must be finite and non-negative, got %v", totalError)
	}
	return &Report{Strategy: name, N: n, M: m, Trace: math.NaN(), L2Sensitivity: math.NaN(),
		L1Sensitivity: math.NaN(), UnitRMSE: math.NaN(), TotalError: totalError,
		RMSE: math.Sqrt(totalError / float64(m))}, nil
}

// Evaluate computes the expected error of answering a workload with Gram v
// and m queries through strategy s under noise nz.
func Evaluate(v *mat.SymDense, m int, s Matrix, nz Noise) (*Report, error) {
	if err := nz.valid(); err != nil {
		return nil, err
	}
	if m <= 0 {
		return nil, inputerr.Errorf("accounting", "number of queries m must be positive, got %d", m)
	}
	if v == nil || v.IsEmpty() {
		return nil, inputerr.Errorf("accounting", "empty workload Gram")
	}
	if s.Domain() != v.SymmetricDim() {
		return nil, inputerr.Errorf("accounting", "strategy %s has n=%d cells but the workload has n=%d", s.Name(), s.Domain(), v.SymmetricDim())
	}
	tr, err := TraceGramPinv(v, s.Gram())
	if err != nil {
		return nil, inputerr.Errorf("accounting", "%s: %w", s.Name(), err)
	}
	l2, l1 := s.L2Sensitivity(), s.L1Sensitivity()
	sens := l2
	if nz.Mechanism == calibrate.Laplace {
		sens = l1
	}
	total := nz.UnitVariance() * sens * sens * tr
	return &Report{
		Strategy: s.Name(), N: s.Domain(), M: m, Rows: s.Rows(), Trace: tr,
		L2Sensitivity: l2, L1Sensitivity: l1,
		UnitRMSE:   math.Sqrt(tr * l2 * l2 / float64(m)),
		TotalError: total,
		RMSE:       math.Sqrt(total / float64(m)),
	}, nil
}

// Bound is the SVD lower bound for a workload under a noise distribution.
type Bound struct {
	// SVD is (Σσᵢ(W))²/n = (tr V^{1/2})²/n, the minimum over strategies A of
	// Δ₂(A)²·tr(V X⁺) (Li & Miklau 2012); a lower bound, attained only by
	// some workloads.
	SVD float64
	// UnitRMSE is √(SVD/m).
	UnitRMSE float64
	// TotalError is UnitVariance·SVD: no matrix-mechanism strategy has less
	// expected total squared error under this noise.
	TotalError float64
	// RMSE is √(TotalError/m).
	RMSE float64
}

// LowerBound computes the SVD bound of the workload with Gram v and m queries.
func LowerBound(v *mat.SymDense, m int, nz Noise) (*Bound, error) {
	if err := nz.valid(); err != nil {
		return nil, err
	}
	if m <= 0 {
		return nil, inputerr.Errorf("accounting", "number of queries m must be positive, got %d", m)
	}
	svd, err := SVDBound(v)
	if err != nil {
		return nil, err
	}
	total := nz.UnitVariance() * svd
	return &Bound{SVD: svd, UnitRMSE: math.Sqrt(svd / float64(m)), TotalError: total,
		RMSE: math.Sqrt(total / float64(m))}, nil
}
