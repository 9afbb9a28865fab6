package tables

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/kron"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/privacy/noise"
	"github.com/dpsolve/dpsolve/status"
)

// simplexByBisection is an independent reference for projectSimplex: τ
// by bisection on the monotone Σ max(v − τ, 0) = total.
func simplexByBisection(v []float64, total float64) []float64 {
	mn, mx := math.Inf(1), math.Inf(-1)
	for _, x := range v {
		mn, mx = math.Min(mn, x), math.Max(mx, x)
	}
	lo, hi := mn-total-1, mx
	for i := 0; i < 200; i++ {
		mid := (lo + hi) / 2
		s := 0.0
		for _, x := range v {
			s += math.Max(x-mid, 0)
		}
		if s > total {
			lo = mid
		} else {
			hi = mid
		}
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.Max(x-(lo+hi)/2, 0)
	}
	return out
}

func TestProjectSimplexAgainstBisection(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		n := 1 + rng.IntN(300)
		v := make([]float64, n)
		for i := range v {
			v[i] = rng.NormFloat64() * 10
			if trial%3 == 0 {
				v[i] = math.Exp(rng.NormFloat64() * 8) // spread over many scales: many Michelot passes
			}
		}
		total := rng.Float64() * 100
		got := make([]float64, n)
		projectSimplex(got, v, total, make([]float64, n))
		want := simplexByBisection(v, total)
		scale := total
		for _, x := range v {
			scale = math.Max(scale, math.Abs(x))
		}
		s := 0.0
		for i := range got {
			require.GreaterOrEqual(t, got[i], 0.0)
			s += got[i]
			// Bisection runs to the last bit of τ, whose size is up to the
			// largest |v|: a few ulps of that scale (1e-13 relative).
			require.InDelta(t, want[i], got[i], 1e-13*(1+scale), "trial %d cell %d", trial, i)
		}
		// Each positive cell is vᵢ − τ, exact to an ulp of the largest |v|
		// (2.2e-16 relative): at most 300 of them.
		require.InDelta(t, total, s, 300*2.3e-16*(1+scale))
	}
	// The sort rule alone (Michelot's fallback) agrees too:
	// v = 5,4,3,2,1,½ and total 4 keep {5,4,3}, τ = (12 − 4)/3.
	v := []float64{2, 5, 0.5, 4, 1, 3}
	assert.InDelta(t, 8.0/3, sortThreshold(v, 4, make([]float64, 6)), 1e-15)
	assert.InDelta(t, 8.0/3, simplexThreshold(v, 4, make([]float64, 6)), 1e-15)
	for trial := 0; trial < 50; trial++ {
		v := make([]float64, 1+rng.IntN(100))
		for i := range v {
			v[i] = rng.NormFloat64() * 5
		}
		w := make([]float64, len(v))
		assert.InDelta(t, simplexThreshold(v, 3, w), sortThreshold(v, 3, w), 1e-12)
	}
}

func TestCumulativeRound(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 100; trial++ {
		x := make([]float64, 1+rng.IntN(60))
		for i := range x {
			x[i] = rng.ExpFloat64() * 2
			if rng.IntN(3) == 0 {
				x[i] = 0
			}
		}
		r := append([]float64(nil), x...)
		cumulativeRound(r)
		sx, sr := 0.0, 0.0
		for i := range r {
			require.Equal(t, math.Round(r[i]), r[i])
			require.GreaterOrEqual(t, r[i], 0.0)
			sx += x[i]
			sr += r[i]
		}
		require.Equal(t, math.Round(sx), sr)
		// Every run of consecutive cells moves by less than 1 (½ + ½ of
		// two running sums' rounding, plus floating-point rounding).
		for a := range x {
			d := 0.0
			for b := a; b < len(x); b++ {
				d += r[b] - x[b]
				require.Less(t, math.Abs(d), 1+1e-9, "run %d..%d", a, b)
			}
		}
	}
}

