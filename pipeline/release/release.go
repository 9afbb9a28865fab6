// Package release runs the matrix mechanism end to end: it measures a
// strategy A on a histogram x with calibrated, securely sampled noise,
// reconstructs the histogram by least squares and answers a workload W.
//
// # The mechanism
//
// Given a strategy A (p×n, full column rank; typically the square
// upper-triangular Cholesky factor from package newton, or the H2 tree of
// package strategy), non-negative counts x (length n) and a budget:
//
//	y  = A x + z                     (the only step that touches x)
//	x̂  = argmin ‖A x̂ − y‖₂ = A⁺ y    (triangular solve, or QR for p > n)
//	answers = W x̂                    (cumulative sums for prefix/range workloads)
//
// One person changes one count by one, so the sensitivity of x ↦ A x is the
// largest column norm of A: Δ₂(A) = max_j ‖A e_j‖₂ for Gaussian noise,
// Δ₁(A) = max_j ‖A e_j‖₁ for Laplace noise. The noise is
//
//   - Gaussian, (ε,δ)-DP: z ~ N(0, σ²I), σ from the analytic Gaussian
//     mechanism (calibrate.GaussianSigma);
//   - Gaussian, ρ-zCDP: σ² = Δ₂²/(2ρ) (calibrate.ZCDPSigma);
//   - Laplace, ε-DP: i.i.d. Laplace(b), b = Δ₁/ε (calibrate.LaplaceScale).
//
// Noise is drawn by package noise: A x is snapped to a power-of-two grid g
// (≈ scale·2^-40) and receives exactly sampled discrete Gaussian or Laplace
// noise, so no floating-point artefact of the sampler can leak x (Mironov
// 2012). Snapping costs sensitivity g√p (L2) or g·p (L1); the scale is
// calibrated for that snapped sensitivity, so y is exactly (ε,δ)-DP, ρ-zCDP
// or ε-DP as stated. Everything after y — reconstruction, answering, and the
// optional clamping/rounding of x̂ — is post-processing of y and keeps the
// same guarantee. The privacy unit is one count of one cell changing by one
// (add/remove one person from a histogram).
//
// # Expected error
//
// The least-squares estimate is unbiased with Cov(x̂) = v·(AᵀA)⁻¹, v the
// per-measurement noise variance (σ² for Gaussian, 2b² for Laplace), so the
// expected total squared error of the workload answers is
//
//	E‖W x̂ − W x‖² = v · tr(W (AᵀA)⁻¹ Wᵀ) = v · tr(V X⁻¹),  V = WᵀW, X = AᵀA,
//
// and ExpectedError reports it, its mean per query and the root of that
// mean (the RMSE). This holds before post-processing (clamping/rounding
// trade variance for bias and are off by default). It uses the noise scale
// actually sampled (at most one grid step above the calibrated one); the
// discrete samplers' variance equals σ² and 2b² to within a relative
// 1e-20, and snapping A x to the grid adds a deterministic error of at most
// g/2 per measurement (~1e-12 of σ), both far below anything measurable.
package release

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"

	kernel "github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/internal/rank"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// ErrInput is wrapped by every error this package returns for bad input
// (strategy, budget, data, measurements); it is the one dpsolve-wide
// sentinel (internal/inputerr).
var ErrInput = inputerr.ErrInput

// Mechanism is a calibrated matrix mechanism for one strategy and budget.
// It holds no data; Measure is the only method that sees x.
type Mechanism struct {
	a      *mat.Dense    // p×n strategy
	r      *mat.TriDense // n×n upper triangular: A itself, or QR's R
	q      *mat.Dense    // thin Q (p×n) of A = QR; nil when A is square upper triangular
	pinv   *mat.Dense    // n×p pseudo-inverse A⁺ when A is rank-deficient (then r and q are nil)
	rank   int           // rank of A
	p, n   int
	budget calibrate.Budget
	cal    calibrate.Calibration // grid, snapped sensitivity, scale, variance
}

