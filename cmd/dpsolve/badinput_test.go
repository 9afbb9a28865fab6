package main

// The bad-input suite: every bad command line and file reported against
// dpsolve, run as a user runs
// it (a subprocess of the built binary, in a fresh directory), asserting the
// exit status, the message, the files left on disk, that every input file
// is unchanged, and that no Go runtime text (panic, stack dump) appears.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/internal/matio"
)

var (
	strategyOnce       sync.Once
	sharedStrategyFile string
	strategyErr        error
)

// gaussianStrategy returns a file holding the Gaussian-optimized strategy
// for prefix on 256 cells (dpsolve solve --out-a), made once.
func gaussianStrategy(t *testing.T) string {
	t.Helper()
	strategyOnce.Do(func() {
		dir, err := os.MkdirTemp("", "dpsolve-strategy-")
		if err != nil {
			strategyErr = err
			return
		}
		sharedStrategyFile = filepath.Join(dir, "A.npy")
		var o, e bytes.Buffer
		if code := run([]string{"solve", "--workload", "prefix", "--n", "256", "--quiet", "--out-a", sharedStrategyFile}, &o, &e); code != 0 {
			strategyErr = fmt.Errorf("solve exited %d: %s", code, e.String())
		}
	})
	require.NoError(t, strategyErr)
	return sharedStrategyFile
}

// cliFixture makes a directory with the inputs the cases use.
func cliFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	fill := func(name string, n int, v float64) {
		x := make([]float64, n)
		for i := range x {
			x[i] = v
		}
		require.NoError(t, matio.WriteVector(filepath.Join(dir, name), x))
	}
	fill("x.npy", 256, 5)
	fill("x128.npy", 128, 5)
	fill("x.csv", 256, 5)
	fill("xf.csv", 128, 5.5)
	fill("big.csv", 128, 8206)
	// Counts whose prefix sums reach 1.3·10¹², beyond noise.MaxGridUnits grid
	// units at --eps 1e4, where σ is below 10⁻³ (big.csv's 10⁶ fits).
	fill("vast.csv", 128, 1e10)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "wz.csv"), []byte("1,0,1\n0,0,1\n1,0,0\n"), 0o644))
	a, err := os.ReadFile(gaussianStrategy(t))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "A.npy"), a, 0o644))
	return dir
}

// hashes records every regular file in dir.
func hashes(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range ents {
		if e.Type().IsRegular() {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			require.NoError(t, err)
			out[e.Name()] = sha256.Sum256(b)
		}
	}
	return out
}

// runBin runs the binary in dir and returns status, stdout, stderr, time.
func runBin(t *testing.T, dir string, env []string, args ...string) (int, string, string, time.Duration) {
	t.Helper()
	return runBinContext(t, context.Background(), dir, append(os.Environ(), env...), args...)
}

// runBinContext runs the binary in dir with environment env (nil: this
// process's, with PWD set to dir) until it exits or ctx ends, and returns
// status (-1 when ctx ended it), stdout, stderr and time.
func runBinContext(t *testing.T, ctx context.Context, dir string, env []string, args ...string) (int, string, string, time.Duration) {
	t.Helper()
	cmd := exec.CommandContext(ctx, needBinary(t), args...)
	cmd.Dir = dir
	cmd.Env = env
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	code := 0
	if err != nil {
		if ctx.Err() != nil {
			return -1, o.String(), e.String(), took
		}
		var ee *exec.ExitError
		require.True(t, errors.As(err, &ee), "%v", err)
		code = ee.ExitCode()
	}
	return code, o.String(), e.String(), took
}

// runtimeNoise is text only the Go runtime prints: a user must never see it.
var runtimeNoise = []string{"panic:", "goroutine ", "fatal error", "runtime/", ".go:"}

type badCase struct {
	name   string
	args   []string
	env    []string
	code   int
	stderr []string // substrings of stderr
	stdout []string // substrings of stdout
	not    []string // must not appear on stderr or stdout
	exist  []string // files that must exist afterwards
	absent []string // files that must not exist afterwards
	within time.Duration
}

