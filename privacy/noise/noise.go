// Package noise adds differentially private Gaussian and Laplace noise to
// real vectors without the floating-point leaks that break naive samplers.
//
// # Why not just x + σ·NormFloat64()
//
// Mironov (CCS 2012, "On significance of the least significant bits for
// differential privacy") showed that textbook floating-point noise — a
// uniform double pushed through a log or a Box–Muller transform and added to
// the true value — leaves holes and uneven spacing in the set of reachable
// outputs; which outputs are reachable depends on the true value, so the low
// bits of a single release can reveal it exactly. Any guarantee must
// therefore be about the values actually produced, not an idealised real
// number.
//
// # The construction used here (snapping to a grid + exact discrete noise)
//
// For a scale λ (σ for Gaussian, b for Laplace) and a granularity g — a
// power of two, by default Grid(λ) = 2^(⌊log₂λ⌋−40), so λ/g ≈ 2^40 — each
// value v is released as
//
//	g · (round(v/g) + Z),  Z an integer noise sample,
//
// where Z is drawn EXACTLY, with integer arithmetic only and no floating
// point, from
//
//   - the discrete Gaussian N_ℤ(0, s²), P(Z=k) ∝ exp(−k²/(2s²)), or
//   - the discrete Laplace Lap_ℤ(s), P(Z=k) ∝ exp(−|k|/s),
//
// with s = ⌈λ/g⌉ (an integer ≥ λ/g, so the scale actually used, s·g, is at
// least λ and exceeds it by at most a relative 2^-40). The samplers are
// Algorithms 1–3 of Canonne, Kamath & Steinke, "The Discrete Gaussian for
// Differential Privacy" (NeurIPS 2020): Bernoulli(exp(−γ)) for rational γ by
// the von Neumann–Forsythe series, the discrete Laplace by a geometric
// construction, the discrete Gaussian by rejection from the discrete Laplace.
// They consume only uniform random bits, and their output distribution is
// exactly the stated one. The final conversion of the exact integer
// round(v/g) + Z to a double, and the multiplication by the power of two g,
// are deterministic functions of that integer — post-processing, which
// cannot weaken privacy.
//
// # The guarantee, and what snapping costs
//
// Rounding to the grid moves every coordinate by at most g/2, so for
// neighbouring inputs the snapped query round(f(x)/g) differs from
// round(f(x')/g) by at most Δ₂/g + √p in L2 norm (Δ₁/g + p in L1), p the
// number of coordinates. The mechanism is therefore private exactly as the
// continuous mechanism calibrated for the inflated sensitivity
//
//	Δ₂' = Δ₂ + g·√p   (Gaussian),   Δ₁' = Δ₁ + g·p   (Laplace),
//
// which is what SnappedL2Sensitivity and SnappedL1Sensitivity return and what
// callers must calibrate with. With g = Grid(λ) the inflation is a relative
// ~2^-40·√p·λ/Δ — about 1e-10 for p = 256 at typical budgets — but it is
// accounted for, not ignored. Then:
//
//   - Laplace: the discrete Laplace with scale s is ε-DP for an integer
//     query with L1 sensitivity Δ (grid units) when s ≥ Δ/ε: pure ε-DP,
//     exactly, for ε = Δ₁'/b.
//   - Gaussian: the multivariate discrete Gaussian with scale s satisfies
//     ρ-zCDP with ρ = Δ²/(2s²) for an integer query of L2 sensitivity Δ
//     (grid units), exactly as the continuous Gaussian does, i.e.
//     ρ = Δ₂'²/(2σ²); and its (ε,δ) privacy profile equals the continuous
//     Gaussian's (Balle & Wang; see package calibrate) up to a correction
//     that Canonne, Kamath & Steinke (2020) show to be exponentially small
//     in s² — for s ≥ 2^40 grid units it is below the smallest positive
//     double. The discrete Gaussian's variance equals s² up to a relative
//     error of the same negligible order.
//
// The inputs themselves are bounded, |v/g| < MaxGridUnits = 2^72 (values up
// to about 2^31 noise scales: 10^10 counts at σ ≈ 2), and so are the
// sampler's loops: a loop that would exceed 2^20 geometric steps (chance
// below exp(−2^20)) restarts.
//
// # Sources of randomness
//
// A Sampler draws every random bit from one io.Reader. NewSecure uses
// crypto/rand.Reader (the operating system's CSPRNG); NewSecureReader takes
// another cryptographically secure reader (an HSM, a test harness). No code
// in this package imports math/rand, and a failing reader makes sampling
// return an error rather than fall back to anything else.
// NewSeededInsecure(seed) is a deterministic SplitMix64 stream for
// simulations and tests: reproducible and NOT private — its output
// reveals the seed and with it the noise. Sampler.Private says which kind a
// sampler is.
package noise

