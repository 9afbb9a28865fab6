package blas_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	gblas "gonum.org/v1/gonum/blas"

	"github.com/dpsolve/dpsolve/blas"
)

// randSPD returns B·Bᵀ + n·I for a seeded random B: well conditioned.
func randSPD(n int, seed uint64) blas.General {
	r := rand.New(rand.NewPCG(seed, 1))
	b := blas.NewSquare(n)
	for i := range b.Data {
		b.Data[i] = r.NormFloat64()
	}
	a := blas.NewSquare(n)
	blas.Gemm(gblas.NoTrans, gblas.Trans, 1, b, b, 0, a)
	for i := 0; i < n; i++ {
		a.Data[i*n+i] += float64(n)
	}
	return a
}

func maxAbsDiff(a, b blas.General) float64 {
	d := 0.0
	for i := range a.Data {
		d = math.Max(d, math.Abs(a.Data[i]-b.Data[i]))
	}
	return d
}

// TestKernelsAgainstDefinitions checks the wrapper semantics (triangles,
// layouts, eigenvector orientation) on both backends: UᵀU = A,
// A·A⁻¹ = I, A·Q = Q·diag(w), against products computed by Gemm.
func TestKernelsAgainstDefinitions(t *testing.T) {
	for _, be := range blas.Backends() {
		t.Run(be.Name(), func(t *testing.T) {
			defer blas.Use(blas.Current())
			blas.Use(be)
			for _, n := range []int{1, 7, 65, 200} {
				a := randSPD(n, uint64(n))
				// Tolerances: entries of A are O(n); backward-stable
				// factorizations reproduce A to a few ulps times n.
				tol := 1e-12 * float64(n) * float64(n)

				u := blas.NewSquare(n)
				blas.Copy(u, a)
				require.True(t, blas.Cholesky(u))
				for i := 1; i < n; i++ {
					for j := 0; j < i; j++ {
						require.Zero(t, u.Data[i*n+j], "strict lower triangle of U must be zero")
					}
				}
				utu := blas.NewSquare(n)
				blas.Gemm(gblas.Trans, gblas.NoTrans, 1, u, u, 0, utu)
				require.Less(t, maxAbsDiff(utu, a), tol, "UᵀU = A")

				blas.CholInverse(u)
				prod := blas.NewSquare(n)
				blas.Gemm(gblas.NoTrans, gblas.NoTrans, 1, a, u, 0, prod)
				for i := 0; i < n; i++ {
					prod.Data[i*n+i] -= 1
				}
				require.Less(t, maxAbsDiff(prod, blas.NewSquare(n)), 1e-12*float64(n), "A·A⁻¹ = I")

				q := blas.NewSquare(n)
				blas.Copy(q, a)
				w := make([]float64, n)
				require.True(t, blas.SymEig(q, w, true))
				aq := blas.NewSquare(n)
				blas.Gemm(gblas.NoTrans, gblas.NoTrans, 1, a, q, 0, aq)
				for i := 0; i < n; i++ {
					for j := 0; j < n; j++ {
						aq.Data[i*n+j] -= q.Data[i*n+j] * w[j]
					}
				}
				require.Less(t, maxAbsDiff(aq, blas.NewSquare(n)), tol, "A·Q = Q·diag(w): eigenvectors are columns")
				for j := 1; j < n; j++ {
					require.LessOrEqual(t, w[j-1], w[j], "eigenvalues ascending")
				}
				// Singular values of a symmetric positive definite
				// matrix are its eigenvalues, descending.
				sv := make([]float64, n)
				c0 := blas.NewSquare(n)
				blas.Copy(c0, a)
				require.True(t, blas.SingularValues(c0, sv))
				for j := range sv {
					require.InDelta(t, w[n-1-j], sv[j], tol, "singular values = eigenvalues of SPD A")
				}
				// SymEigVectors (OpenBLAS: MRRR below 128, its own divide
				// and conquer into z above; both sizes are in the list)
				// agrees with SymEig and returns orthonormal columns.
				c1, z := blas.NewSquare(n), blas.NewSquare(n)
				blas.Copy(c1, a)
				w2 := make([]float64, n)
				require.True(t, blas.SymEigVectors(c1, z, w2))
				blas.Gemm(gblas.NoTrans, gblas.NoTrans, 1, a, z, 0, aq)
				for i := 0; i < n; i++ {
					for j := 0; j < n; j++ {
						aq.Data[i*n+j] -= z.Data[i*n+j] * w2[j]
					}
				}
				require.Less(t, maxAbsDiff(aq, blas.NewSquare(n)), tol, "A·Z = Z·diag(w) (SymEigVectors)")
				ztz := blas.NewSquare(n)
				blas.Gemm(gblas.Trans, gblas.NoTrans, 1, z, z, 0, ztz)
				for i := 0; i < n; i++ {
					ztz.Data[i*n+i] -= 1
				}
				// Orthogonality of computed eigenvectors: O(n·ε).
				require.Less(t, maxAbsDiff(ztz, blas.NewSquare(n)), 1e-13*float64(n), "ZᵀZ = I (SymEigVectors)")
				for j := range w {
					require.InDelta(t, w[j], w2[j], tol)
				}
				vals := make([]float64, n)
				c := blas.NewSquare(n)
				blas.Copy(c, a)
				require.True(t, blas.SymEig(c, vals, false))
				for j := range w {
					require.InDelta(t, w[j], vals[j], tol, "values-only path agrees")
				}
			}
		})
	}
}

