package noise

import (
	crand "crypto/rand"
	"errors"
	"go/parser"
	"go/token"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// countingReader records how many bytes were drawn from the wrapped reader.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// stream returns a deterministic byte stream (the insecure generator's) for
// use as an injected "secure" reader in tests.
func stream(seed uint64) io.Reader { return &splitMix64{state: seed} }

func TestNewSecureDrawsFromCryptoRandReader(t *testing.T) {
	// Substitute crypto/rand.Reader with a deterministic counting reader: if
	// NewSecure draws its bits from it, (1) bytes are consumed and (2) two
	// samplers built on identical substitutes produce identical noise — which
	// also proves no other randomness (math/rand's random seed, time, …) is
	// mixed in.
	orig := crand.Reader
	t.Cleanup(func() { crand.Reader = orig })

	g, err := Grid(3)
	require.NoError(t, err)
	var outs [2][]float64
	for i := range outs {
		cr := &countingReader{r: stream(42)}
		crand.Reader = cr
		s := NewSecure()
		require.True(t, s.Private())
		outs[i] = make([]float64, 64)
		_, err := s.AddGaussian(outs[i], 3, g)
		require.NoError(t, err)
		_, err = s.AddLaplace(outs[i], 3, g)
		require.NoError(t, err)
		assert.Positive(t, cr.n, "NewSecure did not read crypto/rand.Reader")
	}
	assert.Equal(t, outs[0], outs[1])
	assert.NotEqual(t, make([]float64, 64), outs[0])
}

func TestInjectedReaderIsTheOnlySource(t *testing.T) {
	g, _ := Grid(2)
	draw := func(r io.Reader) []float64 {
		v := make([]float64, 200)
		_, err := NewSecureReader(r).AddGaussian(v, 2, g)
		require.NoError(t, err)
		return v
	}
	assert.Equal(t, draw(stream(7)), draw(stream(7)))
	assert.NotEqual(t, draw(stream(7)), draw(stream(8)))

	// A failing source makes sampling fail (no fallback to other randomness)
	// and leaves the values untouched.
	bad := io.MultiReader(io.LimitReader(stream(1), 100), iotestErrReader{})
	v := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}
	orig := append([]float64(nil), v...)
	_, err := NewSecureReader(bad).AddGaussian(v, 2, g)
	require.Error(t, err)
	assert.True(t, errors.Is(err, errReader))
	assert.Equal(t, orig, v)
	_, err = NewSecureReader(iotestErrReader{}).AddLaplace(v, 2, g)
	require.Error(t, err)
	assert.Equal(t, orig, v)
}

type iotestErrReader struct{}

func (iotestErrReader) Read([]byte) (int, error) { return 0, errors.New("entropy exhausted") }

func TestPackageNeverImportsMathRand(t *testing.T) {
	// Static guarantee behind "the secure path never uses math/rand": no
	// non-test file of this package imports it (the seeded source is an
	// in-package SplitMix64).
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		ast, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range ast.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			assert.NotContains(t, []string{"math/rand", "math/rand/v2"}, path, "%s imports %s", f, path)
		}
		checked++
	}
	assert.Positive(t, checked)
}

func TestSeededInsecureIsReproducibleAndMarked(t *testing.T) {
	a, b := NewSeededInsecure(5), NewSeededInsecure(5)
	assert.False(t, a.Private())
	g, _ := Grid(1)
	va, vb := make([]float64, 50), make([]float64, 50)
	_, err := a.AddLaplace(va, 1, g)
	require.NoError(t, err)
	_, err = b.AddLaplace(vb, 1, g)
	require.NoError(t, err)
	assert.Equal(t, va, vb)
}

// chiSquareGOF runs Pearson's χ² goodness-of-fit test of integer samples
// against pmf over the bins −lim..lim plus two tail bins, and reports
// returns the statistic and its 99% critical value (every bin must expect
// at least 5 counts).
func chiSquareGOF(t *testing.T, samples []int64, pmf func(k int64) float64, lim int64) (chi2, crit float64) {
	t.Helper()
	n := float64(len(samples))
	obs := map[int64]float64{}
	for _, k := range samples {
		if k < -lim {
			k = -lim - 1
		} else if k > lim {
			k = lim + 1
		}
		obs[k]++
	}
	var center float64
	exp := map[int64]float64{}
	for k := -lim; k <= lim; k++ {
		exp[k] = n * pmf(k)
		center += pmf(k)
	}
	exp[-lim-1] = n * (1 - center) / 2 // symmetric tails
	exp[lim+1] = n * (1 - center) / 2
	bins := 0
	for k, e := range exp {
		require.Greater(t, e, 5.0, "bin %d too sparse; choose lim smaller", k)
		d := obs[k] - e
		chi2 += d * d / e
		bins++
	}
	return chi2, distuv.ChiSquared{K: float64(bins - 1)}.Quantile(0.99)
}

