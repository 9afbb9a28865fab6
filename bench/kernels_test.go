package bench

import (
	"math"
	"runtime"
	"slices"
	"testing"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

func nan() float64 { return math.NaN() }

// general converts a gonum matrix to a blas.General copy.
func general(m mat.Matrix) blas.General {
	r, c := m.Dims()
	g := blas.NewGeneral(r, c)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			g.Data[i*c+j] = m.At(i, j)
		}
	}
	return g
}

// hessianProduct against the definition H[S] = X⁻¹SX⁻¹VX⁻¹ + X⁻¹VX⁻¹SX⁻¹
// formed with gonum's dense products (the Hessian of tr(V X⁻¹); see the
// newton package documentation), at a size that is not a
// multiple of the 64×64 tile.
func TestHessianProductMatchesDefinition(t *testing.T) {
	const n = 70
	X := seededInsecureSPD(n, 11)
	V := seededInsecureSPD(n, 12)
	S := seededInsecureSPD(n, 13)
	for i := 0; i < n; i++ {
		S.Data[i*n+i] = 0
	}
	toDense := func(g blas.General) *mat.Dense { return mat.NewDense(n, n, slices.Clone(g.Data)) }
	var Xinv mat.Dense
	require.NoError(t, Xinv.Inverse(toDense(X)))
	var XVX, want, a, b mat.Dense
	XVX.Product(&Xinv, toDense(V), &Xinv)
	a.Product(&Xinv, toDense(S), &XVX)
	b.Product(&XVX, toDense(S), &Xinv)
	want.Add(&a, &b)
	G := general(&XVX)
	for i := range G.Data {
		G.Data[i] = -G.Data[i]
	}
	tmp, got := blas.NewSquare(n), blas.NewSquare(n)
	hessianProduct(general(&Xinv), S, G, tmp, got)
	diff := mat.NewDense(n, n, nil)
	diff.Sub(toDense(got), &want)
	// both are O(n) sums of products of O(1) entries; 1e-12 relative to the
	// norm leaves ~1e4 ulps for the different summation orders
	assert.LessOrEqual(t, mat.Norm(diff, 2), 1e-12*mat.Norm(&want, 2))
	assert.True(t, mat.EqualApprox(toDense(got), toDense(got).T(), 0), "H[S] is exactly symmetric")
}

func TestKernelsTable(t *testing.T) {
	rows, err := Kernels([]int{48, 64}, 1)
	require.NoError(t, err)
	want := []string{kernelDGEMM, kernelCholesky, kernelCholInverse, kernelEigValues, kernelEigVectors, kernelHessian}
	require.Len(t, rows, 2*len(want))
	for i, r := range rows {
		assert.Equal(t, want[i%len(want)], r.Kernel)
		assert.Equal(t, []int{48, 64}[i/len(want)], r.N)
		assert.Equal(t, blas.Current().Name(), r.Backend)
		assert.Greater(t, float64(r.Seconds), 0.0)
		assert.InDelta(t, r.Flops/float64(r.Seconds)/1e9, float64(r.GFlops), 1e-9*float64(r.GFlops))
		if r.Kernel == kernelDGEMM {
			assert.Equal(t, Num(1), r.DGEMMEquivalents)
			assert.Equal(t, 2*math.Pow(float64(r.N), 3), r.Flops)
		}
	}
	_, err = Kernels([]int{0}, 1)
	assert.Error(t, err)
}

func TestDGEMMSeconds(t *testing.T) {
	s := dgemmSeconds(64, 3)
	assert.Greater(t, s, 0.0)
	assert.Less(t, s, 1.0)
}

func TestMemoryProbe(t *testing.T) {
	if runtime.GOOS != "linux" {
		_, err := startMemoryProbe()
		assert.Error(t, err)
		return
	}
	p, err := startMemoryProbe()
	require.NoError(t, err)
	const size = 64 << 20
	buf := make([]byte, size)
	for i := 0; i < size; i += 4096 {
		buf[i] = 1 // touch every page so it is resident
	}
	peak, err := p.Peak()
	require.NoError(t, err)
	runtime.KeepAlive(buf)
	// the 64 MiB are resident at the peak; 4 MiB of slack for what the
	// runtime returned to the OS between the baseline and the allocation
	assert.GreaterOrEqual(t, peak-p.Baseline, int64(size-4<<20))
}