// nnlsInstance is a small union measurement of a sparse histogram (most
// cells 0, so the least-squares histogram has many negative cells): two
// weighted parts, with seeded Gaussian noise (simulation only).
func nnlsInstance(t *testing.T, seed uint64) (*histogramLS, []*mat.Dense) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	fs1 := []*mat.Dense{identityTotal(3), identityTotal(4), identityTotal(2)}
	fs2 := []*mat.Dense{prefix(3), identityTotal(4), identityTotal(2)}
	x := make([]float64, 24)
	for i := range x {
		if rng.IntN(4) == 0 {
			x[i] = float64(rng.IntN(6))
		}
	}
	h := &histogramLS{w: []float64{0.8, 0.6}}
	var dense []*mat.Dense
	var pinvs []*kron.Product
	for k, fs := range [][]*mat.Dense{fs1, fs2} {
		a, err := kron.New(fs[0], fs[1], fs[2])
		require.NoError(t, err)
		y, err := a.MulVec(x)
		require.NoError(t, err)
		for i := range y {
			y[i] = h.w[k]*y[i] + 2*rng.NormFloat64()
		}
		p, err := a.PseudoInverse()
		require.NoError(t, err)
		xh, err := p.MulVec(y)
		require.NoError(t, err)
		for i := range xh {
			xh[i] /= h.w[k]
		}
		h.a, h.y, h.xhat = append(h.a, a), append(h.y, y), append(h.xhat, xh)
		pinvs = append(pinvs, p)
		dense = append(dense, denseOf(fs...))
	}
	h.lsTotal(pinvs, 4)
	return h, dense
}

// nnlsObjective is ½Σ_k‖w_k A_k x − y_k‖² and its gradient, densely.
func nnlsObjective(h *histogramLS, dense []*mat.Dense, x []float64) (float64, []float64) {
	f := 0.0
	g := mat.NewVecDense(len(x), nil)
	for k, a := range dense {
		var r mat.VecDense
		r.MulVec(a, mat.NewVecDense(len(x), x))
		r.ScaleVec(h.w[k], &r)
		r.SubVec(&r, mat.NewVecDense(len(h.y[k]), h.y[k]))
		f += mat.Dot(&r, &r) / 2
		var gk mat.VecDense
		gk.MulVec(a.T(), &r)
		g.AddScaledVec(g, h.w[k], &gk)
	}
	return f, g.RawVector().Data
}

// nnlsReferencePy solves the same problem with scipy's SLSQP (a different
// algorithm on the dense matrices) and prints its objective.
const nnlsReferencePy = `import json, sys
import numpy as np
from scipy.optimize import minimize
inp = json.load(sys.stdin)
A = [np.array(a) for a in inp["a"]]; Y = [np.array(y) for y in inp["y"]]; W = inp["w"]; n = inp["n"]
def f(x): return sum(0.5 * np.sum((w * a @ x - y) ** 2) for a, y, w in zip(A, Y, W))
def g(x): return sum(w * a.T @ (w * a @ x - y) for a, y, w in zip(A, Y, W))
d = A[0].shape[1]
r = minimize(f, np.full(d, n / d), jac=g, bounds=[(0, None)] * d, method="SLSQP",
             constraints=[{"type": "eq", "fun": lambda x: np.array([x.sum() - n]), "jac": lambda x: np.ones((1, d))}],
             options={"ftol": 1e-15, "maxiter": 10000})
print(json.dumps({"value": f(r.x), "sum": float(r.x.sum()), "min": float(r.x.min())}))
`

// The non-negative estimator is the constrained least-squares optimum: the
// KKT conditions hold on the dense problem (a gradient constant, μ, on the
// positive cells and ≥ μ on the zero ones, to 1e-6 of the gradient's
// scale; FISTA is run to a 1e-11 count tolerance), and scipy's SLSQP finds
// no feasible point with a smaller objective (1e-9 relative). Skipped
// without /usr/bin/python3 with scipy for the scipy half.
func TestNNLSIsTheConstrainedOptimum(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		h, dense := nnlsInstance(t, seed)
		neg := 0
		for _, v := range h.xhat[0] {
			if v < 0 {
				neg++
			}
		}
		require.Greater(t, neg, 3, "the instance must make the least-squares histogram negative")
		nr, err := h.nnls(context.Background(), h.xhat[h.best], NNLSOptions{Tol: 1e-11, MaxIter: 1000000})
		require.NoError(t, err)
		require.True(t, nr.converged, "%d iterations, step %g", nr.iterations, nr.step)
		f, g := nnlsObjective(h, dense, nr.x)
		s, mu, np, scale := 0.0, 0.0, 0, 0.0
		for i, v := range nr.x {
			require.GreaterOrEqual(t, v, 0.0)
			s += v
			scale = math.Max(scale, math.Abs(g[i]))
			if v > 1e-7 {
				mu += g[i]
				np++
			}
		}
		require.InDelta(t, h.total, s, 1e-9*h.total, "the total is kept")
		mu /= float64(np)
		for i, v := range nr.x {
			if v > 1e-7 {
				assert.InDelta(t, mu, g[i], 1e-6*scale, "seed %d: positive cell %d", seed, i)
			} else {
				assert.GreaterOrEqual(t, g[i], mu-1e-6*scale, "seed %d: zero cell %d", seed, i)
			}
		}
		t.Logf("seed %d: %d iterations, objective %.12g, total %.6g ± %.3g", seed, nr.iterations, f, h.total, h.totalStd)
		scipyCompare(t, h, dense, f)
	}
}