import (
	"bufio"
	crand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"math/bits"

	"github.com/dpsolve/dpsolve/internal/inputerr"
)

// GridExponentGap is the number of binary orders of magnitude between a
// noise scale and its default snapping granularity: Grid(λ) ≈ λ·2^-40.
const GridExponentGap = 40

// MaxGridUnits bounds |v/g| for every value v noise is added to on the grid
// g. The release is the double nearest g·(round(v/g)+Z), a function of the
// exact integer round(v/g)+Z alone (post-processing), at any magnitude; the
// bound is about accuracy, not privacy: below 2^72 grid units the spacing of
// doubles is at most 2^20 grid units, 2^-20 of the noise scale (s ≥ 2^40
// units), so representing the noisy value adds a variance below 10^-13 of
// the noise's — the stated error stays exact to the digits it is quoted
// with. Callers that must refuse data before charging a budget compare
// against this constant.
const MaxGridUnits = 0x1p72

// maxSteps bounds the geometric loops of the samplers (see the package doc).
const maxSteps = 1 << 20

// Sampler adds snapped, exactly sampled discrete noise to vectors. It is not
// safe for concurrent use; give each goroutine its own Sampler.
type Sampler struct {
	r       io.Reader
	private bool
	buf     [8]byte
}

// NewSecure returns a Sampler that draws from crypto/rand.Reader, the
// operating system's cryptographically secure generator. Releases made with
// it carry the guarantee described in the package documentation.
func NewSecure() *Sampler {
	return &Sampler{r: bufio.NewReaderSize(crand.Reader, 4096), private: true}
}

// NewSecureReader returns a private Sampler that draws every random bit
// from r. The privacy guarantee holds only if r is a cryptographically
// secure source of uniform bits; it is meant for hardware generators and for
// tests that must observe the secure path.
func NewSecureReader(r io.Reader) *Sampler {
	return &Sampler{r: r, private: true}
}

// NewSeededInsecure returns a deterministic Sampler for simulations and
// tests. It runs the same exact discrete samplers as NewSecure but on a
// SplitMix64 stream derived from seed, so it is reproducible and provides
// NO privacy: anyone who learns or guesses the seed can subtract the noise.
func NewSeededInsecure(seed uint64) *Sampler {
	return &Sampler{r: &splitMix64{state: seed}, private: false}
}

// Private reports whether s draws from a source meant to be
// cryptographically secure (NewSecure, NewSecureReader); it is false for
// NewSeededInsecure.
func (s *Sampler) Private() bool { return s.private }

// splitMix64 is a deterministic byte stream (Steele, Lea & Flood 2014). It
// is not cryptographically secure.
type splitMix64 struct{ state uint64 }