func TestDiscreteLaplaceExactPMF(t *testing.T) {
	// Lap_ℤ(t): P(k) = (1−q)/(1+q)·q^|k|, q = e^{−1/t}.
	s := NewSeededInsecure(11)
	for _, scale := range []uint64{1, 3} {
		samples := make([]int64, 100000)
		for i := range samples {
			var err error
			samples[i], err = s.discreteLaplace(scale)
			require.NoError(t, err)
		}
		pmf := func(t float64) func(k int64) float64 {
			q := math.Exp(-1 / t)
			return func(k int64) float64 { return (1 - q) / (1 + q) * math.Pow(q, math.Abs(float64(k))) }
		}
		chi2, crit := chiSquareGOF(t, samples, pmf(float64(scale)), int64(4*scale))
		assert.Less(t, chi2, crit, "scale %d", scale)
		// Power check: the same samples reject a scale 10% off.
		chi2, crit = chiSquareGOF(t, samples, pmf(1.1*float64(scale)), int64(4*scale))
		assert.Greater(t, chi2, crit, "scale %d: test cannot tell 10%% off", scale)
	}
}

func TestDiscreteGaussianExactPMF(t *testing.T) {
	s := NewSeededInsecure(12)
	for _, sigma := range []uint64{1, 2, 5} {
		pmf := func(sd float64) func(k int64) float64 {
			var norm float64
			for k := -60 * int64(sigma); k <= 60*int64(sigma); k++ {
				norm += math.Exp(-float64(k*k) / (2 * sd * sd))
			}
			return func(k int64) float64 { return math.Exp(-float64(k*k)/(2*sd*sd)) / norm }
		}
		dg := newDiscreteGaussian(sigma)
		samples := make([]int64, 100000)
		for i := range samples {
			var err error
			samples[i], err = dg.sample(s)
			require.NoError(t, err)
		}
		chi2, crit := chiSquareGOF(t, samples, pmf(float64(sigma)), int64(3*sigma))
		assert.Less(t, chi2, crit, "sigma %d", sigma)
		// Power check: the same samples reject a σ 10% off.
		chi2, crit = chiSquareGOF(t, samples, pmf(1.1*float64(sigma)), int64(3*sigma))
		assert.Greater(t, chi2, crit, "sigma %d: test cannot tell 10%% off", sigma)
	}
}

func TestGaussianNoiseMomentsAndGrid(t *testing.T) {
	// Noise added to a zero vector at a realistic scale (s ≈ 2^40 grid
	// units): variance χ² test and mean t-test, both two-sided at 99%.
	const n = 100000
	sigma := 3.7
	g, err := Grid(sigma)
	require.NoError(t, err)
	v := make([]float64, n)
	used, err := NewSeededInsecure(21).AddGaussian(v, sigma, g)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, used, sigma)
	assert.LessOrEqual(t, used, sigma*(1+0x1p-39))
	eff, err := EffectiveScale(sigma, g)
	require.NoError(t, err)
	assert.Equal(t, used, eff)
	for _, x := range v {
		require.Equal(t, math.Round(x/g), x/g, "output off the grid")
	}
	mean, variance := stat.MeanVariance(v, nil)
	chi := distuv.ChiSquared{K: n - 1}
	chiStat := func(sd float64) float64 { return (n - 1) * variance / (sd * sd) }
	assert.Greater(t, chiStat(used), chi.Quantile(0.005))
	assert.Less(t, chiStat(used), chi.Quantile(0.995))
	// Power check: a σ 2% off is rejected (the test's relative resolution on
	// σ is ~√(1/(2n)) ≈ 0.2%).
	assert.Greater(t, chiStat(0.98*used), chi.Quantile(0.995))
	assert.Less(t, chiStat(1.02*used), chi.Quantile(0.005))
	tt := mean / math.Sqrt(variance/n)
	assert.Less(t, math.Abs(tt), distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1}.Quantile(0.995))
}

func TestLaplaceNoiseMoments(t *testing.T) {
	// Laplace(b): variance 2b², fourth central moment 24b⁴, so the sample
	// variance has standard error √((24−4)b⁴/n); a z-test at 99%.
	const n = 100000
	b := 2.5
	g, _ := Grid(b)
	v := make([]float64, n)
	used, err := NewSeededInsecure(22).AddLaplace(v, b, g)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, used, b)
	mean, variance := stat.MeanVariance(v, nil)
	z := (variance - 2*used*used) / math.Sqrt(20*math.Pow(used, 4)/n)
	assert.Less(t, math.Abs(z), 2.5758)
	tt := mean / math.Sqrt(variance/n)
	assert.Less(t, math.Abs(tt), 2.5758)
}