func scipyCompare(t *testing.T, h *histogramLS, dense []*mat.Dense, ours float64) {
	py := "/usr/bin/python3"
	if exec.Command(py, "-c", "import scipy").Run() != nil {
		t.Log("no /usr/bin/python3 with scipy: the scipy comparison is skipped")
		return
	}
	in := map[string]any{"w": h.w, "y": h.y, "n": h.total}
	var as [][][]float64
	for _, a := range dense {
		r, c := a.Dims()
		rows := make([][]float64, r)
		for i := range rows {
			rows[i] = make([]float64, c)
			mat.Row(rows[i], i, a)
		}
		as = append(as, rows)
	}
	in["a"] = as
	script := filepath.Join(t.TempDir(), "nnls.py")
	require.NoError(t, os.WriteFile(script, []byte(nnlsReferencePy), 0o644))
	input, _ := json.Marshal(in)
	cmd := exec.Command(py, script)
	cmd.Stdin = bytes.NewReader(input)
	out, err := cmd.Output()
	require.NoError(t, err)
	var ref struct{ Value, Sum, Min float64 }
	require.NoError(t, json.Unmarshal(out, &ref))
	t.Logf("ours %.12g, scipy %.12g (scipy's sum %.9g, min %.3g)", ours, ref.Value, ref.Sum, ref.Min)
	assert.LessOrEqual(t, ours, ref.Value*(1+1e-9)+1e-12, "scipy found a better feasible point")
}

// Seeded simulation on a small domain: every released table is
// non-negative, sums to the released total (the least-squares total, kept
// exactly), the tables agree on every shared sub-marginal, and the
// estimator's bias is measured against the (unbiased) least-squares
// answers over many releases: the total is unbiased (99% interval), the
// cells are not (the truth has zeros, which the constraint biases upward).
func TestNonNegativeReleaseTotalsConsistencyBias(t *testing.T) {
	w := smallWorkload()
	r, err := prepare(w, kronStrategy(t, identityTotal(3), identityTotal(4), identityTotal(2)), zcdp(0.05))
	require.NoError(t, err)
	x := make([]float64, 24)
	for i := range x {
		x[i] = float64((i * 7) % 5 * (i % 2)) // half the cells 0
	}
	trueAC := trueMarginal(x, 3, 4, 2, []bool{true, false, true})
	const releases = 300
	var biasLS, biasNN, totals, lsTotals []float64
	var lsStd float64
	biasLS, biasNN = make([]float64, 6), make([]float64, 6)
	for rel := 0; rel < releases; rel++ {
		src := uint64(100 + rel)
		ls, err := r.Run(context.Background(), Data{Histogram: x}, noise.NewSeededInsecure(src), nil, Publishable{})
		require.NoError(t, err)
		for _, pp := range []Publishable{{NonNegative: true}, {NonNegative: true, Integer: true}} {
			res, err := r.Run(context.Background(), Data{Histogram: x}, noise.NewSeededInsecure(src), nil, pp)
			require.NoError(t, err)
			e := res.Estimator
			require.NotNil(t, e)
			require.Equal(t, status.Converged, e.Status)
			ac, b := res.Answers[0][:6], res.Answers[0][6:10]
			for _, v := range res.Answers[0] {
				require.GreaterOrEqual(t, v, 0.0)
				if pp.Integer {
					require.Equal(t, math.Round(v), v)
				}
			}
			tol := 1e-9 * math.Max(1, e.ReleasedTotal)
			require.InDelta(t, e.ReleasedTotal, sum(ac), tol)
			require.InDelta(t, e.ReleasedTotal, sum(b), tol)
			// The prefix term's last row on each c is that c's one-way count;
			// {a,c} summed over a gives the same.
			p := res.Answers[1]
			for c := 0; c < 2; c++ {
				require.InDelta(t, ac[c]+ac[2+c]+ac[4+c], p[3*2+c], tol)
			}
			require.Len(t, e.Tables, 3)
			assert.InDelta(t, e.ReleasedTotal, *e.Tables[0].GrandTotal, tol)
			assert.Nil(t, e.Tables[2].GrandTotal, "a prefix product has no grand total")
			maxChange := 0.0
			for i := range ac {
				maxChange = math.Max(maxChange, math.Abs(ac[i]-ls.Answers[0][i]))
			}
			assert.InDelta(t, maxChange, e.Tables[0].MaxChange, 1e-9)
			if !pp.Integer {
				assert.InDelta(t, e.LeastSquaresTotal, sum(ls.Answers[0][6:10]), 1e-9*math.Max(1, e.LeastSquaresTotal), "the least-squares total is the {b} table's")
				totals = append(totals, e.ReleasedTotal)
				lsTotals = append(lsTotals, e.LeastSquaresTotal)
				lsStd = e.LeastSquaresTotalStd
				for i := range ac {
					biasNN[i] += (ac[i] - trueAC[i]) / releases
					biasLS[i] += (ls.Answers[0][i] - trueAC[i]) / releases
				}
			}
		}
	}
	m, sd := meanStd(totals)
	t.Logf("released total %.4g ± %.3g (se %.3g); true %v", m, sd, sd/math.Sqrt(releases), sum(x))
	assert.InDelta(t, sum(x), m, 2.576*sd/math.Sqrt(releases), "the released total is unbiased")
	// The reported stddev of the least-squares total is the empirical one
	// (99% interval of a sample variance, ±2.576·√(2/(R−1)) relative).
	_, lsd := meanStd(lsTotals)
	t.Logf("least-squares total: sample stddev %.4g, reported %.4g", lsd, lsStd)
	assert.InDelta(t, 1, lsd*lsd/(lsStd*lsStd), 2.576*math.Sqrt(2.0/(releases-1)))
	t.Logf("bias of the {a,c} cells (truth %v): least squares %.3f, non-negative %.3f", trueAC, biasLS, biasNN)
	zeroBias := 0.0
	for i, v := range trueAC {
		if v == 0 {
			zeroBias = math.Max(zeroBias, biasNN[i])
		}
	}
	assert.Greater(t, zeroBias, 0.0, "a true zero cannot be estimated without upward bias by a non-negative estimator")
}

