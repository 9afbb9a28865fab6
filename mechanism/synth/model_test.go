package synth

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Model.Marginal on every set of attributes (inside one clique or spread
// over several) equals the sums of the joint p(x) ∝ exp Σ_C θ_C(x_C)
// enumerated cell by cell from random potentials, without belief
// propagation. Tolerance 1e-12: both are sums of at most 1,296 positive
// terms of order 1e-3 in double precision.
func TestMarginalMatchesEnumeration(t *testing.T) {
	sizes := []int{2, 3, 2, 3, 2}
	tree, err := BuildTree(sizes, [][]int{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {0, 4}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewModel(tree, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range m.theta {
		for j := range m.theta[i] {
			m.theta[i][j] = 2 * r.NormFloat64()
		}
	}
	m.calibrate()
	k := len(sizes)
	n := cells(sizes, []int{0, 1, 2, 3, 4})
	joint := make([]float64, n)
	x := make([]int, k)
	z := 0.0
	for c := 0; c < n; c++ {
		for a, rest := k-1, c; a >= 0; a-- {
			x[a] = rest % sizes[a]
			rest /= sizes[a]
		}
		s := 0.0
		for i, cl := range tree.Cliques {
			j := 0
			for _, a := range cl {
				j = j*sizes[a] + x[a]
			}
			s += m.theta[i][j]
		}
		joint[c] = math.Exp(s)
		z += joint[c]
	}
	for mask := 1; mask < 1<<k; mask++ {
		var attrs []int
		for a := 0; a < k; a++ {
			if mask&(1<<a) != 0 {
				attrs = append(attrs, a)
			}
		}
		want := make([]float64, cells(sizes, attrs))
		for c := 0; c < n; c++ {
			j := 0
			for _, a := range attrs {
				st := 1
				for b := a + 1; b < k; b++ {
					st *= sizes[b]
				}
				j = j*sizes[a] + (c/st)%sizes[a]
			}
			want[j] += joint[c] / z
		}
		got, err := m.Marginal(attrs, 1e6)
		if err != nil {
			t.Fatal(err)
		}
		for j := range want {
			if math.Abs(got[j]-want[j]) > 1e-12 {
				t.Fatalf("marginal on %v cell %d: %v, enumeration %v", attrs, j, got[j], want[j])
			}
		}
	}
	if len(tree.Cliques) < 3 {
		t.Fatalf("want a tree of several cliques to test elimination across them, got %v", tree.Cliques)
	}
}
