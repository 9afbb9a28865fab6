package sdp

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

// The approx program for the single query W = [1 2], written out by hand
// from the definitions in doc.go: variables y = (X11, X12, X22, Y11); block 1
// is [[X, Wᵀ], [W, Y]] (3×3) with −F₀ supplying Wᵀ in column 3; block 2 is
// diag(1 − X11, 1 − X22).
const handApprox = `"test
4 =mdim
2 =nblocks
3 -2
0 0 0 1
0 1 1 3 -1
0 1 2 3 -2
0 2 1 1 -1
0 2 2 2 -1
1 1 1 1 1
1 2 1 1 -1
2 1 1 2 1
3 1 2 2 1
3 2 2 2 -1
4 1 3 3 1
`

func TestApproxExportHandChecked(t *testing.T) {
	fm, err := Build(Approx, mat.NewDense(1, 2, []float64{1, 2}))
	require.NoError(t, err)
	fm.Problem.Comment = "test"
	var buf bytes.Buffer
	require.NoError(t, WriteSDPA(&buf, fm.Problem))
	assert.Equal(t, handApprox, buf.String())

	// Parsing the hand-written file reproduces the blocks and constraints.
	p, err := ReadSDPA(strings.NewReader(handApprox))
	require.NoError(t, err)
	assert.Equal(t, "test", p.Comment)
	assert.Equal(t, []float64{0, 0, 0, 1}, p.C)
	assert.Equal(t, []int{3, -2}, p.Blocks)
	want := append([]Entry(nil), fm.Problem.Entries...)
	sortEntries(want)
	assert.Equal(t, want, p.Entries)
	require.Len(t, p.Entries, 10)
}

// The hand-derived optimum of the same program: min wᵀX⁻¹w over diag X ≤ 1
// for w = (1, 2) is attained at X = [[1, ρ], [ρ, 1]] minimizing
// (5 − 4ρ)/(1 − ρ²), i.e. ρ = 1/2, value 4. At that point the slack must be
// PSD with the big block singular (Y = W X⁻¹ Wᵀ exactly) and the diagonal
// block zero (both diag constraints active).
func TestSlackAtHandOptimum(t *testing.T) {
	fm, err := Build(Approx, mat.NewDense(1, 2, []float64{1, 2}))
	require.NoError(t, err)
	y := []float64{1, 0.5, 1, 4}
	s, err := fm.Problem.Slack(y)
	require.NoError(t, err)
	require.Len(t, s, 2)
	assert.Equal(t, []float64{1, 0.5, 1, 0.5, 1, 2, 1, 2, 4}, s[0].Data)
	ev, err := s[0].MinEigenvalue()
	require.NoError(t, err)
	assert.InDelta(t, 0, ev, 1e-12)
	assert.Equal(t, []float64{0, 0}, s[1].Data)
	pt, err := fm.Recover(y)
	require.NoError(t, err)
	assert.Equal(t, 4.0, pt.Objective)
	assert.Equal(t, 0.5, pt.X.At(1, 0))

	// Infeasible points show up as negative slack: ρ = 0.9 with Y = 4 is
	// below W X⁻¹ Wᵀ = (5 − 3.6)/0.19 ≈ 7.37; X11 = 1.1 violates diag ≤ 1.
	s, _ = fm.Problem.Slack([]float64{1, 0.9, 1, 4})
	ev, _ = s[0].MinEigenvalue()
	assert.Less(t, ev, -1e-3)
	s, _ = fm.Problem.Slack([]float64{1.1, 0.5, 1, 4})
	assert.InDelta(t, -0.1, s[1].Data[0], 1e-15)
}