func sum(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}

func meanStd(v []float64) (float64, float64) {
	m := sum(v) / float64(len(v))
	s := 0.0
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	return m, math.Sqrt(s / float64(len(v)-1))
}

// trueMarginal sums the row-major da×db×dc histogram x over the attributes
// not kept.
func trueMarginal(x []float64, da, db, dc int, keep []bool) []float64 {
	dims := []int{da, db, dc}
	size := 1
	for i, d := range dims {
		if keep[i] {
			size *= d
		}
	}
	out := make([]float64, size)
	for a := 0; a < da; a++ {
		for b := 0; b < db; b++ {
			for c := 0; c < dc; c++ {
				idx, co := 0, []int{a, b, c}
				for i, d := range dims {
					if keep[i] {
						idx = idx*d + co[i]
					}
				}
				out[idx] += x[(a*db+b)*dc+c]
			}
		}
	}
	return out
}

// A union strategy's parts answer their own terms by their own least
// squares; the non-negative estimator fits one histogram to all of them,
// so tables answered by different parts agree: term m's {b} marginal (part
// 1) and term p's last prefix rows (part 2) have the same total, the
// released one.
func TestNonNegativeUnionIsOneHistogram(t *testing.T) {
	w := smallWorkload()
	a1, err := kron.New(identityTotal(3), identityTotal(4), identityTotal(2))
	require.NoError(t, err)
	a2, err := kron.New(identityTotal(3), prefix(4), identityTotal(2))
	require.NoError(t, err)
	s := UnionStrategy{Parts: []UnionPart{{Weight: 0.8, A: a1, Terms: []string{"m"}}, {Weight: 0.6, A: a2, Terms: []string{"p"}}}}
	r, err := prepare(w, s, zcdp(0.05))
	require.NoError(t, err)
	x := make([]float64, 24)
	x[3], x[10], x[17] = 4, 9, 2
	for _, pp := range []Publishable{{NonNegative: true}, {NonNegative: true, Integer: true}} {
		ls, err := r.Run(context.Background(), Data{Histogram: x}, noise.NewSeededInsecure(8), nil, Publishable{})
		require.NoError(t, err)
		res, err := r.Run(context.Background(), Data{Histogram: x}, noise.NewSeededInsecure(8), nil, pp)
		require.NoError(t, err)
		e := res.Estimator
		lsB, lsP := sum(ls.Answers[0][6:10]), ls.Answers[1][6]+ls.Answers[1][7]
		t.Logf("%+v: least-squares totals by part %.4g and %.4g, combined %.4g ± %.3g; released %v", pp, lsB, lsP, e.LeastSquaresTotal, e.LeastSquaresTotalStd, e.ReleasedTotal)
		assert.NotEqual(t, lsB, lsP, "the parts' own totals differ")
		tol := 1e-9 * math.Max(1, e.ReleasedTotal)
		assert.InDelta(t, e.ReleasedTotal, sum(res.Answers[0][6:10]), tol)
		assert.InDelta(t, e.ReleasedTotal, res.Answers[1][6]+res.Answers[1][7], tol)
		assert.InDelta(t, e.ReleasedTotal, sum(res.Answers[0][:6]), tol)
		// The combined total lies between the parts' (a weighted mean).
		assert.GreaterOrEqual(t, e.LeastSquaresTotal, math.Min(lsB, lsP)-1e-9)
		assert.LessOrEqual(t, e.LeastSquaresTotal, math.Max(lsB, lsP)+1e-9)
	}
}

