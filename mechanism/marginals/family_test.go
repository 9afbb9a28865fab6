package marginals

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/testkit/kronwork"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

// Dense re-scoring of family plans: the strategy matrix is formed from its
// definition (Helmert rows for residuals, Kronecker products of identities
// and ones for marginal tables), its sensitivity is its largest column norm,
// and its error tr(W (AᵀA)⁺ Wᵀ) comes from a dense pseudo-inverse (SVD), with
// W the workload's explicit matrix — no residual algebra of the package.

// familyCases are small workloads of every block kind.
func familyCases(t *testing.T) map[string]*domain.Kron {
	t.Helper()
	out := map[string]*domain.Kron{}
	add := func(name string, w *domain.Kron, err error) {
		if err != nil {
			t.Fatal(name, err)
		}
		out[name] = w
	}
	w, err := kronwork.Random([]int{3, 4, 2}, 6, 3, kronwork.Kinds, 1)
	add("random-all-kinds", w, err)
	w, err = kronwork.Random([]int{2, 3, 2, 3}, 9, 2, []string{"prefix", "identity", "total", "ranges"}, 7)
	add("random-prefix-ranges", w, err)
	w, err = kronwork.Product([]int{3, 3, 4}, []string{"identitytotal", "identitytotal", "identitytotal"}, 0)
	add("identitytotal-3", w, err)
	w, err = kronwork.Product([]int{4, 5}, []string{"prefix", "matrix"}, 3)
	add("prefix-matrix", w, err)
	w, err = kronwork.KWay([]int{2, 3, 4}, 2)
	add("2way", w, err)
	return out
}

// pinvDense returns X⁺ of X = AᵀA by a dense SVD of A (singular values
// below 1e-10·σ_max dropped).
func pinvDense(t *testing.T, a *mat.Dense) *mat.Dense {
	t.Helper()
	var svd mat.SVD
	if !svd.Factorize(a, mat.SVDThin) {
		t.Fatal("SVD failed")
	}
	s := svd.Values(nil)
	var v mat.Dense
	svd.VTo(&v)
	_, n := a.Dims()
	out := mat.NewDense(n, n, nil)
	for k, sv := range s {
		if sv <= 1e-10*s[0] {
			continue
		}
		col := mat.Col(nil, k, &v)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				out.Set(i, j, out.At(i, j)+col[i]*col[j]/(sv*sv))
			}
		}
	}
	return out
}

// denseError returns tr(W X⁺ Wᵀ) and whether range(Wᵀ) ⊆ range(Aᵀ).
func denseError(t *testing.T, w, a *mat.Dense) float64 {
	t.Helper()
	xp := pinvDense(t, a)
	var wx mat.Dense
	wx.Mul(w, xp)
	r, c := w.Dims()
	e := 0.0
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			e += wx.At(i, j) * w.At(i, j)
		}
	}
	// Range check: W X⁺ X = W when every query is answerable.
	var x, wxx mat.Dense
	x.Mul(a.T(), a)
	wxx.Mul(&wx, &x)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			if math.Abs(wxx.At(i, j)-w.At(i, j)) > 1e-8*(1+math.Abs(w.At(i, j))) {
				t.Fatalf("query %d is not answerable by the strategy", i)
			}
		}
	}
	return e
}

// familyStrategyDense forms the plan's strategy matrix.
func familyStrategyDense(fp *FamilyPlan) *mat.Dense {
	n := 1
	for _, d := range fp.Sizes {
		n *= d
	}
	var rows [][]float64
	addBlock := func(q *mat.Dense) {
		r, _ := q.Dims()
		for i := 0; i < r; i++ {
			rows = append(rows, mat.Row(nil, i, q))
		}
	}
	if fp.Pure {
		for _, tb := range fp.Tables {
			q := marginalDense(fp.Sizes, tb.Attrs)
			q.Scale(tb.Weight, q)
			addBlock(q)
		}
	} else {
		for _, r := range fp.Residuals {
			fs := make([]*mat.Dense, len(fp.Sizes))
			for a, d := range fp.Sizes {
				fs[a] = ones(d)
			}
			for _, a := range r.Attrs {
				fs[a] = helmertDense(fp.Sizes[a])
			}
			q := kronDense(fs...)
			q.Scale(1/math.Sqrt(r.Variance), q)
			addBlock(q)
		}
	}
	a := mat.NewDense(len(rows), n, nil)
	for i, row := range rows {
		a.SetRow(i, row)
	}
	return a
}

