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
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/mechanism/calibrate"
	"github.com/dpsolve/dpsolve/mechanism/noise"
)

// Kind names a noise mechanism.
type Kind string

const (
	// Gaussian noise under (ε,δ)-differential privacy.
	Gaussian Kind = "gaussian"
	// ZCDP is Gaussian noise under ρ-zero-concentrated differential privacy.
	ZCDP Kind = "zcdp"
	// Laplace noise under pure ε-differential privacy.
	Laplace Kind = "laplace"
)

// Budget is a privacy budget for one release.
type Budget struct {
	// Kind selects the mechanism.
	Kind Kind
	// Epsilon is ε > 0 (Gaussian, Laplace).
	Epsilon float64
	// Delta is δ ∈ (0,1) for Gaussian; it must be 0 for Laplace and ZCDP.
	Delta float64
	// Rho is ρ > 0 for ZCDP; it must be 0 otherwise.
	Rho float64
}

// Validate reports whether b is a usable budget, with a message naming the
// offending parameter.
func (b Budget) Validate() error {
	bad := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }
	switch b.Kind {
	case Gaussian:
		if bad(b.Epsilon) || b.Epsilon <= 0 {
			return fmt.Errorf("release: gaussian: epsilon must be positive and finite, got %v", b.Epsilon)
		}
		if math.IsNaN(b.Delta) || b.Delta <= 0 || b.Delta >= 1 {
			return fmt.Errorf("release: gaussian: delta must lie in (0,1), got %v", b.Delta)
		}
		if b.Rho != 0 {
			return fmt.Errorf("release: gaussian: rho must be 0 (use kind zcdp), got %v", b.Rho)
		}
	case Laplace:
		if bad(b.Epsilon) || b.Epsilon <= 0 {
			return fmt.Errorf("release: laplace: epsilon must be positive and finite, got %v", b.Epsilon)
		}
		if b.Delta != 0 {
			return fmt.Errorf("release: laplace: delta must be 0 (the Laplace mechanism is pure ε-DP), got %v", b.Delta)
		}
		if b.Rho != 0 {
			return fmt.Errorf("release: laplace: rho must be 0, got %v", b.Rho)
		}
	case ZCDP:
		if bad(b.Rho) || b.Rho <= 0 {
			return fmt.Errorf("release: zcdp: rho must be positive and finite, got %v", b.Rho)
		}
		if b.Epsilon != 0 || b.Delta != 0 {
			return fmt.Errorf("release: zcdp: epsilon and delta must be 0 (the budget is rho), got %v and %v", b.Epsilon, b.Delta)
		}
	default:
		return fmt.Errorf("release: unknown mechanism %q (want gaussian, zcdp or laplace)", b.Kind)
	}
	return nil
}

// String describes the budget, e.g. "gaussian(eps=1, delta=1e-06)".
func (b Budget) String() string {
	switch b.Kind {
	case Laplace:
		return fmt.Sprintf("laplace(eps=%g)", b.Epsilon)
	case ZCDP:
		return fmt.Sprintf("zcdp(rho=%g)", b.Rho)
	}
	return fmt.Sprintf("%s(eps=%g, delta=%g)", b.Kind, b.Epsilon, b.Delta)
}

// Mechanism is a calibrated matrix mechanism for one strategy and budget.
// It holds no data; Measure is the only method that sees x.
type Mechanism struct {
	a      *mat.Dense    // p×n strategy
	r      *mat.TriDense // n×n upper triangular: A itself, or QR's R
	q      *mat.Dense    // thin Q (p×n) of A = QR; nil when A is square upper triangular
	p, n   int
	budget Budget

	sens, snappedSens float64
	grid              float64
	calibrated        float64 // σ or b from calibrate for the snapped sensitivity
	scale             float64 // the scale actually sampled, ⌈calibrated/g⌉·g
	variance          float64 // per-measurement noise variance
}