// The encoding of every form, checked without a solver: at a feasible point
// built from random data the slack is PSD; the constraints it encodes are
// the ones in doc.go.
func TestSlackEncodesEveryForm(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	n, m := 4, 3
	w := mat.NewDense(m, n, nil)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			w.Set(i, j, rng.NormFloat64())
		}
	}
	// A with ‖A‖₁,∞ = 1 exactly (columns scaled to unit 1-norm), and
	// X = AᵀA + δI with δ = 1 − max diag(AᵀA) > 0, so X ⪰ AᵀA, X ≻ 0 and
	// diag(X) ≤ 1 with one entry active.
	a := mat.NewDense(n, n, nil)
	for j := 0; j < n; j++ {
		s := 0.0
		for k := 0; k < n; k++ {
			a.Set(k, j, rng.NormFloat64())
			s += math.Abs(a.At(k, j))
		}
		for k := 0; k < n; k++ {
			a.Set(k, j, a.At(k, j)/s)
		}
	}
	x := mat.NewSymDense(n, nil)
	x.SymOuterK(1, a.T())
	dmax := 0.0
	for i := 0; i < n; i++ {
		dmax = math.Max(dmax, x.At(i, i))
	}
	require.Less(t, dmax, 1.0)
	for i := 0; i < n; i++ {
		x.SetSym(i, i, x.At(i, i)+1-dmax)
	}
	var xi mat.Dense
	require.NoError(t, xi.Inverse(x))
	var ymat mat.Dense
	ymat.Product(w, &xi, w.T()) // Y = W X⁻¹ Wᵀ: the big block is singular, PSD
	for _, f := range []Form{Approx, Exact, ExactBounded} {
		fm, err := Build(f, w)
		require.NoError(t, err)
		y := make([]float64, fm.NumVars())
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				y[fm.xVar(i, j)] = x.At(i, j)
			}
		}
		for i := 0; i < m; i++ {
			for j := i; j < m; j++ {
				y[fm.yVar(i, j)] = ymat.At(i, j)
			}
		}
		if f != Approx {
			for k := 0; k < n; k++ {
				for j := 0; j < n; j++ {
					y[fm.aVar(k, j)] = a.At(k, j)
					y[fm.tVar(k, j)] = math.Abs(a.At(k, j))
				}
			}
		}
		s, err := fm.Problem.Slack(y)
		require.NoError(t, err)
		for b, blk := range s {
			ev, err := blk.MinEigenvalue()
			require.NoError(t, err)
			// Exact zeros occur (singular big block, active ‖A‖₁ bounds);
			// 1e-12 covers the rounding of the inverse and of the sums.
			assert.GreaterOrEqual(t, ev, -1e-12, "%v block %d", f, b+1)
		}
		pt, err := fm.Recover(y)
		require.NoError(t, err)
		assert.InDelta(t, mat.Trace(&ymat), pt.Objective, 1e-12)
		if f != Approx {
			assert.True(t, mat.Equal(a, pt.A))
			// Breaking ‖A‖₁,∞ ≤ 1 must make the linear block negative.
			y[fm.tVar(0, 0)] += 0.01
			y[fm.aVar(0, 0)] = y[fm.tVar(0, 0)] * math.Copysign(1, a.At(0, 0))
			s, _ = fm.Problem.Slack(y)
			ev, _ := s[len(s)-1].MinEigenvalue()
			assert.InDelta(t, -0.01, ev, 1e-12, "%v", f)
		}
	}
}

func TestExportRoundTripAllForms(t *testing.T) {
	w := mat.NewDense(2, 3, []float64{1, 0, -2.5, 0.125, 3, 1e-7})
	for _, f := range []Form{Approx, Exact, ExactBounded} {
		fm, err := Build(f, w)
		require.NoError(t, err)
		var buf bytes.Buffer
		require.NoError(t, WriteSDPA(&buf, fm.Problem))
		p, err := ReadSDPA(&buf)
		require.NoError(t, err)
		want := *fm.Problem
		want.Entries = append([]Entry(nil), want.Entries...)
		sortEntries(want.Entries)
		assert.Equal(t, &want, p, "%v", f)
		// Variable and block counts from the definitions: X and Y upper
		// triangles (6 + 3), plus A and T (9 + 9) for Eq. (3).
		switch f {
		case Approx:
			assert.Equal(t, 9, fm.NumVars())
			assert.Equal(t, []int{5, -3}, p.Blocks)
		case Exact:
			assert.Equal(t, 27, fm.NumVars())
			assert.Equal(t, []int{5, 6, -(18 + 3)}, p.Blocks)
		case ExactBounded:
			assert.Equal(t, []int{5, 6, -(18 + 3 + 3)}, p.Blocks)
		}
	}
}