func (m *splitMix64) next() uint64 {
	m.state += 0x9e3779b97f4a7c15
	z := m.state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Read fills p with the stream's next bytes; it never fails.
func (m *splitMix64) Read(p []byte) (int, error) {
	var b [8]byte
	for i := 0; i < len(p); i += 8 {
		binary.LittleEndian.PutUint64(b[:], m.next())
		copy(p[i:], b[:])
	}
	return len(p), nil
}

// Grid returns the default snapping granularity for noise of scale λ > 0:
// the power of two 2^(⌊log₂λ⌋−GridExponentGap).
func Grid(scale float64) (float64, error) {
	if math.IsNaN(scale) || math.IsInf(scale, 0) || scale <= 0 {
		return 0, inputerr.Errorf("noise", "scale must be positive and finite, got %v", scale)
	}
	_, exp := math.Frexp(scale) // scale = frac·2^exp, frac ∈ [1/2, 1)
	return math.Ldexp(1, exp-1-GridExponentGap), nil
}

// SnappedL2Sensitivity returns Δ₂ + g·√p, the L2 sensitivity of a p-vector
// query of L2 sensitivity l2 after snapping to the grid g. Calibrate the
// Gaussian's σ with it.
func SnappedL2Sensitivity(l2, grid float64, p int) float64 {
	return l2 + grid*math.Sqrt(float64(p))
}

// SnappedL1Sensitivity returns Δ₁ + g·p, the L1 sensitivity of a p-vector
// query of L1 sensitivity l1 after snapping to the grid g. Calibrate the
// Laplace scale with it.
func SnappedL1Sensitivity(l1, grid float64, p int) float64 {
	return l1 + grid*float64(p)
}

// EffectiveScale returns ⌈λ/g⌉·g, the noise scale that AddGaussian and
// AddLaplace actually use for a requested scale λ on the grid g (≥ λ, and
// larger by at most one grid step). It fails for the inputs they reject.
func EffectiveScale(scale, grid float64) (float64, error) {
	units, err := checkScale("scale", scale, grid, nil)
	if err != nil {
		return 0, err
	}
	return float64(units) * grid, nil
}

// AddGaussian replaces every values[i] by g·(round(values[i]/g) + Zᵢ) with
// Zᵢ i.i.d. discrete Gaussian of scale s = ⌈σ/g⌉ grid units. It returns
// s·g, the standard deviation actually used (≥ σ, larger by at most a
// relative 2^-40 with the default grid). σ must have been calibrated for
// SnappedL2Sensitivity. On error values is left unchanged.
func (s *Sampler) AddGaussian(values []float64, sigma, grid float64) (float64, error) {
	units, err := checkScale("sigma", sigma, grid, values)
	if err != nil {
		return 0, err
	}
	z := make([]int64, len(values))
	dg := newDiscreteGaussian(units)
	for i := range z {
		if z[i], err = dg.sample(s); err != nil {
			return 0, err
		}
	}
	applySnapped(values, z, grid)
	return float64(units) * grid, nil
}

// AddLaplace replaces every values[i] by g·(round(values[i]/g) + Zᵢ) with
// Zᵢ i.i.d. discrete Laplace of scale t = ⌈b/g⌉ grid units. It returns t·g,
// the Laplace scale actually used (≥ b). b must have been calibrated for
// SnappedL1Sensitivity. On error values is left unchanged.
func (s *Sampler) AddLaplace(values []float64, scale, grid float64) (float64, error) {
	units, err := checkScale("scale", scale, grid, values)
	if err != nil {
		return 0, err
	}
	z := make([]int64, len(values))
	for i := range z {
		if z[i], err = s.discreteLaplace(units); err != nil {
			return 0, err
		}
	}
	applySnapped(values, z, grid)
	return float64(units) * grid, nil
}

// checkScale validates a noise scale, its grid and the values, and returns
// the scale in grid units, ⌈λ/g⌉.
func checkScale(name string, scale, grid float64, values []float64) (uint64, error) {
	if math.IsNaN(scale) || math.IsInf(scale, 0) || scale <= 0 {
		return 0, inputerr.Errorf("noise", "%s must be positive and finite, got %v", name, scale)
	}
	if math.IsNaN(grid) || math.IsInf(grid, 0) || grid <= 0 {
		return 0, inputerr.Errorf("noise", "grid must be positive and finite, got %v", grid)
	}
	if frac, _ := math.Frexp(grid); frac != 0.5 || grid < 0x1p-1000 {
		return 0, inputerr.Errorf("noise", "grid must be a normal power of two, got %v", grid)
	}
	ratio := scale / grid
	if ratio < 1 || ratio > 0x1p52 {
		return 0, inputerr.Errorf("noise", "%s/grid = %v must lie in [1, 2^52]", name, ratio)
	}
	for i, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, inputerr.Errorf("noise", "value %d is %v", i, v)
		}
		if math.Abs(v/grid) >= MaxGridUnits {
			return 0, inputerr.Errorf("noise", "value %d (%v) is too large for the grid %v", i, v, grid)
		}
	}
	return uint64(math.Ceil(ratio)), nil
}