func TestBadInputSuite(t *testing.T) {
	const gd = "--delta"
	run1 := func(extra ...string) []string {
		return append([]string{"run", "--data", "x128.npy", "--workload", "prefix", "--quiet", "--insecure-seed", "1"}, extra...)
	}
	mem := []string{"needs about", "of memory", "this machine has", "the largest n that fits"}
	cases := []badCase{
		// Resources: refused before allocating, in well under a second.
		{name: "solve n=100000", args: []string{"solve", "--workload", "prefix", "--n", "100000"}, code: 1, stderr: append(mem, "n = 100000"), within: time.Second},
		{name: "solve n=2^40", args: []string{"solve", "--workload", "prefix", "--n", "1099511627776"}, code: 1, stderr: mem, within: time.Second},
		{name: "compare n=100000", args: []string{"compare", "--workload", "prefix", "--n", "100000"}, code: 1, stderr: mem, within: time.Second},
		{name: "lrm n=100000", args: []string{"lrm", "--workload", "prefix", "--n", "100000"}, code: 1, stderr: mem, within: time.Second},
		{name: "sdp n=100000", args: []string{"sdp", "--workload", "prefix", "--n", "100000", "--solve"}, code: 1, stderr: mem, within: time.Second},
		{name: "wrange m=1e11", args: []string{"solve", "--workload", "wrange:m=100000000000", "--n", "1024"}, code: 1, stderr: []string{"needs about", "use a smaller m"}, within: time.Second},
		{name: "run wrange m=1e11", args: []string{"run", "--data", "x.npy", "--workload", "wrange:m=100000000000", "--eps", "1", gd, "1e-6", "--out", "o.npy"},
			code: 1, stderr: []string{"needs about", "use a smaller m"}, absent: []string{"o.npy"}, within: time.Second},
		{name: "memory limit override", args: []string{"solve", "--workload", "prefix", "--n", "2000"}, env: []string{"DPSOLVE_MEMORY_LIMIT=64MiB"}, code: 1, stderr: []string{"needs about", "DPSOLVE_MEMORY_LIMIT"}, within: time.Second},
		// Outputs checked before any work; inputs never overwritten.
		{name: "run out = data", args: run1("--eps", "1", gd, "1e-6", "--out", "x128.npy"), code: 2, stderr: []string{"--out x128.npy is also an input"}},
		{name: "run out = data via ./", args: run1("--eps", "1", gd, "1e-6", "--out", "./sub/../x128.npy"), code: 2, stderr: []string{"also an input"}},
		{name: "run out-a = out", args: run1("--eps", "1", gd, "1e-6", "--out", "o.npy", "--out-a", "o.npy"), code: 2, stderr: []string{"name the same file"}, absent: []string{"o.npy"}},
		{name: "solve out-a missing dir", args: []string{"solve", "--workload", "prefix", "--n", "2048", "--out-a", "missing_dir/A.npy"}, code: 2, stderr: []string{"missing_dir", "does not exist"}, not: []string{".tmp"}, within: time.Second},
		{name: "solve out-a bad extension", args: []string{"solve", "--workload", "prefix", "--n", "8", "--out-a", "A.mat"}, code: 2, stderr: []string{"A.mat"}, absent: []string{"A.mat"}},
		// The other commands' outputs and ranges.
		{name: "lrm out-b missing dir", args: []string{"lrm", "--workload", "prefix", "--n", "8", "--out-b", "missing_dir/B.npy"}, code: 2, stderr: []string{"does not exist"}},
		{name: "lrm eps 1e155", args: []string{"lrm", "--workload", "prefix", "--n", "8", "--eps", "1e155"}, code: 2, stderr: []string{"usable range"}},
		{name: "sdp export missing dir", args: []string{"sdp", "--workload", "prefix", "--n", "4", "--export", "missing_dir/p.dat-s"}, code: 2, stderr: []string{"does not exist"}},
		{name: "sdp export = out-x", args: []string{"sdp", "--workload", "prefix", "--n", "4", "--solve", "--export", "p.npy", "--out-x", "p.npy"}, code: 2, stderr: []string{"name the same file"}},
		{name: "funcpert out missing dir", args: []string{"funcpert", "--quick", "--out", "missing_dir/r.csv"}, code: 2, stderr: []string{"does not exist"}},
		{name: "answer out = strategy", args: []string{"answer", "--strategy", "A.npy", "--data", "x.npy", "--workload", "prefix", "--eps", "1", gd, "1e-6", "--out", "A.npy"}, code: 2, stderr: []string{"is also an input"}},
		{name: "compare empty strategy entry", args: []string{"compare", "--workload", "prefix", "--n", "8", "--strategies", "identity,,h2"}, code: 2, stderr: []string{"empty entry"}},
		{name: "bench csv missing dir", args: []string{"bench", "--n", "16", "--csv", "missing_dir/b.csv"}, code: 2, stderr: []string{"does not exist"}},
		{name: "bench n=100000", args: []string{"bench", "--n", "100000"}, code: 1, stderr: mem, within: time.Second},
		{name: "version bad flag", args: []string{"version", "--bogus"}, code: 2, stderr: []string{"bogus"}},
		// Parsers reject empty fields and trailing junk.
		{name: "dims 8xx8", args: []string{"solve", "--workload", "marginals:dims=8xx8"}, code: 2, stderr: []string{"empty attribute size"}},
		{name: "dims 8x", args: []string{"solve", "--workload", "marginals:dims=8x"}, code: 2, stderr: []string{"empty attribute size"}},
		{name: "trailing comma", args: []string{"solve", "--workload", "wrange:m=10,", "--n", "8"}, code: 2, stderr: []string{"bad parameter"}},
		{name: "junk in m", args: []string{"solve", "--workload", "wrange:m=10x", "--n", "8"}, code: 2, stderr: []string{"not an integer"}},
		// Counts.
		{name: "fractional counts", args: []string{"run", "--data", "xf.csv", "--workload", "prefix", "--eps", "1", gd, "1e-6", "--out", "o.npy", "--quiet"}, code: 1, stderr: []string{"not whole numbers", "--allow-fractional"}, absent: []string{"o.npy"}},
		{name: "fractional allowed", args: []string{"run", "--data", "xf.csv", "--workload", "prefix", "--eps", "1", gd, "1e-6", "--out", "o.npy", "--quiet", "--insecure-seed", "1", "--allow-fractional"}, code: 0, stderr: []string{"unit sensitivity"}, exist: []string{"o.npy"}},
		// Budget ranges and missing flags.
		{name: "run eps 1e6", args: run1("--eps", "1e6", gd, "1e-6", "--out", "o.npy"), code: 2, stderr: []string{"--eps 1e+06 is outside the usable range [1e-06, 10000]"}, absent: []string{"o.npy"}},
		{name: "run eps 1e155", args: run1("--eps", "1e155", gd, "1e-6", "--out", "o.npy"), code: 2, stderr: []string{"usable range"}, absent: []string{"o.npy"}},
		{name: "compare eps 1e155", args: []string{"compare", "--workload", "prefix", "--n", "16", "--eps", "1e155"}, code: 2, stderr: []string{"usable range"}},
		{name: "eps too large for the data", args: []string{"run", "--data", "vast.csv", "--workload", "prefix", "--quiet", "--eps", "1e4", gd, "1e-6", "--out", "o.npy"}, code: 1, stderr: []string{"too large for this data", "use --eps at most about"}, absent: []string{"o.npy"}},
		{name: "answer without eps", args: []string{"answer", "--strategy", "A.npy", "--data", "x.npy", "--workload", "prefix", gd, "1e-6", "--out", "o.npy"}, code: 2, stderr: []string{"--eps is missing"}, absent: []string{"o.npy"}},
		{name: "answer without delta", args: []string{"answer", "--strategy", "A.npy", "--data", "x.npy", "--workload", "prefix", "--eps", "1", "--out", "o.npy"}, code: 2, stderr: []string{"--delta is missing"}},
		{name: "zcdp without rho", args: []string{"answer", "--strategy", "A.npy", "--data", "x.npy", "--workload", "prefix", "--mechanism", "zcdp", "--out", "o.npy"}, code: 2, stderr: []string{"--rho is missing"}},
		{name: "classic eps 2", args: []string{"compare", "--workload", "prefix", "--n", "16", "--calibration", "classic", "--eps", "2"}, code: 2, stderr: []string{"classic", "analytic"}, not: []string{"GaussianSigma"}},
		// A zero workload column is a failure, not a row that says "error".
		{name: "compare zero column", args: []string{"compare", "--w", "wz.csv", "--quiet"}, code: 1, stderr: []string{"cell 1 is in no query"}},
		// Built-in generators cover every cell.
		{name: "wdiscrete covers", args: []string{"solve", "--workload", "wdiscrete:m=200", "--n", "256", "--quiet", "--max-iter", "1", "--out-w", "W.npy"}, code: 0, stdout: []string{"redrawn="}, not: []string{"drop it"}, exist: []string{"W.npy"}},
		// Mechanism mismatch. Identity's Laplace RMSE on prefix at ε = 1 has
		// the closed form √(2·Σᵢ(i+1)/n) = √(n+1) = 16.03 for n = 256; 26.6
		// is the Gaussian-optimized strategy's, as dpsolve compare reports it.
		{name: "answer laplace with gaussian strategy", args: []string{"answer", "--strategy", "A.npy", "--data", "x.npy", "--workload", "prefix", "--mechanism", "laplace", "--eps", "1", "--out", "o.npy", "--insecure-seed", "1"}, code: 0, stderr: []string{"warning: under Laplace noise this strategy's expected RMSE is 26.6", "Identity's is 16.03"}, exist: []string{"o.npy"}},
		{name: "run laplace picks identity", args: run1("--mechanism", "laplace", "--eps", "1", "--out", "o.npy"), code: 0, stderr: []string{"releasing with Identity"}, exist: []string{"o.npy"}},
		{name: "compare laplace reference", args: []string{"compare", "--workload", "prefix", "--n", "64", "--mechanism", "laplace", "--quiet", "--strategies", "identity,wavelet,optimized"}, code: 0, stdout: []string{"× best ε-DP"}},
		// yuan2016 regularizes every V; it must not blame a singular one.
		{name: "yuan2016 prefix", args: []string{"solve", "--method", "yuan2016", "--workload", "prefix", "--n", "32", "--quiet"}, code: 0, stdout: []string{"yuan2016 method always regularizes"}, not: []string{"V is singular"}},
		// Unconverged plans are not released unless asked.
		{name: "run unconverged", args: run1("--eps", "1", gd, "1e-6", "--out", "o.npy", "--max-iter", "2"), code: 1, stderr: []string{"nothing was released", "--allow-unconverged"}, absent: []string{"o.npy"}},
		{name: "run unconverged allowed", args: run1("--eps", "1", gd, "1e-6", "--out", "o.npy", "--max-iter", "2", "--allow-unconverged"), code: 0, exist: []string{"o.npy"}},
		// --out-w for a random workload: one row per answer.
		{name: "run out-w", args: []string{"run", "--data", "x128.npy", "--workload", "wrange:m=300", "--quiet", "--insecure-seed", "1", "--eps", "1", gd, "1e-6", "--out", "o.npy", "--out-w", "W.csv", "--max-iter", "2", "--allow-unconverged"}, code: 0, exist: []string{"o.npy", "W.csv"}},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			dir := cliFixture(t)
			require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
			before := hashes(t, dir)
			code, stdout, stderr, took := runBin(t, dir, c.env, c.args...)
			assert.Equal(t, c.code, code, "stderr: %s", stderr)
			for _, s := range c.stderr {
				assert.Contains(t, stderr, s)
			}
			for _, s := range c.stdout {
				assert.Contains(t, stdout, s)
			}
			for _, s := range append(append([]string{}, c.not...), runtimeNoise...) {
				assert.NotContains(t, stderr+stdout, s)
			}
			for _, f := range c.exist {
				assert.FileExists(t, filepath.Join(dir, f))
			}
			for _, f := range c.absent {
				assert.NoFileExists(t, filepath.Join(dir, f))
			}
			after := hashes(t, dir)
			for name, h := range before {
				assert.Equal(t, h, after[name], "input %s changed", name)
			}
			// Nothing but the declared outputs appears (no temp files left).
			for name := range after {
				if _, ok := before[name]; !ok {
					assert.Contains(t, c.exist, name, "unexpected file %s", name)
				}
			}
			if c.within > 0 {
				assert.Less(t, took, c.within, "took %v", took)
			}
		})
	}
}

