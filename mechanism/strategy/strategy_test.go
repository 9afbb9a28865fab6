package strategy

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/reference"
	"github.com/dpsolve/dpsolve/internal/testkit"
	"github.com/dpsolve/dpsolve/newton"
)

// refSens returns the largest column 1- and 2-norms by direct loops.
func refSens(a *mat.Dense) (l1, l2 float64) {
	p, n := a.Dims()
	for j := 0; j < n; j++ {
		var s1, s2 float64
		for r := 0; r < p; r++ {
			s1 += math.Abs(a.At(r, j))
			s2 += a.At(r, j) * a.At(r, j)
		}
		l1, l2 = math.Max(l1, s1), math.Max(l2, math.Sqrt(s2))
	}
	return
}

// TestStructuredGramsAndSensitivities: every strategy's structured Gram and
// sensitivities equal those computed from its explicit matrix. All entries
// are small integers (or their square roots), exact in float64, so the
// comparison is exact except for the square roots (1e-15 relative).
func TestStructuredGramsAndSensitivities(t *testing.T) {
	var all []Matrix
	for _, n := range []int{1, 2, 3, 5, 8, 13, 32, 64} {
		id, _ := NewIdentity(n)
		wv, _ := NewWavelet(n)
		all = append(all, id, wv)
		for _, b := range []int{2, 3, 4, 16} {
			h, err := NewHierarchical(n, b)
			require.NoError(t, err)
			all = append(all, h)
		}
	}
	for _, s := range all {
		a := s.Matrix()
		p, n := a.Dims()
		require.Equal(t, s.Rows(), p, s.Name())
		require.Equal(t, s.Domain(), n, s.Name())
		want := testkit.ExplicitGram(a)
		got := s.Gram()
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				require.Equal(t, want.At(i, j), got.At(i, j), "%s X(%d,%d)", s.Name(), i, j)
			}
		}
		l1, l2 := refSens(a)
		assert.Equal(t, l1, s.L1Sensitivity(), s.Name())
		assert.InDelta(t, l2, s.L2Sensitivity(), 1e-15*l2, s.Name())
		e, err := FromMatrix("copy", a)
		require.NoError(t, err)
		assert.Equal(t, l1, e.L1Sensitivity())
		assert.InDelta(t, l2, e.L2Sensitivity(), 1e-15*l2)
		assert.True(t, mat.EqualApprox(want, e.Gram(), 0), s.Name())
	}
}

func TestTreeShapes(t *testing.T) {
	// Binary tree with root on n = 2^k: 2n−1 nodes, depth k+1.
	h, _ := NewH2(1024)
	assert.Equal(t, 2047, h.Rows())
	assert.Equal(t, 11.0, h.L1Sensitivity())
	assert.Equal(t, math.Sqrt(11), h.L2Sensitivity())
	// 4-ary tree on 64 cells: 1+4+16+64 nodes, depth 4.
	h4, _ := NewHierarchical(64, 4)
	assert.Equal(t, 85, h4.Rows())
	assert.Equal(t, 4.0, h4.L1Sensitivity())
	// Haar: square, and for n = 2^k its rows are mutually orthogonal.
	w, _ := NewWavelet(16)
	a := w.Matrix()
	assert.Equal(t, 16, w.Rows())
	assert.Equal(t, 5.0, w.L1Sensitivity())
	var g mat.Dense
	g.Mul(a, a.T())
	for i := 0; i < 16; i++ {
		for j := 0; j < 16; j++ {
			if i != j {
				assert.Equal(t, 0.0, g.At(i, j), "rows %d,%d", i, j)
			}
		}
	}
	// For other n the generalized transform stays invertible.
	for _, n := range []int{3, 7, 12, 100} {
		w, _ := NewWavelet(n)
		var lu mat.LU
		lu.Factorize(w.Matrix())
		assert.Less(t, lu.Cond(), 1e6, "wavelet n=%d", n)
	}
}

func TestBadInput(t *testing.T) {
	_, err := NewH2(0)
	assert.ErrorIs(t, err, ErrInput, "domain size")
	_, err = NewHierarchical(8, 1)
	assert.ErrorIs(t, err, ErrInput, "branching")
	_, err = NewWavelet(-1)
	assert.ErrorIs(t, err, ErrInput, "domain size")
	_, err = NewIdentity(0)
	assert.ErrorIs(t, err, ErrInput, "domain size")
	_, err = FromMatrix("z", mat.NewDense(2, 2, []float64{1, 0, 1, 0}))
	assert.ErrorIs(t, err, ErrInput, "never measured")
	_, err = FromMatrix("z", mat.NewDense(1, 2, []float64{1, math.Inf(1)}))
	assert.ErrorIs(t, err, ErrInput, "finite")
	_, err = NewOptimized(nil)
	assert.Error(t, err)
	_, err = NewOptimized(&newton.Result{X: mat.NewSymDense(2, nil), A: mat.NewTriDense(3, mat.Upper, nil)})
	assert.ErrorIs(t, err, ErrInput, "3×3")
	_, err = Optimize(context.Background(), nil, nil)
	assert.ErrorIs(t, err, ErrInput, "empty")
}

func TestNewOptimizedWrapsResult(t *testing.T) {
	// A hand-made feasible result: X with unit diagonal and its Cholesky factor.
	x := mat.NewSymDense(2, []float64{1, 0.6, 0.6, 1})
	a := mat.NewTriDense(2, mat.Upper, []float64{1, 0.6, 0, 0.8})
	s, err := NewOptimized(&newton.Result{X: x, A: a})
	require.NoError(t, err)
	assert.Equal(t, 1.0, s.L2Sensitivity())
	assert.InDelta(t, 1.4, s.L1Sensitivity(), 1e-15) // column 2: |0.6|+|0.8|
	assert.True(t, mat.EqualApprox(testkit.ExplicitGram(s.Matrix()), s.Gram(), 1e-15))
}

// TestOptimizePrefix32 runs the real solver (package newton) on Prefix n=32
// and checks the wrapper against the certified reference optimum
// (internal/reference): the strategy's AᵀA equals X, its sensitivity is 1,
// and tr(V X⁻¹) is the optimum to 1e-8 relative (the solver's certified gap;
// the reference has 13 digits).
func TestOptimizePrefix32(t *testing.T) {
	n := 32
	v := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			v.SetSym(i, j, float64(n-j))
		}
	}
	s, err := Optimize(context.Background(), v, nil)
	require.NoError(t, err)
	assert.InDelta(t, 1, s.L2Sensitivity(), 1e-12)
	assert.True(t, mat.EqualApprox(testkit.ExplicitGram(s.Matrix()), s.Gram(), 1e-12))
	var chol mat.Cholesky
	require.True(t, chol.Factorize(s.X))
	var y mat.Dense
	require.NoError(t, chol.SolveTo(&y, v))
	assert.InEpsilon(t, reference.PrefixN32, mat.Trace(&y), 1e-8)
}

func ExampleNewH2() {
	h, _ := NewH2(8)
	fmt.Println(h.Name(), h.Rows(), "rows; Δ₁ =", h.L1Sensitivity())
	x := h.Gram()
	// Cells 0 and 1 share the root, [0,4), [0,2); cells 0 and 7 only the root.
	fmt.Println(x.At(0, 1), x.At(0, 7), x.At(0, 0))
	// Output:
	// h2(n=8) 15 rows; Δ₁ = 4
	// 3 1 4
}
