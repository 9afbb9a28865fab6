package plan

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/newton"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

// The closed form for a Gram of disjoint groups, G = Σᵣ cᵣ·J_{Sᵣ}
// (singular), checked against newton's independent certified solve of the
// same G: newton's lower bound is below our objective, and newton's
// (exact, singular) objective agrees to its certified gap (1e-8; 2e-8
// allows rounding in both).
func TestGroupsBlockAgainstNewton(t *testing.T) {
	// Groups {0,3,4}, {1}, {2,5} with constants 2, 0.5, 3.
	g := mat.NewSymDense(6, nil)
	groups := [][]int{{0, 3, 4}, {1}, {2, 5}}
	cs := []float64{2, 0.5, 3}
	for r, cl := range groups {
		for _, i := range cl {
			for _, j := range cl {
				if i <= j {
					g.SetSym(i, j, cs[r])
				}
			}
		}
	}
	b, err := solveBlock(context.Background(), g, calibrate.Gaussian)
	require.NoError(t, err)
	assert.Equal(t, "groups", b.how)
	assert.InDelta(t, 5.5, b.obj, 1e-14)
	assert.Equal(t, b.obj, b.lb)
	nr, err := newton.Solve(context.Background(), g, nil)
	require.NoError(t, err)
	assert.LessOrEqual(t, nr.LowerBound, b.obj*(1+1e-12))
	assert.GreaterOrEqual(t, nr.Objective, b.obj*(1-1e-12))
	assert.InDelta(t, b.obj, nr.Objective, 2e-8*b.obj, "newton's exact singular solve agrees")
	assert.Equal(t, 0.0, nr.Regularization)
	// The factor answers G: tr(G X⁺) by the workload's eigen-based Pinv.
	var x mat.SymDense
	x.SymOuterK(1, b.a.T())
	p, err := domain.NewPinv(&x)
	require.NoError(t, err)
	assert.InDelta(t, b.obj, p.Trace(g), 1e-12*b.obj)
}

// Values no query touches: the block is solved on its support, certified,
// and embedded with identity rows; the result matches newton on the
// support's Gram.
func TestSolveOnSupport(t *testing.T) {
	pb, err := domain.NewBlock("prefix", 5, workload.Blocks)
	require.NoError(t, err)
	g := mat.NewSymDense(7, nil) // prefix on values 1..5, values 0 and 6 untouched
	for i := 0; i < 5; i++ {
		for j := i; j < 5; j++ {
			g.SetSym(i+1, j+1, pb.Gram().At(i, j))
		}
	}
	b, err := solveBlock(context.Background(), g, calibrate.Gaussian)
	require.NoError(t, err)
	nr, err := newton.Solve(context.Background(), pb.Gram(), nil)
	require.NoError(t, err)
	assert.InDelta(t, nr.Objective, b.obj, 2e-8*nr.Objective)
	assert.LessOrEqual(t, b.lb, b.obj*(1+1e-12))
	r, c := b.a.Dims()
	assert.Equal(t, []int{7, 7}, []int{r, c})
	for j := 0; j < 7; j++ {
		assert.InDelta(t, 1, mat.Norm(b.a.ColView(j), 2), 1e-12)
	}
	var x mat.SymDense
	x.SymOuterK(1, b.a.T())
	p, err := domain.NewPinv(&x)
	require.NoError(t, err)
	assert.InDelta(t, b.obj, p.Trace(g), 1e-10*b.obj)
	assert.False(t, math.IsInf(p.Trace(g), 0))
}

// A singular Gram that is not of disjoint groups (overlapping predicates:
// "alone or in combination" over 3 flags, 7 codes): newton's exact solve
// gives a rank-deficient factor with only its measuring rows, unit max
// column norm, and the objective newton certifies, evaluated through X⁺
// by the workload's own Pinv.
func TestSingularNewtonBlock(t *testing.T) {
	w := mat.NewDense(3, 7, nil)
	for v := 1; v <= 7; v++ {
		for k := 0; k < 3; k++ {
			if v>>k&1 == 1 {
				w.Set(k, v-1, 1)
			}
		}
	}
	blk, err := domain.MatrixBlock("combo3", w)
	require.NoError(t, err)
	g := blk.Gram()
	b, err := solveBlock(context.Background(), g, calibrate.Gaussian)
	require.NoError(t, err)
	assert.Equal(t, "newton", b.how)
	assert.Equal(t, 0.0, b.theta)
	r, c := b.a.Dims()
	assert.Equal(t, 7, c)
	assert.LessOrEqual(t, r, 3, "rank(G) = 3 rows measure everything")
	assert.InDelta(t, 1, maxDiag(b.a), 1e-12)
	var x mat.SymDense
	x.SymOuterK(1, b.a.T())
	p, err := domain.NewPinv(&x)
	require.NoError(t, err)
	tr := p.Trace(g)
	assert.InDelta(t, b.obj, tr, 1e-9*tr)
	assert.LessOrEqual(t, b.lb, b.obj*(1+1e-12))
	assert.InDelta(t, b.lb, b.obj, 1e-8*b.obj, "certified to newton's gap")
}