// TestSingularValuesRectangular checks the row-major/column-major swap on
// non-square shapes against σ² = eigenvalues of A·Aᵀ (or Aᵀ·A).
func TestSingularValuesRectangular(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, be := range blas.Backends() {
		t.Run(be.Name(), func(t *testing.T) {
			defer blas.Use(blas.Current())
			blas.Use(be)
			for _, sh := range [][2]int{{3, 7}, {9, 4}, {1, 5}, {6, 1}} {
				m, n := sh[0], sh[1]
				a := blas.NewGeneral(m, n)
				for i := range a.Data {
					a.Data[i] = r.NormFloat64()
				}
				k := min(m, n)
				g := blas.NewSquare(k)
				if m <= n {
					blas.Gemm(gblas.NoTrans, gblas.Trans, 1, a, a, 0, g)
				} else {
					blas.Gemm(gblas.Trans, gblas.NoTrans, 1, a, a, 0, g)
				}
				w := make([]float64, k)
				require.True(t, blas.SymEig(g, w, false))
				s := make([]float64, k)
				require.True(t, blas.SingularValues(a, s))
				for j := 0; j < k; j++ {
					require.InDelta(t, w[k-1-j], s[j]*s[j], 1e-12*w[k-1], "shape %dx%d", m, n)
				}
			}
		})
	}
}

// TestGemmUpper compares the upper triangle with a full GEMM for sizes that
// do and do not divide into the four blocks.
func TestGemmUpper(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	for _, n := range []int{1, 3, 4, 17, 64} {
		for _, k := range []int{1, 5, n} {
			a, b := blas.NewGeneral(n, k), blas.NewGeneral(n, k)
			for i := range a.Data {
				a.Data[i], b.Data[i] = r.NormFloat64(), r.NormFloat64()
			}
			want, got := blas.NewSquare(n), blas.NewSquare(n)
			for i := range want.Data {
				want.Data[i] = r.NormFloat64()
			}
			blas.Copy(got, want)
			blas.Gemm(gblas.NoTrans, gblas.Trans, 1.5, a, b, 0.5, want)
			blas.GemmUpper(1.5, a, b, 0.5, got)
			for i := 0; i < n; i++ {
				for j := i; j < n; j++ {
					require.InDelta(t, want.Data[i*n+j], got.Data[i*n+j], 1e-12, "n=%d k=%d (%d,%d)", n, k, i, j)
				}
			}
		}
	}
}