// New calibrates the mechanism for strategy a and budget b. a must have full
// column rank (p ≥ n); a square upper-triangular a (a *mat.TriDense, or a
// dense matrix with zeros below the diagonal) is solved by back
// substitution, any other by Householder QR.
func New(a mat.Matrix, b Budget) (*Mechanism, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	if a == nil {
		return nil, fmt.Errorf("release: nil strategy")
	}
	p, n := a.Dims()
	if p == 0 || n == 0 {
		return nil, fmt.Errorf("release: empty strategy")
	}
	if p < n {
		return nil, fmt.Errorf("release: strategy is %d×%d: fewer measurements than cells, so x̂ is not identifiable", p, n)
	}
	m := &Mechanism{a: mat.DenseCopyOf(a), p: p, n: n, budget: b}
	for i := 0; i < p; i++ {
		for j := 0; j < n; j++ {
			if v := m.a.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("release: strategy entry (%d,%d) is %v", i, j, v)
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
	tol := float64(m.n) * 0x1p-52 * maxDiag
	for i := 0; i < m.n; i++ {
		if math.Abs(m.r.At(i, i)) <= tol {
			return fmt.Errorf("release: strategy does not have full column rank (R[%d,%d] = %g): x̂ is not identifiable", i, i, m.r.At(i, i))
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

// calibrate sets the sensitivity, the grid and the noise scale.
func (m *Mechanism) calibrate() error {
	var err error
	switch m.budget.Kind {
	case Laplace:
		m.sens = colNorm(m.a, 1)
		var b0 float64
		if b0, err = calibrate.LaplaceScale(m.budget.Epsilon, m.sens); err != nil {
			return fmt.Errorf("release: %w", err)
		}
		if m.grid, err = noise.Grid(b0); err != nil {
			return fmt.Errorf("release: %w", err)
		}
		m.snappedSens = noise.SnappedL1Sensitivity(m.sens, m.grid, m.p)
		m.calibrated, err = calibrate.LaplaceScale(m.budget.Epsilon, m.snappedSens)
	default: // Gaussian, ZCDP
		m.sens = colNorm(m.a, 2)
		sigma := func(s float64) (float64, error) {
			if m.budget.Kind == ZCDP {
				return calibrate.ZCDPSigma(m.budget.Rho, s)
			}
			return calibrate.GaussianSigma(m.budget.Epsilon, m.budget.Delta, s)
		}
		var s0 float64
		if s0, err = sigma(m.sens); err != nil {
			return fmt.Errorf("release: %w", err)
		}
		if m.grid, err = noise.Grid(s0); err != nil {
			return fmt.Errorf("release: %w", err)
		}
		m.snappedSens = noise.SnappedL2Sensitivity(m.sens, m.grid, m.p)
		m.calibrated, err = sigma(m.snappedSens)
	}
	if err != nil {
		return fmt.Errorf("release: %w", err)
	}
	if m.scale, err = noise.EffectiveScale(m.calibrated, m.grid); err != nil {
		return fmt.Errorf("release: %w", err)
	}
	m.variance = m.scale * m.scale
	if m.budget.Kind == Laplace {
		m.variance *= 2
	}
	return nil
}

// Budget returns the mechanism's privacy budget.
func (m *Mechanism) Budget() Budget { return m.budget }

// Rows returns p, the number of noisy measurements.
func (m *Mechanism) Rows() int { return m.p }

// Domain returns n, the histogram length.
func (m *Mechanism) Domain() int { return m.n }

// Strategy returns a copy of the strategy matrix A.
func (m *Mechanism) Strategy() *mat.Dense { return mat.DenseCopyOf(m.a) }

// Sensitivity returns the strategy's sensitivity: the largest column 2-norm
// of A for Gaussian and zCDP, the largest column 1-norm for Laplace.
func (m *Mechanism) Sensitivity() float64 { return m.sens }

// SnappedSensitivity returns the sensitivity after snapping to the grid, the
// value the noise is calibrated for (Sensitivity + g√p, or + g·p).
func (m *Mechanism) SnappedSensitivity() float64 { return m.snappedSens }

// Grid returns the snapping granularity g (a power of two).
func (m *Mechanism) Grid() float64 { return m.grid }

// Scale returns the noise scale actually sampled: σ for Gaussian and zCDP,
// the Laplace scale b for Laplace.
func (m *Mechanism) Scale() float64 { return m.scale }

// Sigma returns the standard deviation of each measurement's noise (σ, or
// b√2 for Laplace).
func (m *Mechanism) Sigma() float64 { return math.Sqrt(m.variance) }

// NoiseVariance returns the per-measurement noise variance (σ² or 2b²).
func (m *Mechanism) NoiseVariance() float64 { return m.variance }

// CheckData validates a histogram for this mechanism: length n, finite,
// non-negative entries.
func (m *Mechanism) CheckData(x []float64) error { return CheckData(x, m.n) }

// CheckData validates a histogram of n cells: exactly n finite,
// non-negative counts.
func CheckData(x []float64, n int) error {
	if len(x) != n {
		return fmt.Errorf("release: data has %d cells but the strategy has %d columns", len(x), n)
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("release: data cell %d is %v", i, v)
		}
		if v < 0 {
			return fmt.Errorf("release: data cell %d is negative (%v): counts must be non-negative", i, v)
		}
	}
	return nil
}

// Measure returns the private measurements y = A x + z, drawing the noise
// from s. Only s's randomness and x enter y; with a sampler from
// noise.NewSecure, y is private under the mechanism's budget.
func (m *Mechanism) Measure(x []float64, s *noise.Sampler) ([]float64, error) {
	if s == nil {
		return nil, fmt.Errorf("release: nil noise sampler")
	}
	if err := m.CheckData(x); err != nil {
		return nil, err
	}
	y := make([]float64, m.p)
	mat.NewVecDense(m.p, y).MulVec(m.a, mat.NewVecDense(m.n, append([]float64(nil), x...)))
	var used float64
	var err error
	if m.budget.Kind == Laplace {
		used, err = s.AddLaplace(y, m.calibrated, m.grid)
	} else {
		used, err = s.AddGaussian(y, m.calibrated, m.grid)
	}
	if err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	if used != m.scale { // cannot happen: both are ⌈calibrated/g⌉·g
		return nil, fmt.Errorf("release: internal error: sampled scale %v, expected %v", used, m.scale)
	}
	return y, nil
}

// Reconstruct returns the least-squares histogram x̂ = argmin ‖A x̂ − y‖₂,
// by back substitution for a triangular strategy and by QR otherwise
// (x̂ = R⁻¹Qᵀy with the thin factors of A = QR). It is post-processing of y.
func (m *Mechanism) Reconstruct(y []float64) ([]float64, error) {
	if len(y) != m.p {
		return nil, fmt.Errorf("release: %d measurements for a strategy with %d rows", len(y), m.p)
	}
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("release: measurement %d is %v", i, v)
		}
	}
	rhs := mat.NewVecDense(m.p, append([]float64(nil), y...))
	if m.q != nil {
		qty := mat.NewVecDense(m.n, nil)
		qty.MulVec(m.q.T(), rhs)
		rhs = qty
	}
	// Back substitution R x̂ = rhs; R's diagonal was checked in New, so it
	// cannot break down (no per-call condition estimate needed).
	xhat := append([]float64(nil), rhs.RawVector().Data...)
	blas64.Trsv(blas.NoTrans, m.r.RawTriangular(), blas64.Vector{N: m.n, Data: xhat, Inc: 1})
	for i, v := range xhat {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("release: reconstruction overflowed at cell %d", i)
		}
	}
	return xhat, nil
}

// PostProcess selects optional clean-ups of the reconstructed histogram.
// Both are post-processing (they read only x̂), so privacy is unchanged,
// but they bias the answers: ExpectedError no longer applies. Both are off
// by default.
type PostProcess struct {
	// Clamp replaces negative cells by 0.
	Clamp bool
	// Round rounds every cell to the nearest integer (after clamping).
	Round bool
}

// Apply post-processes xhat in place.
func (pp PostProcess) Apply(xhat []float64) {
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
