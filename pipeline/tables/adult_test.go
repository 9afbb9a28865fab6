package tables

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/dpsolve/dpsolve/internal/testkit/budgettest"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/pipeline/records"
	"github.com/dpsolve/dpsolve/privacy/noise"
	"github.com/dpsolve/dpsolve/status"
)

// adultDir returns examples/adult/data/coded, the integer-coded Adult
// records shipped in the repository; a missing file fails the test.
func adultDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join("..", "..", "examples", "adult", "data", "coded")
	if _, err := os.Stat(filepath.Join(dir, "adult.csv")); err != nil {
		t.Fatalf("the Adult data shipped in the repository is missing: %v", err)
	}
	return dir
}

// adultSizes reads the attribute sizes from domain.json.
func adultSizes(t testing.TB, dir string) map[string]int {
	b, err := os.ReadFile(filepath.Join(dir, "domain.json"))
	require.NoError(t, err)
	var d struct {
		Domain []domain.Attribute `json:"domain"`
	}
	require.NoError(t, json.Unmarshal(b, &d))
	out := map[string]int{}
	for _, a := range d.Domain {
		out[a.Name] = a.Size
	}
	return out
}

// adultMixed is a spec over four Adult attributes: three marginals and a
// product term (age prefix × income identity, summed over sex and race).
func adultMixed(t testing.TB, sizes map[string]int) *domain.Kron {
	spec := `{"domain": [{"name": "age", "size": AGE}, {"name": "sex", "size": 2}, {"name": "race", "size": 5}, {"name": "income>50K", "size": 2}],
	 "workload": [{"name": "m", "marginals": {"sets": [["age", "sex"], ["race", "income>50K"], ["sex", "race", "income>50K"]]}},
	              {"name": "cum", "weight": 2, "product": {"age": "prefix", "income>50K": "identity"}}]}`
	spec = strings.Replace(spec, "AGE", "85", 1)
	require.Equal(t, 85, sizes["age"])
	require.Equal(t, 5, sizes["race"])
	k, err := domain.ParseSpec(strings.NewReader(spec), ".", workload.Blocks)
	require.NoError(t, err)
	return k
}

// adultTruth computes the mixed workload's true answers from marginal
// tables read directly from the records — a different route from the
// release's histogram and Kronecker products.
func adultTruth(t testing.TB, dir string, dom []domain.Attribute) [][]float64 {
	f, err := os.Open(filepath.Join(dir, "adult.csv"))
	require.NoError(t, err)
	defer f.Close()
	tabs, _, err := records.ReadMarginals(f, dom, [][]int{{0, 1}, {2, 3}, {1, 2, 3}, {0, 3}}, nil)
	require.NoError(t, err)
	m := append(append(append([]float64(nil), tabs[0].Counts...), tabs[1].Counts...), tabs[2].Counts...)
	// cum[a, i] = Σ_{a' ≤ a} count(age = a', income = i), row-major (age, income).
	cum := make([]float64, 85*2)
	for i := 0; i < 2; i++ {
		s := 0.0
		for a := 0; a < 85; a++ {
			s += tabs[3].Counts[a*2+i]
			cum[a*2+i] = s
		}
	}
	return [][]float64{m, cum}
}

