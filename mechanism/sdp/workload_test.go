package sdp

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/model/workload"
)

// ForWorkload keeps W when m ≤ n and otherwise uses the n×n Gram factor,
// whose Gram RᵀR equals WᵀW (the program depends on W only through it).
func TestForWorkloadSource(t *testing.T) {
	w, err := workload.Parse("prefix", 4)
	require.NoError(t, err)
	fm, src, err := ForWorkload(Approx, w)
	require.NoError(t, err)
	assert.Equal(t, SourceMatrix, src)
	assert.Equal(t, 4, fm.M)

	wide, err := workload.Parse("allrange", 4) // m = 10 > n = 4
	require.NoError(t, err)
	fm, src, err = ForWorkload(Approx, wide)
	require.NoError(t, err)
	assert.Equal(t, SourceGramFactor, src)
	assert.Equal(t, 4, fm.M)
	var g mat.Dense
	g.Mul(fm.W.T(), fm.W)
	assert.True(t, mat.EqualApprox(&g, wide.Gram(), 1e-12), "RᵀR = WᵀW")
}

// StrategyMatrix: chol(X) for Approx (AᵀA = X, upper triangular), the A
// variable for the exact forms, and an error for an X that is not positive
// definite.
func TestStrategyMatrix(t *testing.T) {
	x := mat.NewSymDense(2, []float64{4, 2, 2, 3})
	a, err := (&Point{X: x}).StrategyMatrix(Approx)
	require.NoError(t, err)
	assert.Equal(t, 0.0, a.At(1, 0))
	var ata mat.Dense
	ata.Mul(a.T(), a)
	assert.True(t, mat.EqualApprox(&ata, x, 1e-14))

	exactA := mat.NewDense(2, 2, []float64{1, 0, 0, 1})
	got, err := (&Point{X: x, A: exactA}).StrategyMatrix(ExactBounded)
	require.NoError(t, err)
	assert.Same(t, exactA, got)

	_, err = (&Point{X: mat.NewSymDense(2, []float64{1, 2, 2, 1})}).StrategyMatrix(Approx)
	assert.ErrorContains(t, err, "not positive definite")
}
