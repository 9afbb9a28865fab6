package blas_test

import (
	"math"
	"testing"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/blas"
)

// gonumAtInit is gonum's global BLAS right after package blas initialized
// (package variables of a test initialize after its imports, before any
// test can call Use).
var gonumAtInit = blas64.Implementation()

// Importing blas leaves gonum's global dispatch at gonum's own default.
func TestImportKeepsGonumSettings(t *testing.T) {
	if _, ok := gonumAtInit.(gonum.Implementation); !ok {
		t.Fatalf("importing blas switched gonum's blas64 to %T", gonumAtInit)
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
