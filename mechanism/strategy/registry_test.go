package strategy

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/newton"
)

func TestLookupAndParse(t *testing.T) {
	ctx := context.Background()
	v := mat.NewSymDense(4, []float64{4, 3, 2, 1, 3, 3, 2, 1, 2, 2, 2, 1, 1, 1, 1, 1}) // prefix(4)
	for name, want := range map[string]string{
		"identity": "identity(n=4)", "H2": "h2(n=4)", " wavelet ": "wavelet(n=4)", "h3": "h3(n=4)",
	} {
		s, err := Parse(ctx, name, 4, nil, nil)
		require.NoError(t, err, name)
		assert.Equal(t, want, s.Name(), name)
	}
	s, err := Parse(ctx, "optimized", 4, v, &newton.Options{Tol: 1e-10})
	require.NoError(t, err)
	o, ok := s.(*Optimized)
	require.True(t, ok)
	assert.LessOrEqual(t, o.Result.Gap, 1e-10)
	for _, bad := range []string{"", "h1", "h2x", "hx", "tree", "h02"} {
		_, err := Lookup(bad)
		assert.ErrorIs(t, err, ErrInput, "%q", bad)
	}
	_, err = Parse(ctx, "optimized", 4, nil, nil)
	assert.ErrorIs(t, err, ErrInput)
	s, err = Parse(ctx, "identity", 0, nil, nil)
	assert.ErrorIs(t, err, ErrInput)
	assert.Nil(t, s, "a failed build is a true nil Strategy")
	var names []string
	for _, b := range Baselines() {
		names = append(names, b.Name)
	}
	assert.Equal(t, []string{"identity", "h2", "wavelet", "optimized"}, names)
}

// A cancelled optimization returns newton's best strategy so far and the
// context's error (dpsolve's one cancellation rule).
func TestOptimizeCancelled(t *testing.T) {
	v := mat.NewSymDense(4, []float64{4, 3, 2, 1, 3, 3, 2, 1, 2, 2, 2, 1, 1, 1, 1, 1})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o, err := Optimize(ctx, v, nil)
	require.ErrorIs(t, err, context.Canceled)
	if o != nil { // newton may have nothing yet when cancelled before its first step
		assert.InDelta(t, 1, o.L2Sensitivity(), 1e-12)
	}
}
