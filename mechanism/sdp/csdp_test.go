package sdp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/reference"
	"github.com/dpsolve/dpsolve/mechanism/lrm"
	"github.com/dpsolve/dpsolve/mechanism/strategy"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/newton"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/status"
)

// requireCSDP skips a test when the csdp executable is absent. CI installs it
// (coinor-csdp, scripts/install-deps.sh), so there the tests always run.
func requireCSDP(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("csdp"); err != nil {
		t.Skip("csdp not on PATH: install coinor-csdp (scripts/install-deps.sh) to run the CSDP cross-checks")
	}
}

// tiny is min y₁ + y₂ s.t. [[y₁, 1], [1, y₂]] ⪰ 0, y₁ ≥ 1/2: optimum 2 at
// y = (1, 1) (y₁y₂ ≥ 1 and AM–GM).
func tiny() *Problem {
	return &Problem{
		C:      []float64{1, 1},
		Blocks: []int{2, -1},
		Entries: []Entry{
			{0, 1, 1, 2, -1}, {0, 2, 1, 1, 0.5},
			{1, 1, 1, 1, 1}, {1, 2, 1, 1, 1},
			{2, 1, 2, 2, 1},
		},
	}
}

func TestSolveTinyProblem(t *testing.T) {
	requireCSDP(t)
	res, err := Solve(context.Background(), tiny(), nil)
	require.NoError(t, err)
	assert.Equal(t, "Success: SDP solved", res.Message)
	assert.Equal(t, status.Converged, res.Status)
	assert.True(t, strings.HasPrefix(res.Solver, "CSDP "), res.Solver)
	// CSDP's default tolerances are 1e-8 on the relative gap; y itself is
	// only determined to ~√tol along the flat direction y₁y₂ = 1.
	assert.InDelta(t, 2, res.Objective, 1e-7)
	assert.InDelta(t, 2, res.LowerBound, 1e-7)
	assert.InDelta(t, 1, res.Solution.Y[0], 1e-4)
	assert.Len(t, res.Solution.Z, 2)
	assert.InDelta(t, 1, res.Solution.Z[0].At(0, 1), 1e-12, "Z = Σ yF − F₀ has the constant 1 off the diagonal")
	assert.Greater(t, res.Seconds, 0.0)
}

// The single query W = [1 2]: the hand-derived optimum is 4, attained at
// X = [[1, 1/2], [1/2, 1]] (see TestSlackAtHandOptimum) but not only there:
// for a rank-one W every X with diag ≤ 1, X₂₂ = 1 and wᵀX⁻¹w = 4 is optimal
// (the dual weight sits on the larger |wᵢ|), and CSDP returns one from the
// interior of that face. So check what is determined: the value, X₂₂ = 1,
// and that the recovered X attains 4.
func TestSolveHandCheckedApprox(t *testing.T) {
	requireCSDP(t)
	fm, err := Build(Approx, mat.NewDense(1, 2, []float64{1, 2}))
	require.NoError(t, err)
	res, err := Solve(context.Background(), fm.Problem, nil)
	require.NoError(t, err)
	pt, err := fm.Recover(res.Solution.Y)
	require.NoError(t, err)
	assert.InDelta(t, 4, pt.Objective, 4e-7)
	assert.InDelta(t, 1, pt.X.At(1, 1), 1e-6)
	assert.LessOrEqual(t, pt.X.At(0, 0), 1+1e-8)
	f, err := traceVXinv(mat.NewSymDense(2, []float64{1, 2, 2, 4}), pt.X)
	require.NoError(t, err)
	assert.InDelta(t, 4, f, 4e-6)
}

// newtonOptimum caches certified Newton optima (relative gap ≤ 1e-8) by key.
var (
	newtonMu    sync.Mutex
	newtonCache = map[string]float64{}
)

func newtonOptimum(t *testing.T, key string, v *mat.SymDense) float64 {
	t.Helper()
	newtonMu.Lock()
	defer newtonMu.Unlock()
	if f, ok := newtonCache[key]; ok {
		return f
	}
	res, err := newton.Solve(context.Background(), v, nil)
	require.NoError(t, err, key)
	require.Equal(t, newton.Converged, res.Status, key)
	require.LessOrEqual(t, res.Gap, 1e-8, key)
	newtonCache[key] = res.Objective
	return res.Objective
}