func TestSnappingAndOffsets(t *testing.T) {
	// The release is round(v/g)·g plus noise on the grid: with the same
	// stream, shifting the input by a grid multiple shifts the output by
	// exactly that multiple (the noise does not depend on the value).
	g, _ := Grid(1)
	a := []float64{0.3, 1e6 + 0.123456789, -42.5}
	b := make([]float64, len(a))
	for i := range a {
		b[i] = a[i] + 1024*g
	}
	_, err := NewSecureReader(stream(3)).AddGaussian(a, 1, g)
	require.NoError(t, err)
	_, err = NewSecureReader(stream(3)).AddGaussian(b, 1, g)
	require.NoError(t, err)
	for i := range a {
		assert.Equal(t, 1024*g, b[i]-a[i])
	}
}

func TestGridAndSensitivity(t *testing.T) {
	g, err := Grid(5)
	require.NoError(t, err)
	assert.Equal(t, 0x1p-38, g) // 2^(⌊log₂5⌋−40)
	g, err = Grid(4)
	require.NoError(t, err)
	assert.Equal(t, 0x1p-38, g)
	assert.Equal(t, 1+16*0x1p-10, SnappedL2Sensitivity(1, 0x1p-10, 256))
	assert.Equal(t, 2+256*0x1p-10, SnappedL1Sensitivity(2, 0x1p-10, 256))
	for _, bad := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		_, err := Grid(bad)
		assert.Error(t, err)
	}
}

func TestBadInputs(t *testing.T) {
	s := NewSeededInsecure(1)
	g, _ := Grid(1)
	cases := []struct {
		name         string
		vals         []float64
		scale, grid  float64
		wantFragment string
	}{
		{"nan value", []float64{math.NaN()}, 1, g, "value 0"},
		{"inf value", []float64{0, math.Inf(-1)}, 1, g, "value 1"},
		{"zero scale", []float64{0}, 0, g, "positive"},
		{"nan scale", []float64{0}, math.NaN(), g, "positive"},
		{"grid not power of two", []float64{0}, 1, 0.3, "power of two"},
		{"grid too coarse", []float64{0}, 1, 4, "must lie in"},
		{"grid too fine", []float64{0}, 1, 0x1p-60, "must lie in"},
		{"value too large", []float64{1e300}, 1, g, "too large"},
	}
	for _, c := range cases {
		_, err := s.AddGaussian(c.vals, c.scale, c.grid)
		assert.ErrorIs(t, err, ErrInput, c.wantFragment, c.name)
		_, err = s.AddLaplace(c.vals, c.scale, c.grid)
		assert.ErrorIs(t, err, ErrInput, c.wantFragment, c.name)
	}
}

// TestLargeValuesBelowMaxGridUnits checks the value bound at its edge: a
// value just below MaxGridUnits grid units (for σ = 2, about 9·10⁹: a
// national population count) gets noise whose error is the noise's (within
// 6σ, a chance below 10⁻⁸ per draw for the discrete Gaussian, seeded so it
// is reproducible), while one at the bound is refused, and census-scale
// counts at σ = 2 lie far inside.
func TestLargeValuesBelowMaxGridUnits(t *testing.T) {
	const sigma = 2.0
	g, err := Grid(sigma)
	require.NoError(t, err)
	edge := math.Nextafter(MaxGridUnits, 0) * g
	for _, v := range []float64{3.3e8, edge} {
		s := NewSeededInsecure(7)
		vals := []float64{v, -v}
		_, err := s.AddGaussian(vals, sigma, g)
		require.NoError(t, err, "value %g", v)
		// The double nearest v+noise: its spacing at 9·10⁹ is 2⁻¹⁹, far
		// below σ, so the deviation is the noise's.
		for i, want := range []float64{v, -v} {
			assert.InDelta(t, want, vals[i], 6*sigma, "value %g", want)
			assert.NotEqual(t, want, vals[i], "no noise was added to %g", want)
		}
		_, err = NewSeededInsecure(7).AddLaplace([]float64{v}, sigma, g)
		require.NoError(t, err, "value %g", v)
	}
	_, err = NewSeededInsecure(7).AddGaussian([]float64{MaxGridUnits * g}, sigma, g)
	assert.ErrorContains(t, err, "too large for the grid")
	assert.Less(t, 3.3e8/g, MaxGridUnits/10, "census-scale counts at σ = 2 are more than an order of magnitude inside the bound")
}