// maxColumnNorm returns the largest column norm (L1 or L2) of a.
func maxColumnNorm(a *mat.Dense, l1 bool) float64 {
	r, c := a.Dims()
	mx := 0.0
	for j := 0; j < c; j++ {
		s := 0.0
		for i := 0; i < r; i++ {
			if l1 {
				s += math.Abs(a.At(i, j))
			} else {
				s += a.At(i, j) * a.At(i, j)
			}
		}
		if !l1 {
			s = math.Sqrt(s)
		}
		mx = math.Max(mx, s)
	}
	return mx
}

// Every family plan, Gaussian and pure, re-scored densely: sensitivity 1 to
// 1e-12 (sums of a few hundred terms), error equal to the plan's to 1e-8
// (the dense pseudo-inverse of a strategy with condition number up to
// ~10⁴ loses about that much), term errors summing to the total, and the
// pure plan never worse than Identity (tr WᵀW) nor than the largest table,
// nor below its own family bound.
func TestFamilyPlanDense(t *testing.T) {
	for name, w := range familyCases(t) {
		wd, err := w.DenseMatrix(4096)
		if err != nil {
			t.Fatal(err)
		}
		var v mat.Dense
		v.Mul(wd.T(), wd)
		identity := mat.Trace(&v)
		for _, pure := range []bool{false, true} {
			noise := calibrate.Gaussian
			if pure {
				noise = calibrate.Laplace
			}
			fp, err := NewFamilyPlan(w, noise)
			if err != nil {
				t.Fatal(name, err)
			}
			a := familyStrategyDense(fp)
			if s := maxColumnNorm(a, pure); math.Abs(s-1) > 1e-12 {
				t.Errorf("%s pure=%v: sensitivity %.15g", name, pure, s)
			}
			e := denseError(t, wd, a)
			if d := relDiff(e, fp.TotalSquaredError); d > 1e-8 {
				t.Errorf("%s pure=%v: plan error %.12g, dense %.12g", name, pure, fp.TotalSquaredError, e)
			}
			sum := 0.0
			for _, te := range fp.TermErrors {
				sum += te
			}
			if relDiff(sum, fp.TotalSquaredError) > 1e-12 {
				t.Errorf("%s pure=%v: term errors sum to %.15g, total %.15g", name, pure, sum, fp.TotalSquaredError)
			}
			if fp.TotalSquaredError > identity*(1+1e-12) || fp.TotalSquaredError > fp.LargestTable*(1+1e-12) {
				t.Errorf("%s pure=%v: error %.12g above Identity %.12g or the largest table %.12g", name, pure, fp.TotalSquaredError, identity, fp.LargestTable)
			}
			if fp.FamilyBound > fp.TotalSquaredError*(1+1e-12) || !(fp.FamilyBound > 0) {
				t.Errorf("%s pure=%v: family bound %.12g, error %.12g", name, pure, fp.FamilyBound, fp.TotalSquaredError)
			}
			t.Logf("%s pure=%v: error %.8g (identity %.8g), family bound %.8g, %d tables / %d residuals, start %s, %d steps",
				name, pure, fp.TotalSquaredError, identity, fp.FamilyBound, len(fp.Tables), len(fp.Residuals), fp.Start, fp.Iterations)
		}
	}
}

