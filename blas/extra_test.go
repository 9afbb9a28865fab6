package blas_test

import (
	"fmt"
	"math"
	"testing"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/blas"
)

// gonumAtInit is gonum's global BLAS right after package blas initialized
// (package variables of a test initialize after its imports, before
// TestMain calls Use).
var gonumAtInit = blas64.Implementation()

// Importing blas leaves gonum's globals alone (no init rewires them: a
// program that also uses gonum is not surprised); the explicit Use that
// TestMain makes, as the dpsolve command's main does, installs the default
// backend's BLAS as gonum's (the LAPACK half is checked by
// TestMatFactorizationsRunOnBackend).
func TestImportLeavesGonumAndUseInstalls(t *testing.T) {
	if got, want := fmt.Sprintf("%T", gonumAtInit), fmt.Sprintf("%T", gonum.Implementation{}); got != want {
		t.Fatalf("after importing blas, gonum's blas64 is %s, want gonum's own %s", got, want)
	}
	if got, want := fmt.Sprintf("%T", blas64.Implementation()), fmt.Sprintf("%T", blas.Default().BLAS()); got != want {
		t.Fatalf("after Use(Default()), gonum's blas64 is %s, want the default backend's %s", got, want)
	}
}

// CholSolve and Trsv against gonum/mat's dense solves on a small SPD system
// (an independent computation); relative 1e-12 is ~10⁴ ulps for a matrix of
// condition number ~10.
func TestCholSolveAndTrsv(t *testing.T) {
	const n = 5
	a := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			v := 1 / float64(1+i+j)
			if i == j {
				v += 2
			}
			a.SetSym(i, j, v)
		}
	}
	b := mat.NewDense(n, 2, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	var want mat.Dense
	if err := want.Solve(a, b); err != nil {
		t.Fatal(err)
	}
	for _, be := range blas.Backends() {
		prev := blas.Current()
		blas.Use(be)
		u := blas.NewSquare(n)
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				u.Data[i*n+j] = a.At(i, j)
			}
		}
		if !blas.Cholesky(u) {
			t.Fatal("not positive definite")
		}
		x := blas.NewGeneral(n, 2)
		copy(x.Data, b.RawMatrix().Data)
		blas.CholSolve(u, x)
		for i := range x.Data {
			if w := want.RawMatrix().Data[i]; math.Abs(x.Data[i]-w) > 1e-12*math.Abs(w) {
				t.Errorf("%s: CholSolve[%d] = %v, want %v", be.Name(), i, x.Data[i], w)
			}
		}
		// Trsv with U: U·y = c, checked by multiplying back.
		c := []float64{1, -1, 2, 0.5, 3}
		y := append([]float64(nil), c...)
		blas.Trsv(gblas.Upper, gblas.NoTrans, gblas.NonUnit, u, y)
		for i := 0; i < n; i++ {
			var s float64
			for j := i; j < n; j++ {
				s += u.Data[i*n+j] * y[j]
			}
			if math.Abs(s-c[i]) > 1e-13 {
				t.Errorf("%s: (U·y)[%d] = %v, want %v", be.Name(), i, s, c[i])
			}
		}
		blas.Use(prev)
	}
}

// SymEigVectorsWork with scratch of capacity EigenWorkLen(n) uses that
// scratch (no reallocation: the solvers lend a free matrix's storage and
// rely on it) and agrees with SymEigVectors, on every backend and on both
// sides of OpenBLAS's switch from MRRR to divide and conquer at n = 128:
// eigenvalues to 1e-12 relative to the largest, and Z·diag(w)·Zᵀ = A to
// 1e-11 (backward-stable eigensolvers: ~n·ε·‖A‖).
func TestSymEigVectorsWork(t *testing.T) {
	for _, be := range blas.Backends() {
		prev := blas.Current()
		blas.Use(be)
		for _, n := range []int{50, 200, 300} {
			a := blas.NewSquare(n)
			for i := 0; i < n; i++ {
				for j := i; j < n; j++ {
					v := math.Sin(float64(3*i+7*j)) / float64(1+i+j)
					a.Data[i*n+j], a.Data[j*n+i] = v, v
				}
			}
			orig := append([]float64(nil), a.Data...)
			z1, w1 := blas.NewSquare(n), make([]float64, n)
			ac := blas.NewSquare(n)
			copy(ac.Data, orig)
			if !blas.SymEigVectors(ac, z1, w1) {
				t.Fatalf("%s n=%d: SymEigVectors failed", be.Name(), n)
			}
			work := make([]float64, blas.EigenWorkLen(n))
			base := &work[0]
			z2, w2 := blas.NewSquare(n), make([]float64, n)
			copy(ac.Data, orig)
			if !blas.SymEigVectorsWork(ac, z2, w2, &work) {
				t.Fatalf("%s n=%d: SymEigVectorsWork failed", be.Name(), n)
			}
			if &work[0] != base {
				t.Errorf("%s n=%d: the scratch was reallocated", be.Name(), n)
			}
			scale := math.Max(math.Abs(w1[0]), math.Abs(w1[n-1]))
			for i := range w1 {
				if math.Abs(w1[i]-w2[i]) > 1e-12*scale {
					t.Errorf("%s n=%d: eigenvalue %d: %g vs %g", be.Name(), n, i, w1[i], w2[i])
				}
			}
			// Z·diag(w)·Zᵀ = A.
			for i := 0; i < n; i += 17 {
				for j := 0; j < n; j += 13 {
					s := 0.0
					for k := 0; k < n; k++ {
						s += z2.Data[i*n+k] * w2[k] * z2.Data[j*n+k]
					}
					if math.Abs(s-orig[i*n+j]) > 1e-11*scale {
						t.Errorf("%s n=%d: (ZΛZᵀ)[%d,%d] = %g, A = %g", be.Name(), n, i, j, s, orig[i*n+j])
					}
				}
			}
		}
		blas.Use(prev)
	}
}