// applySnapped sets values[i] to the double nearest g·(round(values[i]/g)+z[i]).
func applySnapped(values []float64, z []int64, grid float64) {
	for i, v := range values {
		k := math.Round(v / grid) // exact: v/grid only shifts the exponent
		zf := float64(z[i])
		var sum float64
		if int64(zf) == z[i] {
			// Both k and z are exact doubles, so IEEE addition returns the
			// correctly rounded exact integer sum: a function of k+z only.
			sum = k + zf
		} else {
			exact := new(big.Float).SetPrec(200).SetFloat64(k)
			exact.Add(exact, new(big.Float).SetPrec(200).SetInt64(z[i]))
			sum, _ = exact.Float64()
		}
		values[i] = sum * grid // exact: grid is a power of two
	}
}

// ----- uniform bits -----

// errReader wraps a failure of the random source.
var errReader = errors.New("noise: random source failed")

// uint64Raw returns 64 uniform bits from the source.
func (s *Sampler) uint64Raw() (uint64, error) {
	if _, err := io.ReadFull(s.r, s.buf[:]); err != nil {
		return 0, fmt.Errorf("%w: %v", errReader, err)
	}
	return binary.LittleEndian.Uint64(s.buf[:]), nil
}

// uint64n returns a uniform integer in [0, n), n ≥ 1, by masking to the
// next power of two and rejecting (no modulo bias).
func (s *Sampler) uint64n(n uint64) (uint64, error) {
	if n == 1 {
		return 0, nil
	}
	mask := uint64(1)<<bits.Len64(n-1) - 1
	if bits.Len64(n-1) == 64 {
		mask = math.MaxUint64
	}
	for {
		v, err := s.uint64Raw()
		if err != nil {
			return 0, err
		}
		if v &= mask; v < n {
			return v, nil
		}
	}
}

// bigN returns a uniform integer in [0, n), n ≥ 1, by masked rejection.
func (s *Sampler) bigN(n *big.Int) (*big.Int, error) {
	nbits := n.BitLen()
	nbytes := (nbits + 7) / 8
	b := make([]byte, nbytes)
	v := new(big.Int)
	for {
		if _, err := io.ReadFull(s.r, b); err != nil {
			return nil, fmt.Errorf("%w: %v", errReader, err)
		}
		if extra := uint(nbytes*8 - nbits); extra > 0 {
			b[0] &= byte(0xff >> extra)
		}
		if v.SetBytes(b); v.Cmp(n) < 0 {
			return v, nil
		}
	}
}

// ----- Canonne–Kamath–Steinke samplers -----

// bernoulliExpNegSmall returns a sample of Bernoulli(exp(−num/den)) for
// 0 ≤ num ≤ den (CKS Algorithm 1, γ ∈ [0,1]): draw A_k ~ Bernoulli(γ/k) for
// k = 1, 2, … until the first failure at K; return whether K is odd.
func (s *Sampler) bernoulliExpNegSmall(num, den uint64) (bool, error) {
	for k := uint64(1); ; k++ {
		hi, dk := bits.Mul64(den, k)
		if hi != 0 { // den·k overflows: continue the same series exactly in big integers
			return s.expNegFracBig(new(big.Int).SetUint64(num), new(big.Int).SetUint64(den), int64(k))
		}
		u, err := s.uint64n(dk)
		if err != nil {
			return false, err
		}
		if u >= num { // A_k = 0
			return k%2 == 1, nil
		}
	}
}

// expNegFracBig continues the series of bernoulliExpNegSmall from k = k0 for
// γ = r/den ∈ [0,1] in big integers.
func (s *Sampler) expNegFracBig(r, den *big.Int, k0 int64) (bool, error) {
	dk := new(big.Int)
	for k := k0; ; k++ {
		dk.Mul(den, big.NewInt(k))
		u, err := s.bigN(dk)
		if err != nil {
			return false, err
		}
		if u.Cmp(r) >= 0 {
			return k%2 == 1, nil
		}
	}
}