func TestReadSDPAFormatVariants(t *testing.T) {
	in := `* a comment
"another
2
 2
{3, -2}
(0.0, 1.5)
0 1 1 3 -1
1 1 3 1 2
2 2 2 2 -1e-3
`
	p, err := ReadSDPA(strings.NewReader(in))
	require.NoError(t, err)
	assert.Equal(t, "another", p.Comment)
	assert.Equal(t, []float64{0, 1.5}, p.C)
	assert.Equal(t, []int{3, -2}, p.Blocks)
	assert.Equal(t, Entry{Mat: 1, Block: 1, I: 1, J: 3, Value: 2}, p.Entries[1], "lower-triangle entry moved up")

	for name, tc := range map[string]struct{ in, msg string }{
		"empty":          {"", "number of variables missing"},
		"bad m":          {"x\n", "not a positive integer"},
		"no blocks":      {"2\n", "number of blocks missing"},
		"short sizes":    {"2\n2\n3\n", "block sizes missing"},
		"zero block":     {"1\n1\n0\n1\n", "block size \"0\""},
		"short c":        {"2\n1\n3\n1\n", "objective vector missing"},
		"long c":         {"1\n1\n3\n1 2\n", "2 objective entries where 1"},
		"bad c":          {"1\n1\n3\nx\n", "objective entry \"x\""},
		"short entry":    {"1\n1\n3\n1\n1 1 1 1\n", "want \"matrix block i j value\""},
		"bad index":      {"1\n1\n3\n1\n1 a 1 1 1\n", "\"a\" is not an integer"},
		"bad value":      {"1\n1\n3\n1\n1 1 1 1 v\n", "\"v\" is not a number"},
		"mat range":      {"1\n1\n3\n1\n2 1 1 1 1\n", "matrix number outside 0..1"},
		"block range":    {"1\n1\n3\n1\n1 2 1 1 1\n", "block number outside 1..1"},
		"pos range":      {"1\n1\n3\n1\n1 1 1 4 1\n", "outside the upper triangle"},
		"diag offdiag":   {"1\n1\n-3\n1\n1 1 1 2 1\n", "off-diagonal entry in diagonal block"},
		"duplicate":      {"1\n1\n3\n1\n1 1 1 2 1\n1 1 2 1 1\n", "duplicate entry"},
		"nonfinite":      {"1\n1\n3\n1\n1 1 1 2 inf\n", "non-finite"},
		"nonfinite obj":  {"1\n1\n3\nnan\n", "objective entry 1 is NaN"},
		"negative count": {"-1\n", "not a positive integer"},
	} {
		_, err := ReadSDPA(strings.NewReader(tc.in))
		if assert.Error(t, err, name) {
			assert.Contains(t, err.Error(), tc.msg, name)
		}
	}
}

func TestWriteSDPARejectsInvalid(t *testing.T) {
	var buf bytes.Buffer
	assert.ErrorContains(t, WriteSDPA(&buf, &Problem{C: []float64{1}, Blocks: []int{2}, Comment: "a\nb"}), "newline")
	assert.ErrorContains(t, WriteSDPA(&buf, &Problem{C: []float64{1}}), "no blocks")
	assert.ErrorContains(t, WriteSDPA(&buf, &Problem{Blocks: []int{1}}), "no variables")
	assert.ErrorContains(t, WriteSDPA(&buf, &Problem{C: []float64{1}, Blocks: []int{2},
		Entries: []Entry{{Mat: 1, Block: 1, I: 2, J: 1, Value: 1}}}), "upper triangle")
	assert.Zero(t, buf.Len(), "nothing written for an invalid problem")
}

func TestBuildValidation(t *testing.T) {
	_, err := Build(Approx, nil)
	assert.Error(t, err)
	_, err = Build(Approx, mat.NewDense(1, 2, []float64{1, math.NaN()}))
	assert.ErrorContains(t, err, "NaN")
	_, err = Build(Form(0), mat.NewDense(1, 1, []float64{1}))
	assert.ErrorContains(t, err, "unknown form")
	for _, s := range []string{"approx", "exact", "exact-bounded"} {
		f, err := ParseForm(s)
		require.NoError(t, err)
		assert.Equal(t, s, f.String())
	}
	_, err = ParseForm("p1")
	assert.ErrorContains(t, err, "unknown form")
	fm, _ := Build(Approx, mat.NewDense(1, 1, []float64{1}))
	_, err = fm.Recover([]float64{1})
	assert.ErrorContains(t, err, "1 variables, the approx program has 2")
	_, err = fm.Recover([]float64{1, math.Inf(1)})
	assert.ErrorContains(t, err, "+Inf")
}

func TestFactorGram(t *testing.T) {
	check := func(name string, v *mat.SymDense) {
		r, err := FactorGram(v)
		require.NoError(t, err, name)
		var rtr mat.Dense
		rtr.Mul(r.T(), r)
		n := v.SymmetricDim()
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				// Backward-stable factorizations: error ~ n·ε·‖V‖.
				assert.InDelta(t, v.At(i, j), rtr.At(i, j), 1e-12*float64(n)*mat.Norm(v, 2), "%s (%d,%d)", name, i, j)
			}
		}
	}
	for _, name := range []string{"prefix", "allrange", "identity"} {
		w, err := workload.Builtin(name, 12)
		require.NoError(t, err)
		check(name, w.Gram())
	}
	tot, err := workload.Builtin("total", 6) // rank one: the eigen path
	require.NoError(t, err)
	check("total", tot.Gram())

	_, err = FactorGram(mat.NewSymDense(2, []float64{1, 2, 2, 1})) // eigenvalues 3, −1
	assert.ErrorContains(t, err, "not of the form WᵀW")
	_, err = FactorGram(mat.NewSymDense(1, []float64{math.NaN()}))
	assert.ErrorContains(t, err, "NaN")
	_, err = FactorGram(nil)
	assert.Error(t, err)
}
