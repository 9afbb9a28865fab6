package symdense

import (
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/blas"
)

// TestRoundTrip checks both triangles against the SymDense entries and that
// ToSym reads only the upper triangle of a strided General.
func TestRoundTrip(t *testing.T) {
	v := mat.NewSymDense(3, []float64{1, 2, 3, 2, 5, 6, 3, 6, 9})
	g := ToGeneral(v)
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			if got := g.Data[i*g.Stride+j]; got != v.At(i, j) {
				t.Fatalf("ToGeneral(%d,%d) = %v, want %v", i, j, got, v.At(i, j))
			}
		}
	}
	// A 2×2 view with stride 3 and junk below the diagonal.
	w := blas.General{Rows: 2, Cols: 2, Stride: 3, Data: []float64{4, 7, -1, 99, 8, -1}}
	s := ToSym(w)
	if s.At(0, 0) != 4 || s.At(0, 1) != 7 || s.At(1, 0) != 7 || s.At(1, 1) != 8 {
		t.Fatalf("ToSym = %v", mat.Formatted(s))
	}
}