func TestAdultReleaseErrorIsCalibrated(t *testing.T) {
	// The accuracy claim of docs/releasing.md: over repeated seeded releases on real records
	// the empirical total squared error matches the reported expected error
	// (99% interval), a σ off by 10% would be detected, and the per-query
	// stddev column is calibrated (mean squared z-score ≈ 1).
	dir := adultDir(t)
	k := adultMixed(t, adultSizes(t, dir))
	w, err := explicitOf(k)
	require.NoError(t, err)
	f, err := os.Open(filepath.Join(dir, "adult.csv"))
	require.NoError(t, err)
	hist, st, err := records.ReadHistogram(f, w.Domain, nil)
	f.Close()
	require.NoError(t, err)
	require.Equal(t, int64(48842), st.Records)
	truth := adultTruth(t, dir, w.Domain)

	fs := make([]mat.Matrix, len(w.Domain))
	for i, a := range w.Domain {
		fs[i] = identityTotal(a.Size)
	}
	r, err := prepare(w, kronStrategy(t, fs...), budgettest.ZCDP(0.05))
	require.NoError(t, err)
	expected := r.ExpectedTotalSquaredError()
	// The prefix term dominates the total error and its answers are
	// strongly correlated (few effective degrees of freedom), so the total
	// needs a few hundred releases for the 10% power check to have margin.
	const releases = 250
	sq := make([]float64, releases) // total squared error per release
	z2 := make([]float64, releases) // mean squared z-score per release
	nq := 0
	for rel := 0; rel < releases; rel++ {
		res, err := r.Run(context.Background(), Data{Histogram: hist}, noise.NewSeededInsecure(uint64(1000+rel)), nil, Publishable{})
		require.NoError(t, err)
		nq = 0
		for ti := range truth {
			require.Len(t, res.Answers[ti], len(truth[ti]))
			for i, v := range res.Answers[ti] {
				e := v - truth[ti][i]
				sq[rel] += e * e
				z2[rel] += e * e / (res.Std[ti][i] * res.Std[ti][i])
				nq++
			}
		}
		z2[rel] /= float64(nq)
	}
	// The releases are independent, so the mean of the per-release values
	// is approximately normal with the empirical standard error: a
	// two-sided 99% interval is ±2.576 se.
	mean, variance := stat.MeanVariance(sq, nil)
	se := math.Sqrt(variance / releases)
	t.Logf("expected total squared error %.6g; empirical %.6g ± %.3g (se), %d queries", expected, mean, se, nq)
	assert.InDelta(t, expected, mean, 2.576*se, "empirical total squared error outside the 99%% interval")
	// Power: had σ been 10% off (variance ×1.21 or ×0.81), the same data
	// would reject it.
	assert.Greater(t, math.Abs(mean-1.21*expected), 2.576*se, "a σ 10%% too large would go undetected")
	assert.Greater(t, math.Abs(mean-0.81*expected), 2.576*se, "a σ 10%% too small would go undetected")
	zm, zv := stat.MeanVariance(z2, nil)
	zse := math.Sqrt(zv / releases)
	t.Logf("mean squared z-score %.4f ± %.3g (se)", zm, zse)
	assert.InDelta(t, 1, zm, 2.576*zse, "stddev column not calibrated")
	assert.Greater(t, math.Abs(zm-1/1.21), 2.576*zse, "a stddev 10%% too large would go undetected")
}

func TestAdultMarginalsRelease(t *testing.T) {
	// The marginals plan on the same records, from marginal tables only:
	// same calibration checks, fewer releases (it is the cheaper path).
	dir := adultDir(t)
	sizes := adultSizes(t, dir)
	k := adultMixed(t, sizes)
	w, err := explicitOf(k)
	require.NoError(t, err)
	_, err = prepare(w, MarginalsStrategy{}, budgettest.ZCDP(0.05))
	require.ErrorIs(t, err, ErrInput, "a product term is refused by the marginals template")
	assert.Contains(t, err.Error(), `term "cum" has a block other than identity or total`)
	w.Terms = w.Terms[:1]
	r, err := prepare(w, MarginalsStrategy{}, budgettest.ZCDP(0.05))
	require.NoError(t, err)
	expected := r.ExpectedTotalSquaredError()
	const releases = 120
	sq, z2 := adultMarginalReleases(t, r, dir, w, releases, 5000, nil)
	mean, variance := stat.MeanVariance(sq, nil)
	se := math.Sqrt(variance / releases)
	t.Logf("marginals: expected %.6g; empirical %.6g ± %.3g", expected, mean, se)
	assert.InDelta(t, expected, mean, 2.576*se)
	assert.Greater(t, math.Abs(mean-1.21*expected), 2.576*se)
	zm, zv := stat.MeanVariance(z2, nil)
	assert.InDelta(t, 1, zm, 2.576*math.Sqrt(zv/releases))
	// The residual plan is optimal for marginals: never worse than the
	// Kronecker strategy [I;1ᵀ]/√2 on the same marginals.
	fs := make([]mat.Matrix, len(w.Domain))
	for i, a := range w.Domain {
		fs[i] = identityTotal(a.Size)
	}
	rk, err := prepare(w, kronStrategy(t, fs...), budgettest.ZCDP(0.05))
	require.NoError(t, err)
	assert.LessOrEqual(t, expected, rk.ExpectedTotalSquaredError())
}

