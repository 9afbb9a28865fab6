package tables

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/kron"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

// TestSpectralNormSqVectorFactors: a Kronecker product with one-row and
// one-column factors (the "total" blocks of a union's parts) on the
// backend the command uses (blas.UseForGonum: LAPACK through cgo in the
// default build). mat.SVD with SVDNone panicked there on a 1×n factor
// ("insufficient declared workspace length"). The reference is the
// closed form: ‖⊗Fᵢ‖₂² = Πᵢ σ_max(Fᵢ)², and a vector's one singular value
// is its Euclidean norm; the 2×2 factor's largest singular value of
// [[3,0],[4,5]] is √45 (its Gram [[25,20],[20,25]] has eigenvalues 45, 5).
func TestSpectralNormSqVectorFactors(t *testing.T) {
	blas.UseForGonum()
	row := make([]float64, 85)
	var want float64 = 1
	var rs float64
	for i := range row {
		row[i] = float64(i%7) - 2.5
		rs += row[i] * row[i]
	}
	want *= rs
	col := []float64{1, 2, 2} // norm² 9
	want *= 9
	want *= 45
	p, err := kron.New(mat.NewDense(1, 85, row), mat.NewDense(3, 1, col), mat.NewDense(2, 2, []float64{3, 0, 4, 5}))
	if err != nil {
		t.Fatal(err)
	}
	got, err := spectralNormSq(p)
	if err != nil {
		t.Fatal(err)
	}
	// Sums of at most 85 products of small integers and halves: exact up
	// to a few ulps; the SVD of the 2×2 factor to ~1e-15 relative.
	if math.Abs(got-want) > 1e-12*want {
		t.Fatalf("‖A‖₂² = %.17g, want %.17g", got, want)
	}
}

// TestSplitTermsHugeShares: --split terms:1e308,1e308,1 summed the shares
// to +Inf and reported "share … got 0". The shares are now scaled by the
// largest: 1e308 and 1e308 get half the budget each (exactly, within one
// rounding), and the third term's 5e-309 is refused naming the term.
func TestSplitTermsHugeShares(t *testing.T) {
	rho, _ := calibrate.ZCDP(1)
	out, err := SplitTerms(rho, []float64{1e308, 1e308}, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range out {
		if math.Abs(b.Rho()-0.5) > 1e-15 {
			t.Fatalf("rho %v, want 0.5", b.Rho())
		}
	}
	_, err = SplitTerms(rho, []float64{1e308, 1e308, 1}, 3)
	if err == nil || !strings.Contains(err.Error(), "term 3's share 1") || strings.Contains(err.Error(), "got 0") {
		t.Fatalf("got %v", err)
	}
}