// bernoulliExpNegBig returns a sample of Bernoulli(exp(−num/den)) for any
// rational num/den ≥ 0 (CKS Algorithm 1): ⌊γ⌋ independent Bernoulli(e^-1)
// trials must all succeed, then one Bernoulli(exp(−(γ−⌊γ⌋))).
func (s *Sampler) bernoulliExpNegBig(num, den *big.Int) (bool, error) {
	q, r := new(big.Int).QuoRem(num, den, new(big.Int))
	for i := int64(0); q.Cmp(big.NewInt(i)) > 0; i++ {
		ok, err := s.bernoulliExpNegSmall(1, 1)
		if err != nil || !ok {
			return false, err
		}
	}
	return s.expNegFracBig(r, den, 1)
}

// discreteLaplace returns a sample of Lap_ℤ(t), P(k) ∝ exp(−|k|/t), t ≥ 1
// (CKS Algorithm 2 with s = 1).
func (s *Sampler) discreteLaplace(t uint64) (int64, error) {
	for {
		u, err := s.uint64n(t)
		if err != nil {
			return 0, err
		}
		d, err := s.bernoulliExpNegSmall(u, t)
		if err != nil {
			return 0, err
		}
		if !d {
			continue
		}
		v := uint64(0)
		for ; v < maxSteps; v++ {
			a, err := s.bernoulliExpNegSmall(1, 1)
			if err != nil {
				return 0, err
			}
			if !a {
				break
			}
		}
		if v == maxSteps {
			continue // probability < exp(−2^20): restart
		}
		hi, tv := bits.Mul64(t, v)
		x, carry := bits.Add64(u, tv, 0)
		if hi != 0 || carry != 0 || x > math.MaxInt64 {
			continue // impossible for t ≤ 2^53 and v < 2^20
		}
		neg, err := s.uint64n(2)
		if err != nil {
			return 0, err
		}
		if neg == 1 {
			if x == 0 {
				continue
			}
			return -int64(x), nil
		}
		return int64(x), nil
	}
}

// discreteGaussian samples N_ℤ(0, σ²) for an integer σ ≥ 1 (CKS Algorithm 3).
type discreteGaussian struct {
	sigma, t     uint64
	sigma2       *big.Int // σ²
	twoSigma2T2  *big.Int // 2σ²t²
	num, tmp, ab *big.Int
}

func newDiscreteGaussian(sigma uint64) *discreteGaussian {
	t := sigma + 1 // ⌊σ⌋ + 1
	s2 := new(big.Int).Mul(new(big.Int).SetUint64(sigma), new(big.Int).SetUint64(sigma))
	bt := new(big.Int).SetUint64(t)
	den := new(big.Int).Mul(s2, bt)
	den.Mul(den, bt)
	den.Lsh(den, 1)
	return &discreteGaussian{sigma: sigma, t: t, sigma2: s2, twoSigma2T2: den,
		num: new(big.Int), tmp: new(big.Int), ab: new(big.Int)}
}

// sample draws Y ~ Lap_ℤ(t) and accepts it with probability
// exp(−(|Y| − σ²/t)²/(2σ²)) = exp(−(t|Y| − σ²)²/(2σ²t²)).
func (g *discreteGaussian) sample(s *Sampler) (int64, error) {
	for {
		y, err := s.discreteLaplace(g.t)
		if err != nil {
			return 0, err
		}
		abs := y
		if abs < 0 {
			abs = -abs
		}
		g.ab.SetInt64(abs)
		g.tmp.SetUint64(g.t)
		g.num.Mul(g.ab, g.tmp)
		g.num.Sub(g.num, g.sigma2)
		g.num.Mul(g.num, g.num)
		c, err := s.bernoulliExpNegBig(g.num, g.twoSigma2T2)
		if err != nil {
			return 0, err
		}
		if c {
			return y, nil
		}
	}
}