// TestOutWMatchesAnswers: the W that --out-w writes is the one answered:
// with noise-free-in-expectation checking impossible, compare the answer
// count and the W·x̂ identity instead — answers = W·x̂ exactly, since the
// answers are post-processing of x̂.
func TestOutWMatchesAnswers(t *testing.T) {
	dir := cliFixture(t)
	code, _, stderr, _ := runBin(t, dir, nil, "run", "--data", "x128.npy", "--workload", "wdiscrete:m=100", "--quiet", "--insecure-seed", "4",
		"--eps", "1", "--delta", "1e-6", "--out", "o.npy", "--out-xhat", "xhat.npy", "--out-w", "W.npy", "--max-iter", "2", "--allow-unconverged")
	require.Equal(t, 0, code, stderr)
	w, err := matio.ReadMatrix(filepath.Join(dir, "W.npy"))
	require.NoError(t, err)
	ans, err := matio.ReadVector(filepath.Join(dir, "o.npy"))
	require.NoError(t, err)
	xhat, err := matio.ReadVector(filepath.Join(dir, "xhat.npy"))
	require.NoError(t, err)
	m, n := w.Dims()
	require.Equal(t, 100, m)
	require.Equal(t, 128, n)
	require.Len(t, ans, m)
	for i := 0; i < m; i++ {
		s := 0.0
		for j := 0; j < n; j++ {
			s += w.At(i, j) * xhat[j]
		}
		// ±1 sums of ≤ 256 doubles of magnitude ~10: rounding ≲ 1e-12.
		assert.InDelta(t, s, ans[i], 1e-9, "answer %d", i)
	}
	for j := 0; j < n; j++ {
		nz := false
		for i := 0; i < m && !nz; i++ {
			nz = w.At(i, j) != 0
		}
		assert.True(t, nz, "cell %d untouched", j)
	}
}
