package marginals

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// Dense references for small domains, built from the definitions without the
// package's fast transforms: the Helmert matrix entry by entry, Kronecker
// products of explicit factors, and pseudo-inverses by dense factorizations.

// helmertDense returns U_dᵀ ((d−1)×d), row j−1 = (1,…,1,−j,0,…)/√(j(j+1)).
func helmertDense(d int) *mat.Dense {
	u := mat.NewDense(d-1, d, nil)
	for j := 1; j < d; j++ {
		c := 1 / math.Sqrt(float64(j*(j+1)))
		for i := 0; i < j; i++ {
			u.Set(j-1, i, c)
		}
		u.Set(j-1, j, -float64(j)*c)
	}
	return u
}

func kronDense(fs ...*mat.Dense) *mat.Dense {
	cur := mat.NewDense(1, 1, []float64{1})
	for _, f := range fs {
		r1, c1 := cur.Dims()
		r2, c2 := f.Dims()
		next := mat.NewDense(r1*r2, c1*c2, nil)
		for a := 0; a < r1; a++ {
			for b := 0; b < c1; b++ {
				x := cur.At(a, b)
				for c := 0; c < r2; c++ {
					for e := 0; e < c2; e++ {
						next.Set(a*r2+c, b*c2+e, x*f.At(c, e))
					}
				}
			}
		}
		cur = next
	}
	return cur
}

func ones(d int) *mat.Dense {
	o := mat.NewDense(1, d, nil)
	for i := 0; i < d; i++ {
		o.Set(0, i, 1)
	}
	return o
}

func eye(d int) *mat.Dense {
	e := mat.NewDense(d, d, nil)
	for i := 0; i < d; i++ {
		e.Set(i, i, 1)
	}
	return e
}

// marginalDense returns W_S = ⊗_a (I if a ∈ S else 1ᵀ).
func marginalDense(sizes, s []int) *mat.Dense {
	fs := make([]*mat.Dense, len(sizes))
	for a, d := range sizes {
		fs[a] = ones(d)
	}
	for _, a := range s {
		fs[a] = eye(sizes[a])
	}
	return kronDense(fs...)
}

// strategyDense returns the stacked strategy A = [Q_T/σ_T]_T of a plan,
// Q_T = ⊗_a (U_dᵀ if a ∈ T else 1ᵀ), one block per residual in plan order.
func strategyDense(p *Plan) *mat.Dense {
	n := 1
	for _, d := range p.Sizes {
		n *= d
	}
	var blocks []*mat.Dense
	rows := 0
	for _, r := range p.Residuals {
		fs := make([]*mat.Dense, len(p.Sizes))
		for a, d := range p.Sizes {
			fs[a] = ones(d)
		}
		for _, a := range r.Attrs {
			fs[a] = helmertDense(p.Sizes[a])
		}
		q := kronDense(fs...)
		q.Scale(1/math.Sqrt(r.Variance), q)
		blocks = append(blocks, q)
		rows += q.RawMatrix().Rows
	}
	a := mat.NewDense(rows, n, nil)
	r0 := 0
	for _, b := range blocks {
		br, _ := b.Dims()
		a.Slice(r0, r0+br, 0, n).(*mat.Dense).Copy(b)
		r0 += br
	}
	return a
}

// pinvGram returns X⁺ = (AᵀA)⁺ = Aᵀ(AAᵀ)⁻²A for A of full row rank (which the
// residual strategies have: their row blocks are orthogonal and each has
// orthogonal rows); it fails the test otherwise.
func pinvGram(t *testing.T, a *mat.Dense) *mat.Dense {
	t.Helper()
	r, _ := a.Dims()
	var g mat.SymDense
	g.SymOuterK(1, a) // A Aᵀ
	var ch mat.Cholesky
	if !ch.Factorize(&g) {
		t.Fatalf("A Aᵀ (%d×%d) is not positive definite", r, r)
	}
	var gi mat.SymDense
	if err := ch.InverseTo(&gi); err != nil {
		t.Fatal(err)
	}
	var gi2, tmp, out mat.Dense
	gi2.Mul(&gi, &gi)
	tmp.Mul(a.T(), &gi2)
	out.Mul(&tmp, a)
	return &out
}

// denseCellVariances returns diag(W_S X⁺ W_Sᵀ) of every set.
func denseCellVariances(p *Plan, xp *mat.Dense) [][]float64 {
	out := make([][]float64, len(p.Sets))
	for i, s := range p.Sets {
		w := marginalDense(p.Sizes, s.Attrs)
		var wx mat.Dense
		wx.Mul(w, xp)
		r, c := w.Dims()
		d := make([]float64, r)
		for q := 0; q < r; q++ {
			for j := 0; j < c; j++ {
				d[q] += wx.At(q, j) * w.At(q, j)
			}
		}
		out[i] = d
	}
	return out
}

// denseGram returns V = Σ_S w_S² W_SᵀW_S.
func denseGram(sizes []int, sets []Set) *mat.SymDense {
	n := 1
	for _, d := range sizes {
		n *= d
	}
	v := mat.NewSymDense(n, nil)
	for _, s := range sets {
		w := marginalDense(sizes, s.Attrs)
		v.SymRankK(v, s.Weight*s.Weight, w.T())
	}
	return v
}

func relDiff(a, b float64) float64 { return math.Abs(a-b) / math.Max(math.Abs(a), math.Abs(b)) }