// The pure descent against a seeded random search (test-only randomness)
// over the full simplex of table weights of small domains (2–3 resolved
// attributes: 4–8 tables): no random point is lower than the descent's
// result (beyond 1e-9 relative), and no random point is below the family
// bound — which would prove the bound wrong.
func TestPureFamilyRandomSearch(t *testing.T) {
	r := rand.New(rand.NewPCG(42, 1))
	for name, w := range familyCases(t) {
		f, err := newFamily(w)
		if err != nil {
			t.Fatal(err)
		}
		if f.n > 8 {
			continue
		}
		fp, err := NewFamilyPlan(w, calibrate.Laplace)
		if err != nil {
			t.Fatal(err)
		}
		o := newMM(f, 2)
		theta := make([]float64, f.n)
		best := math.Inf(1)
		for trial := 0; trial < 20000; trial++ {
			s := 0.0
			for m := range theta {
				theta[m] = -math.Log(r.Float64()) // Dirichlet(1)
				if trial%3 == 0 && r.Float64() < 0.5 {
					theta[m] = 0 // faces of the simplex too
				}
				s += theta[m]
			}
			if s == 0 {
				continue
			}
			for m := range theta {
				theta[m] /= s
			}
			v := o.eval(theta, o.gx)
			best = math.Min(best, v)
			if v < fp.FamilyBound {
				t.Fatalf("%s: random weights %v reach %.12g below the family bound %.12g", name, theta, v, fp.FamilyBound)
			}
		}
		if fp.TotalSquaredError > best*(1+1e-9) {
			t.Errorf("%s: descent %.12g, random search %.12g", name, fp.TotalSquaredError, best)
		}
		t.Logf("%s: %d tables, descent %.10g, random search best %.10g, family bound %.10g", name, f.n, fp.TotalSquaredError, best, fp.FamilyBound)
	}
}

// On a workload of marginals the Gaussian family plan is the residual plan
// of NewPlan (one closed form reached from the blocks' traces rather than
// from the sets).
func TestFamilyMatchesResidualPlan(t *testing.T) {
	sizes := []int{2, 3, 4, 3}
	w, err := kronwork.KWay(sizes, 2)
	if err != nil {
		t.Fatal(err)
	}
	fp, err := NewFamilyPlan(w, calibrate.Gaussian)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlan(sizes, mustKWay(t, 4, 2), Sum, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := relDiff(fp.TotalSquaredError, p.TotalSquaredError); d > 1e-12 {
		t.Errorf("family %.15g, residual plan %.15g", fp.TotalSquaredError, p.TotalSquaredError)
	}
	if len(fp.Residuals) != len(p.Residuals) {
		t.Fatalf("%d residuals, plan has %d", len(fp.Residuals), len(p.Residuals))
	}
	for i, r := range fp.Residuals {
		if !equalInts(r.Attrs, p.Residuals[i].Attrs) || relDiff(r.Variance, p.Residuals[i].Variance) > 1e-12 {
			t.Errorf("residual %d: %+v, plan %+v", i, r, p.Residuals[i])
		}
	}
}

func mustKWay(t *testing.T, k, j int) []Set {
	t.Helper()
	ss, err := KWay(k, j)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]Set, len(ss))
	for i, s := range ss {
		out[i] = Set{Attrs: s, Weight: 1}
	}
	return out
}

// NewFamilyPlan takes the one noise model: the two kinds select the pure
// and the Gaussian plan, and anything else (the old "pure" spelling, the
// zero value) is bad input, not a silent Gaussian plan.
func TestFamilyPlanNoiseKind(t *testing.T) {
	w, err := kronwork.KWay([]int{2, 3}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for noise, pure := range map[calibrate.NoiseKind]bool{calibrate.Laplace: true, calibrate.Gaussian: false} {
		fp, err := NewFamilyPlan(w, noise)
		if err != nil || fp.Pure != pure {
			t.Errorf("NewFamilyPlan(%s): plan %v, err %v; want Pure = %v", noise, fp, err, pure)
		}
	}
	for _, noise := range []calibrate.NoiseKind{"pure", ""} {
		if _, err := NewFamilyPlan(w, noise); !errors.Is(err, ErrInput) {
			t.Errorf("NewFamilyPlan(%q): err %v, want bad input", noise, err)
		}
	}
}