// testWorkloads are the cross-check cases of issue #8: Prefix and AllRange
// for n ∈ {8, 16, 32} and two seeded random workloads.
func testWorkloads(t *testing.T) []workload.Workload {
	var ws []workload.Workload
	for _, name := range []string{"prefix", "allrange"} {
		for _, n := range []int{8, 16, 32} {
			w, err := workload.Builtin(name, n)
			require.NoError(t, err)
			ws = append(ws, w)
		}
	}
	for _, spec := range []string{"wrange:m=48,seed=7", "wdiscrete:m=24,pneg=0.25,ppos=0.25,seed=3"} {
		w, err := workload.Parse(spec, 16)
		require.NoError(t, err)
		ws = append(ws, w)
	}
	return ws
}

// Eq. (2) solved by CSDP agrees with the Newton optimizer's certified optimum.
// Tolerance 1e-6 relative (the issue's): CSDP stops at a relative duality gap
// of 1e-8 and Newton certifies a gap ≤ 1e-8, so the two must agree to ~1e-8;
// 1e-6 leaves room for CSDP's slightly infeasible final iterates.
func TestApproxMatchesNewton(t *testing.T) {
	requireCSDP(t)
	referenceChecked := false // per run: a package variable would pass with -count=2
	for _, w := range testWorkloads(t) {
		t.Run(w.Name(), func(t *testing.T) {
			v := w.Gram()
			var chol mat.Cholesky
			require.True(t, chol.Factorize(v), "the cross-check needs a full-rank V (Newton adds no regularization then)")
			want := newtonOptimum(t, w.Name(), v)

			fm, err := FromGram(Approx, v)
			require.NoError(t, err)
			res, err := Solve(context.Background(), fm.Problem, nil)
			require.NoError(t, err)
			pt, err := fm.Recover(res.Solution.Y)
			require.NoError(t, err)
			rel := math.Abs(pt.Objective-want) / want
			t.Logf("%s: csdp %.10g newton %.10g rel %.2e (%.2fs, %d vars)", w.Name(), pt.Objective, want, rel, res.Seconds, fm.NumVars())
			assert.LessOrEqual(t, rel, 1e-6)
			assert.LessOrEqual(t, math.Abs(res.LowerBound-want)/want, 1e-6, "CSDP's dual bound")

			// The recovered X is (nearly) feasible and attains the optimum:
			// diag(X) ≤ 1 up to CSDP's 1e-8 feasibility tolerance (scaled),
			// and tr(V X⁻¹) within 1e-6 of the optimum.
			for i := 0; i < fm.N; i++ {
				assert.LessOrEqual(t, pt.X.At(i, i), 1+1e-6)
			}
			f, err := traceVXinv(v, pt.X)
			require.NoError(t, err)
			assert.InEpsilon(t, want, f, 1e-6)

			if w.Name() == "prefix(n=32)" {
				// The certified reference (internal/reference, checked there
				// against an independent dense certificate); 1e-6 is the
				// issue's agreement tolerance for CSDP's interior point.
				assert.InEpsilon(t, reference.PrefixN32, pt.Objective, 1e-6)
				assert.InEpsilon(t, reference.PrefixN32, want, 1e-8)
				referenceChecked = true
			}
		})
	}
	assert.True(t, referenceChecked, "prefix(n=32) must be among the cases")
}

// An explicit W (m ≤ n) and its Gram factor give the same program value.
func TestExplicitMatrixAndGramFactorAgree(t *testing.T) {
	requireCSDP(t)
	w, err := workload.Builtin("prefix", 8)
	require.NoError(t, err)
	var vals []float64
	for _, build := range []func() (*Formulation, error){
		func() (*Formulation, error) { return Build(Approx, w.(workload.Explicit).Matrix()) },
		func() (*Formulation, error) { return FromGram(Approx, w.Gram()) },
	} {
		fm, err := build()
		require.NoError(t, err)
		res, err := Solve(context.Background(), fm.Problem, nil)
		require.NoError(t, err)
		vals = append(vals, res.Objective)
	}
	assert.InEpsilon(t, vals[0], vals[1], 1e-7)
}