// New calibrates the mechanism for strategy a and budget b. a must have full
// column rank (p ≥ n); a square upper-triangular a (a *mat.TriDense, or a
// dense matrix with zeros below the diagonal) is solved by back
// substitution, any other by Householder QR.
func New(a mat.Matrix, b calibrate.Budget) (*Mechanism, error) {
	if b.IsZero() {
		return nil, calibrate.ErrNoBudget
	}
	if a == nil {
		return nil, inputerr.Errorf("release", "nil strategy")
	}
	p, n := a.Dims()
	if p == 0 || n == 0 {
		return nil, inputerr.Errorf("release", "empty strategy")
	}
	if p < n {
		return nil, inputerr.Errorf("release", "strategy is %d×%d: fewer measurements than cells, so x̂ is not identifiable", p, n)
	}
	m := &Mechanism{a: mat.DenseCopyOf(a), p: p, n: n, budget: b}
	for i := 0; i < p; i++ {
		for j := 0; j < n; j++ {
			if v := m.a.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, inputerr.Errorf("release", "strategy entry (%d,%d) is %v", i, j, v)
			}
		}
	}
	if err := m.factor(); err != nil {
		return nil, err
	}
	if err := m.calibrate(); err != nil {
		return nil, err
	}
	return m, nil
}

// isUpperTriangular reports whether the square matrix d has zeros below its
// diagonal.
func isUpperTriangular(d *mat.Dense) bool {
	p, n := d.Dims()
	if p != n {
		return false
	}
	for i := 1; i < n; i++ {
		for j := 0; j < i; j++ {
			if d.At(i, j) != 0 {
				return false
			}
		}
	}
	return true
}

// factor prepares the least-squares solver and checks the column rank.
func (m *Mechanism) factor() error {
	if isUpperTriangular(m.a) {
		m.r = mat.NewTriDense(m.n, mat.Upper, nil)
		for i := 0; i < m.n; i++ {
			for j := i; j < m.n; j++ {
				m.r.SetTri(i, j, m.a.At(i, j))
			}
		}
	} else {
		var qr mat.QR
		qr.Factorize(m.a)
		var fullQ mat.Dense
		qr.QTo(&fullQ)
		m.q = mat.DenseCopyOf(fullQ.Slice(0, m.p, 0, m.n))
		m.r = mat.NewTriDense(m.n, mat.Upper, nil)
		full := new(mat.Dense)
		qr.RTo(full)
		for i := 0; i < m.n; i++ {
			for j := i; j < m.n; j++ {
				m.r.SetTri(i, j, full.At(i, j))
			}
		}
	}
	// Full column rank ⇔ R has no (numerically) zero diagonal entry. The
	// threshold n·ε_mach·max|R_ii| is the usual rank-revealing tolerance.
	var maxDiag float64
	for i := 0; i < m.n; i++ {
		maxDiag = math.Max(maxDiag, math.Abs(m.r.At(i, i)))
	}
	tol := rank.Cutoff(m.n, maxDiag)
	m.rank = m.n
	for i := 0; i < m.n; i++ {
		if math.Abs(m.r.At(i, i)) <= tol {
			// Rank-deficient: the optimum for a singular workload Gram
			// (newton's exact singular solve) measures only range(V).
			m.r, m.q = nil, nil
			return m.factorPinv()
		}
	}
	return nil
}

// colNorm returns the largest column q-norm (q = 1 or 2) of a.
func colNorm(a *mat.Dense, q int) float64 {
	p, n := a.Dims()
	var best float64
	for j := 0; j < n; j++ {
		var s float64
		for i := 0; i < p; i++ {
			v := a.At(i, j)
			if q == 1 {
				s += math.Abs(v)
			} else {
				s += v * v
			}
		}
		if q == 2 {
			s = math.Sqrt(s)
		}
		best = math.Max(best, s)
	}
	return best
}

// calibrate sets the sensitivity, the grid and the noise scale through the
// one calibration step every mechanism shares (calibrate.Calibrate).
func (m *Mechanism) calibrate() error {
	q := 2
	if m.budget.Noise() == calibrate.Laplace {
		q = 1
	}
	var err error
	m.cal, err = calibrate.Calibrate(m.budget, colNorm(m.a, q), m.p)
	return err
}

// Budget returns the mechanism's privacy budget.
func (m *Mechanism) Budget() calibrate.Budget { return m.budget }

// Calibration returns the noise calibration: grid, snapped sensitivity,
// scale and variance.
func (m *Mechanism) Calibration() calibrate.Calibration { return m.cal }

// Rows returns p, the number of noisy measurements.
func (m *Mechanism) Rows() int { return m.p }

// Domain returns n, the histogram length.
func (m *Mechanism) Domain() int { return m.n }

// Strategy returns a copy of the strategy matrix A.
func (m *Mechanism) Strategy() *mat.Dense { return mat.DenseCopyOf(m.a) }

// Sensitivity returns the strategy's sensitivity: the largest column 2-norm
// of A for Gaussian and zCDP, the largest column 1-norm for Laplace.
func (m *Mechanism) Sensitivity() float64 { return m.cal.Sensitivity }