// adultMarginalReleases runs releases seeded releases (seeds seed0, seed0+1,
// …; simulation only) of the marginals plan r on Adult's first workload
// term and returns each release's total squared error against the true
// answers and its mean squared z-score (error over reported stddev); the
// plan needs only marginal tables, which are read from adult.csv. check,
// if non-nil, inspects every result.
func adultMarginalReleases(t *testing.T, r *Release, dir string, w *explicitWorkload, releases int, seed0 uint64, check func(*Result)) (sq, z2 []float64) {
	t.Helper()
	hist, sets := r.Needs()
	assert.False(t, hist)
	truth := adultTruth(t, dir, w.Domain)[0]
	f, err := os.Open(filepath.Join(dir, "adult.csv"))
	require.NoError(t, err)
	tabs, _, err := records.ReadMarginals(f, w.Domain, sets, nil)
	f.Close()
	require.NoError(t, err)
	sq, z2 = make([]float64, releases), make([]float64, releases)
	for rel := 0; rel < releases; rel++ {
		res, err := r.Run(context.Background(), Data{Tables: tabs}, noise.NewSeededInsecure(seed0+uint64(rel)), nil, Publishable{})
		require.NoError(t, err)
		if check != nil {
			check(res)
		}
		require.Len(t, res.Answers[0], len(truth))
		for i, v := range res.Answers[0] {
			e := v - truth[i]
			sq[rel] += e * e
			z2[rel] += e * e / (res.Std[0][i] * res.Std[0][i]) / float64(len(truth))
		}
	}
	return sq, z2
}

func TestAdultPureMarginalsRelease(t *testing.T) {
	// Pure ε-DP marginals (docs/marginals.md): discrete Laplace on every marginal
	// table, GLS reconstruction. Over repeated seeded releases on Adult the
	// empirical total squared error matches the reported expected error
	// (99% interval, normal approximation of the mean of independent
	// releases), a Laplace scale 10% off would be detected, and the stddev
	// column is calibrated (mean squared z-score ≈ 1).
	dir := adultDir(t)
	k := adultMixed(t, adultSizes(t, dir))
	w, err := explicitOf(k)
	require.NoError(t, err)
	w.Terms = w.Terms[:1]
	_, err = prepare(w, MarginalsStrategy{}, budgettest.PureDP(0.5))
	require.ErrorIs(t, err, ErrInput, "a Gaussian marginals plan refuses a pure budget")
	_, err = prepare(w, MarginalsStrategy{Pure: true}, budgettest.ZCDP(0.5))
	require.ErrorIs(t, err, ErrInput, "a pure marginals plan refuses a zCDP budget")
	r, err := prepare(w, MarginalsStrategy{Pure: true}, budgettest.PureDP(0.5))
	require.NoError(t, err)
	assert.Equal(t, "discrete Laplace (pure epsilon-DP)", r.Mechanism())
	_, norm := r.Sensitivity()
	assert.Equal(t, "L1", norm)
	spent := 0.0
	for _, tb := range r.MarginalTables() {
		spent += tb.Epsilon
	}
	assert.InDelta(t, 0.5, spent, 1e-12)
	assert.LessOrEqual(t, spent, 0.5, "the tables never spend more than ε")
	expected := r.ExpectedTotalSquaredError()
	const releases = 200
	sq, z2 := adultMarginalReleases(t, r, dir, w, releases, 7000, func(res *Result) {
		require.False(t, res.Private)
	})
	mean, variance := stat.MeanVariance(sq, nil)
	se := math.Sqrt(variance / releases)
	t.Logf("pure marginals: expected %.6g; empirical %.6g ± %.3g", expected, mean, se)
	assert.InDelta(t, expected, mean, 2.576*se)
	assert.Greater(t, math.Abs(mean-1.21*expected), 2.576*se, "a scale 10%% too large would go undetected")
	assert.Greater(t, math.Abs(mean-0.81*expected), 2.576*se, "a scale 10%% too small would go undetected")
	zm, zv := stat.MeanVariance(z2, nil)
	zse := math.Sqrt(zv / releases)
	assert.InDelta(t, 1, zm, 2.576*zse)
	assert.Greater(t, math.Abs(zm-1/1.21), 2.576*zse, "a stddev 10%% too large would go undetected")
}

