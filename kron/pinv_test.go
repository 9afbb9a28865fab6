package kron

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/pinv"
	"github.com/dpsolve/dpsolve/internal/rank"
)

// oldPinv is kron's pseudo-inverse before it moved to internal/pinv: the
// same SVD and cut-off, but V Σ⁺ Uᵀ multiplied over all min(m,n) columns
// with the dropped ones zero, where pinv.Dense multiplies over the r kept
// ones only.
func oldPinv(a *mat.Dense) *mat.Dense {
	m, n := a.Dims()
	var svd mat.SVD
	if !svd.Factorize(a, mat.SVDThin) {
		panic("SVD did not converge")
	}
	s := svd.Values(nil)
	var u, v mat.Dense
	svd.UTo(&u)
	svd.VTo(&v)
	tol := rank.Cutoff(max(m, n), s[0])
	vs := mat.NewDense(n, len(s), nil)
	for j := range s {
		if s[j] <= tol {
			continue
		}
		for i := 0; i < n; i++ {
			vs.Set(i, j, v.At(i, j)/s[j])
		}
	}
	out := mat.NewDense(n, m, nil)
	out.Mul(vs, u.T())
	return out
}

// The factors release and tables invert (identity, totals, prefix sums,
// identity stacked on totals, and rank-deficient stacks of totals and of
// repeated prefix rows, where the two forms differ in the columns
// multiplied) get the same pseudo-inverse from pinv.Dense as from the old
// form: equal up to 4 ulps of the largest entry (the only difference is
// the exact zeros the old form added).
func TestPinvMatchesOldForm(t *testing.T) {
	ident := func(d int) *mat.Dense {
		a := mat.NewDense(d, d, nil)
		for i := 0; i < d; i++ {
			a.Set(i, i, 1)
		}
		return a
	}
	total := func(rows, d int) *mat.Dense {
		a := mat.NewDense(rows, d, nil)
		for i := 0; i < rows; i++ {
			for j := 0; j < d; j++ {
				a.Set(i, j, 1)
			}
		}
		return a
	}
	prefix := func(d int) *mat.Dense {
		a := mat.NewDense(d, d, nil)
		for i := 0; i < d; i++ {
			for j := 0; j <= i; j++ {
				a.Set(i, j, 1)
			}
		}
		return a
	}
	stack := func(a, b *mat.Dense) *mat.Dense {
		var s mat.Dense
		s.Stack(a, b)
		return &s
	}
	cases := map[string]*mat.Dense{
		"identity 5": ident(5), "total 1×7": total(1, 7), "prefix 9": prefix(9),
		"identity on total 6": stack(ident(6), total(1, 6)), "three totals 3×4": total(3, 4),
		"prefix twice 5": stack(prefix(5), prefix(5)), "totals 8×3": total(8, 3),
	}
	identical := 0
	for name, a := range cases {
		old := oldPinv(a)
		got, _, err := pinv.Dense(a)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		scale := mat.Norm(old, math.Inf(1))
		m, n := old.Dims()
		same := true
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				if d := math.Abs(got.At(i, j) - old.At(i, j)); d > 4*0x1p-52*scale {
					t.Errorf("%s: entry (%d,%d) %g, old %g", name, i, j, got.At(i, j), old.At(i, j))
				} else if d != 0 {
					same = false
				}
			}
		}
		if same {
			identical++
		}
	}
	t.Logf("%d of %d factors bit-identical", identical, len(cases))
}
