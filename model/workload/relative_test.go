package workload

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/inputerr"
)

// Specs with n-relative values, ';' separators or marginals without dims
// build exactly the workload of the spelled-out spec: the same Gram, the
// same queries, the same shape.
func TestRelativeSpecsAreTheSpelledOutOnes(t *testing.T) {
	for _, tc := range []struct {
		spec string
		n    int
		want string
	}{
		{"wrange:m=2n", 256, "wrange:m=512"},
		{"wrelated:m=2n;s=n/8", 1024, "wrelated:m=2048,s=128"},
		{"wrelated:m=n;s=n/3;seed=4", 100, "wrelated:m=100,s=33,seed=4"},
		{"wdiscrete:m=3n;pneg=0.02", 64, "wdiscrete:m=192,pneg=0.02"},
		{"width:k=n/4", 64, "width:k=16"},
		{"width:k=n/1000", 64, "width:k=1"}, // n/K rounds down, at least 1
		{"marginals:k=3", 1024, "marginals:dims=4x4x4x4x4,k=3"},
		{"marginals:k=2", 2048, "marginals:dims=8x4x4x4x4,k=2"},
		{"marginals", 48, "marginals:dims=12x4"},
	} {
		got, err := Parse(tc.spec, tc.n)
		require.NoError(t, err, tc.spec)
		want, err := Parse(tc.want, tc.n)
		require.NoError(t, err, tc.want)
		assert.True(t, mat.Equal(got.Gram(), want.Gram()), "%s at n = %d is not %s", tc.spec, tc.n, tc.want)
		assert.Equal(t, want.Queries(), got.Queries(), tc.spec)
		assert.Equal(t, want.Domain(), got.Domain(), tc.spec)
		gs, err := ParseShape(tc.spec, tc.n)
		require.NoError(t, err, tc.spec)
		ws, err := ParseShape(tc.want, tc.n)
		require.NoError(t, err, tc.want)
		assert.Equal(t, ws, gs, tc.spec)
	}
}

func TestRelativeSpecErrors(t *testing.T) {
	for _, tc := range []struct {
		spec string
		n    int
		msg  string
	}{
		{"wrange:m=n/0", 64, "divisor"},
		{"wrange:m=n/x", 64, "divisor"},
		{"marginals:dims=4x4,k=n", 0, "relative to the domain size"},
		{"marginals:k=2", 6, "n = 4^a·m with a ≥ 2"},
		{"marginals:k=2", 4, "n = 4^a·m with a ≥ 2"},
		{"marginals:k=2", 0, "needs dims="},
		{"wrange:m=2x", 64, "not an integer"},
		{"wrange:m=1;;seed=2", 64, "bad parameter"},
		{"wrange:m=4000000000n", 64, "too large"},
	} {
		_, err := Parse(tc.spec, tc.n)
		require.Error(t, err, tc.spec)
		assert.True(t, errors.Is(err, inputerr.ErrInput), "%s: %v", tc.spec, err)
		assert.Contains(t, err.Error(), tc.msg, tc.spec)
		_, err = ParseShape(tc.spec, tc.n)
		assert.Error(t, err, tc.spec)
	}
}