func TestAdultMarginalsConsistentPostProcessing(t *testing.T) {
	// --nonnegative / --integer on a marginals plan (docs/releasing.md): tables on
	// Adult sharing attributes ({age, sex}, {race, income>50K},
	// {sex, race, income>50K}) stay consistent with one another (checked
	// here from the answers, independently of the package's own report) and
	// non-negative, under the Gaussian and the pure plans; post-processed
	// results say so.
	dir := adultDir(t)
	k := adultMixed(t, adultSizes(t, dir))
	w, err := explicitOf(k)
	require.NoError(t, err)
	w.Terms = w.Terms[:1]
	for _, tc := range []struct {
		s MarginalsStrategy
		b Budget
	}{{MarginalsStrategy{}, budgettest.ZCDP(0.001)}, {MarginalsStrategy{Pure: true}, budgettest.PureDP(0.05)}} {
		r, err := prepare(w, tc.s, tc.b)
		require.NoError(t, err)
		_, sets := r.Needs()
		f, err := os.Open(filepath.Join(dir, "adult.csv"))
		require.NoError(t, err)
		tabs, _, err := records.ReadMarginals(f, w.Domain, sets, nil)
		f.Close()
		require.NoError(t, err)
		plain, err := r.Run(context.Background(), Data{Tables: tabs}, noise.NewSeededInsecure(3), nil, Publishable{})
		require.NoError(t, err)
		assert.False(t, plain.PostProcessed)
		assert.Nil(t, plain.Consistency)
		negative := 0
		for _, v := range plain.Answers[0] {
			if v < 0 {
				negative++
			}
		}
		require.Greater(t, negative, 10, "the budget is small enough for negative cells (%v)", tc.b)
		for _, pp := range []Publishable{{NonNegative: true}, {NonNegative: true, Integer: true}} {
			res, err := r.Run(context.Background(), Data{Tables: tabs}, noise.NewSeededInsecure(3), nil, pp)
			require.NoError(t, err)
			require.True(t, res.PostProcessed, "post-processed answers are labelled")
			c := res.Consistency
			require.NotNil(t, c)
			require.Equal(t, status.Converged, c.Status)
			a := res.Answers[0]
			ageSex, raceInc, sexRaceInc := a[:170], a[170:180], a[180:200]
			for _, v := range a {
				require.GreaterOrEqual(t, v, 0.0)
				if pp.Integer {
					require.Equal(t, math.Round(v), v)
				}
			}
			// Shared sub-marginals: sex from {age,sex} and {sex,race,inc};
			// {race,inc} from both of its tables; the grand totals.
			spread := 0.0
			for s := 0; s < 2; s++ {
				x, y := 0.0, 0.0
				for age := 0; age < 85; age++ {
					x += ageSex[age*2+s]
				}
				for ri := 0; ri < 10; ri++ {
					y += sexRaceInc[s*10+ri]
				}
				spread = math.Max(spread, math.Abs(x-y))
			}
			for ri := 0; ri < 10; ri++ {
				spread = math.Max(spread, math.Abs(raceInc[ri]-sexRaceInc[ri]-sexRaceInc[10+ri]))
			}
			sum := func(v []float64) float64 {
				s := 0.0
				for _, x := range v {
					s += x
				}
				return s
			}
			spread = math.Max(spread, math.Abs(sum(ageSex)-sum(raceInc)))
			// Every table keeps the released total: the least-squares total
			// (the sum of every least-squares table), rounded with Integer,
			// within 2% of the 48,842 records.
			e := res.Estimator
			require.NotNil(t, e)
			assert.InDelta(t, sum(plain.Answers[0][:170]), e.LeastSquaresTotal, 1e-9*48842)
			assert.InDelta(t, 48842, e.ReleasedTotal, 0.02*48842)
			for _, tab := range [][]float64{ageSex, raceInc, sexRaceInc} {
				assert.InDelta(t, e.ReleasedTotal, sum(tab), 1e-9*48842)
			}
			require.Len(t, e.Tables, 3)
			for _, tc := range e.Tables {
				require.NotNil(t, tc.GrandTotal)
				assert.InDelta(t, e.ReleasedTotal, *tc.GrandTotal, 1e-9*48842)
			}
			t.Logf("%v %+v: shared sub-marginals differ by %.3g (reported %.3g), %d iterations", tc.b, pp, spread, c.MaxInconsistency, c.Iterations)
			assert.LessOrEqual(t, spread, c.MaxInconsistency+1e-9)
			if pp.Integer {
				// The two 2-way tables are rounded to the common rounded
				// one-way margins; the 3-way one to the total alone.
				assert.Equal(t, 2, c.ControlledTables)
				assert.Equal(t, 1, c.FallbackTables)
				assert.Equal(t, sum(ageSex), c.GrandTotal)
				assert.Equal(t, sum(raceInc), c.GrandTotal)
				assert.Equal(t, sum(sexRaceInc), c.GrandTotal)
			} else {
				// Consistent to rounding: 1e-9 of the 48842 records.
				assert.LessOrEqual(t, spread, 1e-9*48842)
				assert.LessOrEqual(t, c.MaxInconsistency, 1e-9*48842)
			}
		}
	}
}