// Exact forms, n = 8 and 16 (the Eq. (3) programs have 2n² more variables).
func TestExactForms(t *testing.T) {
	requireCSDP(t)
	for _, tc := range []struct {
		name string
		n    int
	}{{"prefix", 8}, {"allrange", 8}, {"prefix", 16}} {
		w, err := workload.Builtin(tc.name, tc.n)
		require.NoError(t, err)
		v := w.Gram()
		// J₁ of the feasible strategies tried: identity, H2, Haar wavelet,
		// and the Low-Rank Mechanism's L (ℓ1 columns ≤ 1) used as a
		// strategy with least-squares reconstruction.
		id, err := strategy.NewIdentity(tc.n)
		require.NoError(t, err)
		h2, err := strategy.NewH2(tc.n)
		require.NoError(t, err)
		wav, err := strategy.NewWavelet(tc.n)
		require.NoError(t, err)
		f, err := lrm.GramFactor(v)
		require.NoError(t, err)
		lr, err := lrm.Solve(context.Background(), f, &lrm.Options{Noise: calibrate.Laplace})
		require.NoError(t, err)
		lrmStrategy, err := strategy.FromMatrix("lrm", lr.L)
		require.NoError(t, err)
		var j1 []float64
		for _, s := range []strategy.Matrix{id, h2, wav, lrmStrategy} {
			j, err := StrategyObjective(v, s, calibrate.Laplace)
			require.NoError(t, err)
			j1 = append(j1, j)
		}
		gauss := newtonOptimum(t, w.Name(), v)

		for _, f := range []Form{Exact, ExactBounded} {
			t.Run(fmt.Sprintf("%s/%v", w.Name(), f), func(t *testing.T) {
				fm, err := FromGram(f, v)
				require.NoError(t, err)
				res, err := Solve(context.Background(), fm.Problem, nil)
				require.NoError(t, err)
				pt, err := fm.Recover(res.Solution.Y)
				require.NoError(t, err)
				t.Logf("%v value %.8g (gaussian optimum %.8g; J1 identity %.6g h2 %.6g wavelet %.6g lrm %.6g) %.2fs",
					f, pt.Objective, gauss, j1[0], j1[1], j1[2], j1[3], res.Seconds)
				// A relaxation's value is a lower bound on J₁ of every feasible
				// strategy (up to CSDP's 1e-8 relative gap).
				for _, j := range j1 {
					assert.LessOrEqual(t, pt.Objective, j*(1+1e-8))
				}
				// The recovered A satisfies ‖A‖₁,∞ ≤ 1 (CSDP's feasibility
				// tolerance is 1e-8 relative; 1e-6 is the bound).
				l1 := 0.0
				for j := 0; j < fm.N; j++ {
					s := 0.0
					for k := 0; k < fm.N; k++ {
						s += math.Abs(pt.A.At(k, j))
					}
					l1 = math.Max(l1, s)
				}
				assert.LessOrEqual(t, l1, 1+1e-6)
				switch f {
				case Exact:
					// The defect documented in doc.go: X is unbounded, so
					// the value goes to 0 (CSDP stops near 1e-9·tr V).
					assert.Less(t, math.Abs(pt.Objective), 1e-6*mat.Trace(v))
					assert.Greater(t, pt.X.At(0, 0), 1e6, "X grows without bound")
				case ExactBounded:
					// A = 0 stays feasible, so the value is Eq. (2)'s optimum.
					assert.InEpsilon(t, gauss, pt.Objective, 1e-6)
				}
			})
		}
	}
}

func TestSolveMissingSolver(t *testing.T) {
	_, err := Solve(context.Background(), tiny(), &Options{Path: filepath.Join(t.TempDir(), "csdp")})
	require.ErrorIs(t, err, ErrSolverNotFound)
	assert.Contains(t, err.Error(), "apt-get install coinor-csdp")

	t.Setenv("PATH", t.TempDir())
	_, err = Solve(context.Background(), tiny(), nil)
	require.ErrorIs(t, err, ErrSolverNotFound)
}

