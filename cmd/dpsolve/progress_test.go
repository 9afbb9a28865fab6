package main

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/internal/matio"
)

// Every command that runs a long computation prints its progress through
// the one renderer (progressTo): "dpsolve CMD: STAGE  …" lines ending with
// the stage's final "done" line, and none under --quiet.
func TestEveryCommandReportsProgressTheSameWay(t *testing.T) {
	dir, spec, data, planDir := relFixture(t)
	x := filepath.Join(dir, "x.npy")
	require.NoError(t, matio.WriteVector(x, []float64{3, 1, 4, 1, 5, 9, 2, 6}))
	_, haveCSDP := exec.LookPath("csdp")
	cases := []struct {
		cmd, stage string
		args       []string
		quiet      bool // the command has --quiet
	}{
		{"solve", "newton", []string{"--workload", "prefix", "--n", "64"}, true},
		{"solve", "yuan2016", []string{"--workload", "prefix", "--n", "16", "--method", "yuan2016"}, true},
		{"run", "newton", []string{"--workload", "allrange", "--data", x, "--eps", "1", "--delta", "1e-6", "--insecure-seed", "1",
			"--out", filepath.Join(dir, "run.npy")}, true},
		{"compare", "newton", []string{"--workload", "prefix", "--n", "32", "--strategies", "identity,optimized"}, true},
		{"lrm", "lrm", []string{"--workload", "prefix", "--n", "16", "--eps", "1", "--start", "svd"}, true},
		{"plan", "plan", []string{"--spec", spec}, true},
		{"release", "records", []string{"--spec", spec, "--data", data, "--plan", planDir, "--eps", "1", "--delta", "1e-6",
			"--insecure-seed", "1", "--out", filepath.Join(dir, "rel")}, false},
		{"release", "plan kron", []string{"--spec", spec, "--data", data, "--template", "kron", "--eps", "1", "--delta", "1e-6",
			"--insecure-seed", "1", "--out", filepath.Join(dir, "rel2")}, false},
		{"funcpert", "funcpert", []string{"--quick", "--reps", "1", "--eps-points", "2", "--coeffs", "15", "--message-rounds", "20",
			"--out", filepath.Join(dir, "f.csv")}, false},
		{"sdp", "csdp", []string{"--workload", "prefix", "--n", "4", "--form", "approx", "--solve"}, true},
	}
	for _, c := range cases {
		t.Run(c.cmd+" "+c.stage, func(t *testing.T) {
			if c.stage == "csdp" && haveCSDP != nil {
				t.Skip("csdp not on PATH")
			}
			code, _, stderr := runCLI(t, append([]string{c.cmd}, c.args...)...)
			require.Equal(t, 0, code, stderr)
			prefix := "dpsolve " + c.cmd + ": " + c.stage
			assert.Contains(t, stderr, prefix+"  ", "progress lines")
			assert.Regexp(t, regexp.MustCompile(`(?m)^`+regexp.QuoteMeta(prefix)+`  done  .* s`), stderr, "the final line")
			if c.quiet {
				code, _, stderr = runCLI(t, append([]string{c.cmd, "--quiet"}, c.args...)...)
				require.Equal(t, 0, code, stderr)
				assert.NotContains(t, stderr, "  done  ", "--quiet prints no progress")
			}
		})
	}
}

// A long command (30 Yuan et al. iterations, about 1.3 s on the
// development machine) shows its progress while it runs, rate-limited: the
// first iteration's line, then at most one line per progressInterval, then
// the final line.
func TestLongCommandProgressIsRateLimited(t *testing.T) {
	code, _, stderr := runCLI(t, "solve", "--workload", "prefix", "--n", "256", "--method", "yuan2016")
	require.Equal(t, 0, code, stderr)
	steps := regexp.MustCompile(`(?m)^dpsolve solve: yuan2016  step (\d+)  .*  ([0-9.]+) s$`).FindAllStringSubmatch(stderr, -1)
	done := regexp.MustCompile(`(?m)^dpsolve solve: yuan2016  done  step 30  .*  ([0-9.]+) s  \w+$`).FindStringSubmatch(stderr)
	require.NotEmpty(t, steps, stderr)
	require.NotNil(t, done, stderr)
	assert.Equal(t, "1", steps[0][1], "the first iteration is shown at once")
	total, err := strconv.ParseFloat(done[1], 64)
	require.NoError(t, err)
	// Each line after the first needs a full interval since the one before.
	maxLines := 1 + int(total/progressInterval.Seconds())
	assert.LessOrEqual(t, len(steps), maxLines, "%d step lines in %.3f s:\n%s", len(steps), total, stderr)
	assert.Less(t, len(steps), 30, "not one line per iteration")
	for i := 1; i < len(steps); i++ {
		a, _ := strconv.ParseFloat(steps[i-1][2], 64)
		b, _ := strconv.ParseFloat(steps[i][2], 64)
		// The printed times are the solver's; the interval is measured
		// when printing, a little later: allow 50 ms for that.
		assert.GreaterOrEqual(t, b-a, progressInterval.Seconds()-0.05, "lines %d and %d", i, i+1)
	}
	assert.False(t, strings.Contains(stderr, "step 31"))
}