// SnappedSensitivity returns the sensitivity after snapping to the grid, the
// value the noise is calibrated for (Sensitivity + g√p, or + g·p).
func (m *Mechanism) SnappedSensitivity() float64 { return m.cal.SnappedSensitivity }

// Grid returns the snapping granularity g (a power of two).
func (m *Mechanism) Grid() float64 { return m.cal.Grid }

// Scale returns the noise scale actually sampled: σ for Gaussian and zCDP,
// the Laplace scale b for Laplace.
func (m *Mechanism) Scale() float64 { return m.cal.Scale }

// Sigma returns the standard deviation of each measurement's noise (σ, or
// b√2 for Laplace).
func (m *Mechanism) Sigma() float64 { return math.Sqrt(m.cal.Variance) }

// NoiseVariance returns the per-measurement noise variance (σ² or 2b²).
func (m *Mechanism) NoiseVariance() float64 { return m.cal.Variance }

// CheckData validates a histogram for this mechanism: length n, finite,
// non-negative entries.
func (m *Mechanism) CheckData(x []float64) error { return CheckData(x, m.n) }

// CheckData validates a histogram of n cells: exactly n finite,
// non-negative counts.
func CheckData(x []float64, n int) error {
	if len(x) != n {
		return inputerr.Errorf("release", "data has %d cells but the strategy has %d columns", len(x), n)
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return inputerr.Errorf("release", "data cell %d is %v", i, v)
		}
		if v < 0 {
			return inputerr.Errorf("release", "data cell %d is negative (%v): counts must be non-negative", i, v)
		}
	}
	return nil
}

// Measure returns the private measurements y = A x + z, drawing the noise
// from s. Only s's randomness and x enter y; with a sampler from
// noise.NewSecure, y is private under the mechanism's budget.
func (m *Mechanism) Measure(x []float64, s noise.Source) ([]float64, error) {
	if noise.Missing(s) {
		return nil, inputerr.Errorf("release", "nil noise source")
	}
	if err := m.CheckData(x); err != nil {
		return nil, err
	}
	y := make([]float64, m.p)
	mat.NewVecDense(m.p, y).MulVec(m.a, mat.NewVecDense(m.n, append([]float64(nil), x...)))
	if err := m.cal.Add(s, y); err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	return y, nil
}

// Reconstruct returns the least-squares histogram x̂ = argmin ‖A x̂ − y‖₂,
// by back substitution for a triangular strategy and by QR otherwise
// (x̂ = R⁻¹Qᵀy with the thin factors of A = QR). It is post-processing of y.
func (m *Mechanism) Reconstruct(y []float64) ([]float64, error) {
	if len(y) != m.p {
		return nil, inputerr.Errorf("release", "%d measurements for a strategy with %d rows", len(y), m.p)
	}
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, inputerr.Errorf("release", "measurement %d is %v", i, v)
		}
	}
	rhs := mat.NewVecDense(m.p, append([]float64(nil), y...))
	if m.pinv != nil {
		return m.reconstructPinv(rhs)
	}
	if m.q != nil {
		qty := mat.NewVecDense(m.n, nil)
		qty.MulVec(m.q.T(), rhs)
		rhs = qty
	}
	// Back substitution R x̂ = rhs; R's diagonal was checked in New, so it
	// cannot break down (no per-call condition estimate needed).
	xhat := append([]float64(nil), rhs.RawVector().Data...)
	rt := m.r.RawTriangular()
	kernel.Trsv(blas.Upper, blas.NoTrans, blas.NonUnit, kernel.General{Rows: rt.N, Cols: rt.N, Stride: rt.Stride, Data: rt.Data}, xhat)
	for i, v := range xhat {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("release: reconstruction overflowed at cell %d", i)
		}
	}
	return xhat, nil
}

// Cleanup selects optional clean-ups of the reconstructed histogram.
// Both are post-processing (they read only x̂), so privacy is unchanged,
// but they bias the answers: ExpectedError no longer applies. Both are off
// by default.
type Cleanup struct {
	// Clamp replaces negative cells by 0.
	Clamp bool
	// Round rounds every cell to the nearest integer (after clamping).
	Round bool
}

// Apply post-processes xhat in place.
func (pp Cleanup) Apply(xhat []float64) {
	for i, v := range xhat {
		if pp.Clamp && v < 0 {
			v = 0
		}
		if pp.Round {
			v = math.Round(v)
			if v == 0 {
				v = 0 // no negative zero in output files
			}
		}
		xhat[i] = v
	}
}
