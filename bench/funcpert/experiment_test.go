package funcpert

import (
	"bytes"
	"context"
	"encoding/csv"
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/mechanism/distributed"
	"github.com/dpsolve/dpsolve/mechanism/functional/basis"
)

// quickConfig is a seeded reduced configuration: 15 and 28 coefficients,
// six ε over logspace(−2, 3), four repetitions, a short baseline tuning.
func quickConfig() Config {
	cfg := DefaultConfig()
	cfg.Degrees = []int{4, 6}
	cfg.Eps = []float64{1e-2, 1e-1, 1, 10, 100, 1000}
	cfg.Reps = 4
	cfg.Message.S0 = []float64{1e-6, 1e-4, 1e-2}
	cfg.Message.P = []float64{0.9, 0.99}
	cfg.Message.TuneReps = 2
	return cfg
}

func series(t *testing.T, res *Result, method string, coeffs int) Series {
	for _, s := range res.Series {
		if s.Method == method && s.Coeffs == coeffs {
			return s
		}
	}
	t.Fatalf("no series %s/%d", method, coeffs)
	return Series{}
}

// The experiment's shape (seeded): for each coefficient count the mean error
// falls with ε (by orders of magnitude) until it saturates at the smoothing
// error predicted by the noise-free pipeline; the saturation level is lower
// for more coefficients; the mean error never exceeds the theoretical bound;
// and the message-perturbation baseline does not improve by more than 2×
// across the ε range.
func TestExperimentShape(t *testing.T) {
	cfg := quickConfig()
	res, err := Run(context.Background(), cfg, nil)
	require.NoError(t, err)
	require.Len(t, res.Rows, (len(cfg.Degrees)+1)*len(cfg.Eps)*cfg.Reps)
	for _, K := range cfg.Degrees {
		n := basis.Size(2, K)
		s := series(t, res, "functional", n)
		require.Len(t, s.Eps, len(cfg.Eps))
		last := len(s.Mean) - 1
		// Decreases: two orders of magnitude at least between the ends (the
		// measured ratio is ≈ 20 for 15 and ≈ 1400 for 28 coefficients), and
		// never rises by more than the repetition spread allows (×1.5).
		assert.Greater(t, s.Mean[0], 10*s.Mean[last], "coeffs %d", n)
		for i := 1; i <= last; i++ {
			assert.LessOrEqual(t, s.Mean[i], 1.5*s.Mean[i-1], "coeffs %d ε %g", n, s.Eps[i])
		}
		// Saturates: the last two points agree within 10% and equal the
		// noise-free smoothing error within 10% (at ε = 1000 the noise moves the
		// minimizer by ≲ 1e-5, far below these levels).
		sat := res.Smoothing[K]
		assert.InEpsilon(t, s.Mean[last-1], s.Mean[last], 0.1, "coeffs %d", n)
		assert.InEpsilon(t, sat, s.Mean[last], 0.1, "coeffs %d", n)
		// The theoretical bound (on the expected error) holds for the mean at
		// every ε.
		for i := range s.Eps {
			assert.LessOrEqual(t, s.Mean[i], s.Bound[i], "coeffs %d ε %g", n, s.Eps[i])
		}
	}
	assert.Less(t, res.Smoothing[6], res.Smoothing[4]/10, "saturation falls with more coefficients")
	assert.Less(t, series(t, res, "functional", 28).Mean[5], series(t, res, "functional", 15).Mean[5]/10)
	m := series(t, res, "message", 0)
	lo, hi := math.Inf(1), 0.0
	for _, v := range m.Mean {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	assert.LessOrEqual(t, hi/lo, 2.0, "message baseline: %v", m.Mean)
	// The functional method beats the baseline once ε is moderate.
	assert.Less(t, series(t, res, "functional", 28).Mean[2], m.Mean[2]/10)
	// Every projection is certified within 1% of the distance it moved.
	assert.Less(t, res.ProjectionRelative, 0.01)
}

// With 120 coefficients the saturation level is lower still: at ε = 1000 the
// error is far below the 28-coefficient level (8.4e-4), and the noise-free
// smoothing error is ≈ 3e-6.
func TestSaturation120(t *testing.T) {
	cfg := quickConfig()
	cfg.Degrees = []int{14}
	cfg.Eps = []float64{1000}
	cfg.Reps = 2
	cfg.Message.Rounds = 0
	res, err := Run(context.Background(), cfg, nil)
	require.NoError(t, err)
	s := series(t, res, "functional", 120)
	assert.Less(t, res.Smoothing[14], 1e-5)
	assert.Less(t, s.Mean[0], 1e-4)
	assert.LessOrEqual(t, s.Mean[0], s.Bound[0])
}

// The quadrature used for the agents' coefficients (2K + 24 Gauss nodes per
// axis) agrees with a much finer one (2K + 60) to 1e-9 relative to the
// largest coefficient, so the smoothing error is not a quadrature artifact.
func TestQuadratureConverged(t *testing.T) {
	agents, err := distributed.NewLogisticAgents(distributed.DefaultLogisticConfig(1))
	require.NoError(t, err)
	box, _ := basis.Cube(2, -5, 5)
	b, err := basis.New(box, 14)
	require.NoError(t, err)
	f := func(x []float64) float64 { return agents[0].Eval(x, nil, nil) }
	c1, err := b.Coefficients(f, 2*14+24)
	require.NoError(t, err)
	c2, err := b.Coefficients(f, 2*14+60)
	require.NoError(t, err)
	for k := range c1 {
		assert.InDelta(t, c2[k], c1[k], 1e-9*math.Abs(c2[0]))
	}
}

// Repetitions are independent of scheduling: one worker and two workers give
// identical rows.
func TestReproducible(t *testing.T) {
	cfg := quickConfig()
	cfg.Degrees = []int{4}
	cfg.Eps = []float64{0.1, 10}
	cfg.Reps = 3
	cfg.Message.Rounds = 50
	cfg.Workers = 1
	a, err := Run(context.Background(), cfg, nil)
	require.NoError(t, err)
	cfg.Workers = 2
	b, err := Run(context.Background(), cfg, nil)
	require.NoError(t, err)
	assert.Equal(t, a.Rows, b.Rows)
}

func TestOutputs(t *testing.T) {
	cfg := quickConfig()
	cfg.Degrees = []int{4}
	cfg.Eps = []float64{0.1, 10}
	cfg.Reps = 2
	cfg.Message.Rounds = 50
	res, err := Run(context.Background(), cfg, nil)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, WriteCSV(&buf, res.Rows))
	recs, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	require.Equal(t, []string{"eps", "coeffs", "method", "rep", "error"}, recs[0])
	require.Len(t, recs, 1+len(res.Rows))
	methods := map[string]int{}
	for _, r := range recs[1:] {
		methods[r[2]]++
		e, err := strconv.ParseFloat(r[4], 64)
		require.NoError(t, err)
		assert.True(t, e >= 0 && !math.IsInf(e, 0))
	}
	assert.Equal(t, map[string]int{"functional": 4, "message": 4}, methods)
}

func TestConfigErrors(t *testing.T) {
	mod := []func(*Config){
		func(c *Config) { c.Eps = nil },
		func(c *Config) { c.Eps = []float64{0} },
		func(c *Config) { c.Eps = []float64{-1} },
		func(c *Config) { c.Degrees = []int{1} },
		func(c *Config) { c.Reps = 0 },
		func(c *Config) { c.P = 2 },
		func(c *Config) { c.Q = 1 },
		func(c *Config) { c.Gamma = 0 },
		func(c *Config) { c.S.Alpha = -1 },
		func(c *Config) { c.GridFactor = 0.5 },
		func(c *Config) { c.Workers = -1 },
		func(c *Config) { c.Message.P = []float64{1} },
		func(c *Config) { c.Message.Delta = 0 },
		func(c *Config) { c.Data.Agents = 1 },
	}
	for i, m := range mod {
		c := DefaultConfig()
		m(&c)
		_, err := Run(context.Background(), c, nil)
		require.Error(t, err, "case %d", i)
	}
}