// Non-optimal outcomes from the real solver: an infeasible program, an
// unbounded one, and an iteration limit.
func TestSolveNonOptimalStatus(t *testing.T) {
	requireCSDP(t)
	// y ≥ 1 and y ≤ −1: no feasible y.
	infeasible := &Problem{C: []float64{1}, Blocks: []int{-2}, Entries: []Entry{
		{1, 1, 1, 1, 1}, {0, 1, 1, 1, 1}, {1, 1, 2, 2, -1}, {0, 1, 2, 2, 1},
	}}
	_, err := Solve(context.Background(), infeasible, nil)
	var se *SolverError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 2, se.Code)
	assert.Contains(t, err.Error(), "constraints cannot be satisfied")

	// min y s.t. −y ≥ 0: unbounded below.
	unbounded := &Problem{C: []float64{1}, Blocks: []int{-1}, Entries: []Entry{{1, 1, 1, 1, -1}}}
	_, err = Solve(context.Background(), unbounded, nil)
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 1, se.Code)
	assert.Contains(t, err.Error(), "unbounded below")

	res, err := Solve(context.Background(), tiny(), &Options{MaxIter: 1})
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 4, se.Code)
	assert.Contains(t, err.Error(), "maximum number of iterations")
	// CSDP writes its last iterate, which is returned with the error so a
	// caller can inspect it; after one iteration it is far from optimal.
	require.NotNil(t, res)
	assert.Equal(t, status.IterationLimit, res.Status)
	require.NotNil(t, res.Solution)
	assert.Greater(t, res.Objective, 10.0)
}

// fakeCSDP installs a shell script named csdp that prints out, writes sol
// (if non-empty) as the solution file and exits with code.
func fakeCSDP(t *testing.T, out, sol string, code int) string {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no /bin/sh for the fake solver")
	}
	dir := t.TempDir()
	script := "#!/bin/sh\n"
	script += "cat <<'EOF'\n" + out + "\nEOF\n"
	if sol != "" {
		script += "cat > \"$2\" <<'EOF'\n" + sol + "\nEOF\n"
	}
	script += fmt.Sprintf("exit %d\n", code)
	path := filepath.Join(dir, "csdp")
	require.NoError(t, os.WriteFile(path, []byte(script), 0o755))
	return path
}

func TestSolveFakeSolverOutcomes(t *testing.T) {
	ctx := context.Background()
	good := "1 1\n1 1 1 1 1\n2 1 1 2 -1\n"

	path := fakeCSDP(t, "Success: SDP solved\nPrimal objective value: 2.0000000e+00", good, 0)
	res, err := Solve(ctx, tiny(), &Options{Path: path})
	require.NoError(t, err)
	assert.Equal(t, 2.0, res.Objective)
	assert.Equal(t, 2.0, res.LowerBound)
	assert.Equal(t, -1.0, res.Solution.X[0].At(1, 0))

	path = fakeCSDP(t, "Lack of progress.  Giving up!\nFailure: return code is 7", "", 7)
	_, err = Solve(ctx, tiny(), &Options{Path: path})
	var se *SolverError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 7, se.Code)
	assert.Equal(t, "Failure: return code is 7", se.Message)
	assert.Contains(t, err.Error(), "lack of progress")
	assert.Contains(t, err.Error(), "Giving up!")

	path = fakeCSDP(t, "Partial Success: SDP solved with reduced accuracy", good, 3)
	res, err = Solve(ctx, tiny(), &Options{Path: path})
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 3, se.Code)
	require.NotNil(t, res, "partial success keeps the solution")
	assert.Equal(t, 2.0, res.Objective)

	path = fakeCSDP(t, "Success: SDP solved", "1 1 1\n", 0)
	_, err = Solve(ctx, tiny(), &Options{Path: path})
	require.ErrorIs(t, err, ErrMalformedSolution)
	assert.Contains(t, err.Error(), "y has 3 entries, the problem has 2 variables")

	path = fakeCSDP(t, "Success: SDP solved", "", 0)
	_, err = Solve(ctx, tiny(), &Options{Path: path})
	assert.ErrorContains(t, err, "wrote no solution file")

	path = fakeCSDP(t, "", "", 42)
	_, err = Solve(ctx, tiny(), &Options{Path: path})
	require.ErrorAs(t, err, &se)
	assert.Contains(t, err.Error(), "unexpected exit status")

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = Solve(cctx, tiny(), &Options{Path: fakeCSDP(t, "", good, 0)})
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)
}