// lipschitz is the largest eigenvalue of AᵀA on the feasible directions
// 1⊥, computed densely here (P AᵀA P, P = I − J/n): equal to it (1e-9
// relative) when every factor's Gram has the constant eigenvector, and an
// upper bound (‖A‖₂²) otherwise.
func TestLipschitzOnFeasibleDirections(t *testing.T) {
	for _, fs := range [][]*mat.Dense{
		{identityTotal(3), identityTotal(4), identityTotal(2)},
		{identityTotal(5), ones(1)},
		{prefix(3), identityTotal(4)},
	} {
		ms := make([]mat.Matrix, len(fs))
		for i, f := range fs {
			ms[i] = f
		}
		a, err := kron.New(ms...)
		require.NoError(t, err)
		got, err := lipschitz(a)
		require.NoError(t, err)
		d := denseOf(fs...)
		_, n := d.Dims()
		var g mat.Dense
		g.Mul(d.T(), d)
		p := mat.NewDense(n, n, nil)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				v := -1 / float64(n)
				if i == j {
					v++
				}
				p.Set(i, j, v)
			}
		}
		var pg, pgp mat.Dense
		pg.Mul(p, &g)
		pgp.Mul(&pg, p)
		var eig mat.EigenSym
		require.True(t, eig.Factorize(mat.NewSymDense(n, pgp.RawMatrix().Data), false))
		vals := eig.Values(nil)
		want := vals[len(vals)-1]
		full, err := spectralNormSq(a)
		require.NoError(t, err)
		t.Logf("L on 1⊥ %.6g (dense %.6g), ‖A‖² %.6g", got, want, full)
		assert.GreaterOrEqual(t, got, want*(1-1e-9), "not an upper bound")
		if got < full {
			assert.InDelta(t, want, got, 1e-9*want, "the structured bound must be exact")
		}
	}
}

// With a product on three attributes the integer step rounds the histogram
// itself (running sums): every table integral, non-negative, of the
// rounded total, and exactly consistent — the {a,b} table is the 3-way
// table summed over c.
func TestIntegerThreeWayRoundsTheHistogram(t *testing.T) {
	dom := []domain.Attribute{{Name: "a", Size: 3}, {Name: "b", Size: 4}, {Name: "c", Size: 2}}
	w := &explicitWorkload{Domain: dom, Terms: []explicitTerm{{Name: "m", Weight: 1, Products: []explicitProduct{
		marginalProduct(dom, []int{0, 1, 2}), marginalProduct(dom, []int{0, 1}),
	}}}}
	r, err := prepare(w, kronStrategy(t, identityTotal(3), identityTotal(4), identityTotal(2)), zcdp(0.05))
	require.NoError(t, err)
	x := make([]float64, 24)
	x[1], x[8], x[20] = 3, 5, 1
	for _, pp := range []Publishable{{Integer: true}, {NonNegative: true, Integer: true}} {
		res, err := r.Run(context.Background(), Data{Histogram: x}, noise.NewSeededInsecure(4), nil, pp)
		require.NoError(t, err)
		e := res.Estimator
		assert.Contains(t, e.Method, "cumulative rounding of the histogram")
		require.NotNil(t, e.MaxInconsistency)
		assert.Equal(t, 0.0, *e.MaxInconsistency)
		abc, ab := res.Answers[0][:24], res.Answers[0][24:]
		for _, v := range res.Answers[0] {
			require.Equal(t, math.Round(v), v)
			if pp.NonNegative {
				require.GreaterOrEqual(t, v, 0.0)
			}
		}
		assert.Equal(t, e.ReleasedTotal, sum(abc))
		assert.Equal(t, e.ReleasedTotal, sum(ab))
		for i := range ab {
			assert.Equal(t, abc[2*i]+abc[2*i+1], ab[i], "cell %d", i)
		}
	}
}
