package release

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/internal/testkit/budgettest"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// countingSource records how many times noise was drawn.
type countingSource struct {
	noise.Source
	draws int
}

func (c *countingSource) AddLaplace(v []float64, scale, grid float64) (float64, error) {
	c.draws++
	return c.Source.AddLaplace(v, scale, grid)
}

func (c *countingSource) AddGaussian(v []float64, sigma, grid float64) (float64, error) {
	c.draws++
	return c.Source.AddGaussian(v, sigma, grid)
}

// Run is the step-by-step release (New, Measure, Reconstruct, PostProcess,
// Answer) in one call: with the same seeded stream it must give the same
// answers bit for bit, and the expected error of ExpectedError.
func TestRunMatchesStepByStep(t *testing.T) {
	x := []float64{5, 0, 3, 12, 7, 1, 0, 4}
	a := h2Matrix(t, len(x))
	w, err := workload.NewPrefix(len(x))
	require.NoError(t, err)
	pp := Cleanup{Clamp: true}
	for _, b := range []calibrate.Budget{gauss, budgettest.PureDP(0.5), budgettest.ZCDP(0.2)} {
		res, err := Run(context.Background(), Request{Strategy: a, Budget: b, Data: x, Workload: w,
			Noise: noise.NewSeededInsecure(7), PostProcess: pp})
		require.NoError(t, err, b.String())

		m, err := New(a, b)
		require.NoError(t, err)
		exp, err := m.ExpectedError(w)
		require.NoError(t, err)
		y, err := m.Measure(x, noise.NewSeededInsecure(7))
		require.NoError(t, err)
		xhat, err := m.Reconstruct(y)
		require.NoError(t, err)
		pp.Apply(xhat)
		answers, err := Answer(w, xhat)
		require.NoError(t, err)

		assert.Equal(t, answers, res.Answers, b.String())
		assert.Equal(t, xhat, res.XHat, b.String())
		assert.Equal(t, exp, res.Expected, b.String())
		assert.Equal(t, m.Calibration(), res.Mechanism.Calibration(), b.String())
	}
}

// Every refusal comes before the noise: a cancelled context, bad data, a
// workload of the wrong domain and a budget too large for the data all
// leave the source untouched.
func TestRunRefusesBeforeDrawing(t *testing.T) {
	x := []float64{5, 0, 3, 12}
	a := h2Matrix(t, len(x))
	w, err := workload.NewPrefix(len(x))
	require.NoError(t, err)
	w5, err := workload.NewPrefix(5)
	require.NoError(t, err)
	cancelled, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("stop")
	cancel(stop)

	src := &countingSource{Source: noise.NewSeededInsecure(1)}
	req := func(mod func(*Request)) Request {
		r := Request{Strategy: a, Budget: gauss, Data: x, Workload: w, Noise: src}
		mod(&r)
		return r
	}
	_, err = Run(cancelled, req(func(*Request) {}))
	assert.ErrorIs(t, err, stop, "cancelled: the context's cause")
	_, err = Run(context.Background(), req(func(r *Request) { r.Data = []float64{1, -1, 0, 0} }))
	assert.ErrorIs(t, err, ErrInput, "negative cell")
	_, err = Run(context.Background(), req(func(r *Request) { r.Workload = w5 }))
	assert.ErrorIs(t, err, ErrInput, "workload domain")

	// ε = 1e4 on counts of 1e12: the Laplace scale Δ₁/ε ≈ 3e-4 has a grid
	// near 3e-4·2^-40 ≈ 3e-16, and 4e12/3e-16 ≈ 1.5e28 > 2^72 ≈ 4.7e21
	// grid units.
	big := []float64{1e12, 1e12, 1e12, 1e12}
	_, err = Run(context.Background(), req(func(r *Request) { r.Data, r.Budget = big, budgettest.PureDP(1e4) }))
	var ge *GridError
	require.ErrorAs(t, err, &ge)
	assert.ErrorIs(t, err, ErrInput)
	// The largest measurement of the H2 tree on constant data is the root,
	// the sum of all cells; MinScale is that peak times 2^42/2^72.
	assert.Equal(t, 4e12, ge.Peak)
	assert.Equal(t, 4e12*0x1p-30, ge.MinScale)
	assert.Less(t, ge.Scale, ge.MinScale)

	assert.Zero(t, src.draws, "no refusal may draw noise")
	_, err = Run(context.Background(), req(func(*Request) {}))
	require.NoError(t, err)
	assert.Equal(t, 1, src.draws, "a release draws once")
}