func TestReadSolutionMalformed(t *testing.T) {
	p := tiny()
	for name, tc := range map[string]struct{ in, msg string }{
		"empty":        {"", "empty file"},
		"short y":      {"1\n", "y has 1 entries"},
		"bad y":        {"1 x\n", "y[2] = \"x\""},
		"nan y":        {"1 nan\n", "y[2] = \"nan\""},
		"short line":   {"1 1\n1 1 1 1\n", "line 2: want"},
		"bad int":      {"1 1\n1 b 1 1 1\n", "line 2: \"b\" is not an integer"},
		"bad value":    {"1 1\n1 1 1 1 1e\n", "value \"1e\""},
		"inf value":    {"1 1\n1 1 1 1 -inf\n", "value \"-inf\""},
		"bad matrix":   {"1 1\n3 1 1 1 1\n", "matrix number 3"},
		"bad block":    {"1 1\n1 3 1 1 1\n", "block 3 outside 1..2"},
		"bad position": {"1 1\n2 1 1 3 1\n", "position (1,3) outside block 1 of size 2"},
		"zero index":   {"1 1\n2 1 0 1 1\n", "position (0,1)"},
	} {
		_, err := ReadSolution(strings.NewReader(tc.in), p)
		if assert.ErrorIs(t, err, ErrMalformedSolution, name) {
			assert.Contains(t, err.Error(), tc.msg, name)
		}
	}
	_, err := ReadSolution(strings.NewReader("1\n2 1 1 2 1\n"), &Problem{C: []float64{1}, Blocks: []int{-2}})
	require.ErrorIs(t, err, ErrMalformedSolution)
	assert.Contains(t, err.Error(), "off-diagonal position (1,2) in diagonal block 1")

	sol, err := ReadSolution(strings.NewReader("0.5 2\n\n1 1 2 1 3\n2 2 1 1 4\n"), p)
	require.NoError(t, err)
	assert.Equal(t, []float64{0.5, 2}, sol.Y)
	assert.Equal(t, 3.0, sol.Z[0].At(0, 1), "lower-triangle entry mirrored")
	assert.Equal(t, 4.0, sol.X[1].At(0, 0))
	assert.Equal(t, 0.0, sol.X[1].At(0, 1))
}

func TestStrategyObjective(t *testing.T) {
	w, err := workload.Builtin("prefix", 8)
	require.NoError(t, err)
	v := w.Gram()
	id, _ := strategy.NewIdentity(8)
	// Identity: Δ₁ = Δ₂ = 1 and X = I, so J = tr(V) = Σ_i (n − i) = 36.
	for _, p := range []calibrate.NoiseKind{calibrate.Laplace, calibrate.Gaussian} {
		j, err := StrategyObjective(v, id, p)
		require.NoError(t, err)
		assert.InDelta(t, 36, j, 1e-12)
	}
	// H2 on n = 8 has depth 4 (Δ₁ = 4, Δ₂ = 2): J₁ = 4·J₂ exactly.
	h2, _ := strategy.NewH2(8)
	j1, err := StrategyObjective(v, h2, calibrate.Laplace)
	require.NoError(t, err)
	j2, err := StrategyObjective(v, h2, calibrate.Gaussian)
	require.NoError(t, err)
	assert.InEpsilon(t, 4*j2, j1, 1e-12)
	// The Newton strategy's J₂ is its certified objective.
	opt, err := strategy.Optimize(context.Background(), v, nil)
	require.NoError(t, err)
	j, err := StrategyObjective(v, opt, calibrate.Gaussian)
	require.NoError(t, err)
	assert.InEpsilon(t, newtonOptimum(t, w.Name(), v), j, 1e-9)

	sing, err := strategy.FromMatrix("rank1", mat.NewDense(1, 8, []float64{1, 1, 1, 1, 1, 1, 1, 1}))
	require.NoError(t, err)
	_, err = StrategyObjective(v, sing, calibrate.Laplace)
	assert.ErrorIs(t, err, ErrUnsupported)
	_, err = StrategyObjective(v, id, "l3")
	assert.ErrorContains(t, err, `unknown noise "l3"`)
	id4, _ := strategy.NewIdentity(4)
	_, err = StrategyObjective(v, id4, calibrate.Laplace)
	assert.ErrorContains(t, err, "4 columns, workload 8 cells")
}
