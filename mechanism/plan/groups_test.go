package plan

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

// A Gram whose first row looks like one class but whose diagonal does not
// match is not a sum of scaled all-ones blocks.
func TestGroupClassesChecksTheDiagonal(t *testing.T) {
	_, _, ok := groupClasses(mat.NewSymDense(2, []float64{1, 1, 1, 2}))
	assert.False(t, ok, "[[1,1],[1,2]] is not 1·J")
	classes, c, ok := groupClasses(mat.NewSymDense(3, []float64{2, 0, 2, 0, 5, 0, 2, 0, 2}))
	require.True(t, ok)
	assert.Equal(t, [][]int{{0, 2}, {1}}, classes)
	assert.Equal(t, []float64{2, 5}, c)
}

// The ranges [0,1] and [1,1] on two values have the Gram [[1,1],[1,2]]:
// the Kronecker plan must not report less than the certified dense
// optimum (it reported 2.5 against 5.236 when the diagonal went unchecked).
func TestKronNeverBelowDenseOnNearGroupGram(t *testing.T) {
	w := spec(t, `{"domain": [{"name": "a", "size": 2}, {"name": "b", "size": 2}],
	  "workload": [{"name": "t", "product": {"a": {"ranges": [[0, 1], [1, 1]]}, "b": "identity"}}]}`)
	res, err := Run(context.Background(), w, Kron{}, Options{})
	require.NoError(t, err)
	// The dense certificate is a lower bound on every strategy's error;
	// the Kronecker objective is a real strategy's error, so it is at
	// least that bound (1e-12 relative: the bound's own rounding margin).
	assert.GreaterOrEqual(t, res.Objective, res.LowerBound*(1-1e-12), "objective %g, dense certified bound %g", res.Objective, res.LowerBound)
	assert.GreaterOrEqual(t, res.AboveDense, -1e-8)
}