func TestAdultTwoWayIntegerTablesExactlyConsistent(t *testing.T) {
	// All six 2-way marginals of four Adult attributes under pure ε with
	// --nonnegative --integer: controlled rounding makes the integer tables
	// agree exactly on every shared attribute and on the total (checked
	// here from the answers, table against table).
	dir := adultDir(t)
	sizes := adultSizes(t, dir)
	names := []string{"age", "sex", "race", "income>50K"}
	var dom []domain.Attribute
	for _, n := range names {
		dom = append(dom, domain.Attribute{Name: n, Size: sizes[n]})
	}
	var prods []explicitProduct
	var pairs [][2]int
	for a := 0; a < 4; a++ {
		for b := a + 1; b < 4; b++ {
			prods = append(prods, marginalProduct(dom, []int{a, b}))
			pairs = append(pairs, [2]int{a, b})
		}
	}
	w := &explicitWorkload{Domain: dom, Terms: []explicitTerm{{Name: "pairs", Weight: 1, Products: prods}}}
	r, err := prepare(w, MarginalsStrategy{Pure: true}, budgettest.PureDP(0.1))
	require.NoError(t, err)
	_, sets := r.Needs()
	f, err := os.Open(filepath.Join(dir, "adult.csv"))
	require.NoError(t, err)
	tabs, _, err := records.ReadMarginals(f, w.Domain, sets, nil)
	f.Close()
	require.NoError(t, err)
	res, err := r.Run(context.Background(), Data{Tables: tabs}, noise.NewSeededInsecure(9), nil, Publishable{NonNegative: true, Integer: true})
	require.NoError(t, err)
	c := res.Consistency
	require.NotNil(t, c)
	assert.Equal(t, 6, c.ControlledTables)
	assert.Equal(t, 0.0, c.MaxInconsistency)
	// One-way margins of every attribute from every table containing it.
	margins := map[int][][]float64{}
	off := 0
	for _, pr := range pairs {
		da, db := dom[pr[0]].Size, dom[pr[1]].Size
		tab := res.Answers[0][off : off+da*db]
		off += da * db
		ma, mb := make([]float64, da), make([]float64, db)
		for i := 0; i < da; i++ {
			for j := 0; j < db; j++ {
				v := tab[i*db+j]
				require.GreaterOrEqual(t, v, 0.0)
				require.Equal(t, math.Round(v), v)
				ma[i] += v
				mb[j] += v
			}
		}
		margins[pr[0]] = append(margins[pr[0]], ma)
		margins[pr[1]] = append(margins[pr[1]], mb)
	}
	for a, ms := range margins {
		for _, m := range ms[1:] {
			assert.Equal(t, ms[0], m, "attribute %s: tables disagree", names[a])
		}
	}
}
