package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/dpsolve/dpsolve/internal/resources"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Before: "dpsolve solve at n = 100000 needs about 745 GiB of memory, but
// this machine has 1 GiB (DPSOLVE_MEMORY_LIMIT); …" — with a need below
// the machine's figure the refusal read as a contradiction, since neither
// the usable share (85%) nor the override was stated. Every command's
// refusal now states both, and the value it suggests for the override is
// one that lets the same check pass.
func TestMemoryRefusalExplainsItself(t *testing.T) {
	t.Setenv(resources.EnvLimit, "1GiB")
	for name, check := range map[string]func() error{
		"solve": func() error {
			return checkSpecMemory("solve", workload.Source{Spec: "prefix", N: 20000}, memSolve, false, false)
		},
		"sdp solve": func() error { return checkSDPSolveMemory(100) },
	} {
		err := check()
		require.Error(t, err, name)
		msg := err.Error()
		assert.Contains(t, msg, "needs about", name)
		assert.Contains(t, msg, "but only 870 MiB is available to it: 85% of the 1 GiB limit set by DPSOLVE_MEMORY_LIMIT, the rest left for the Go runtime", name)
		assert.Contains(t, msg, "the largest n that fits is about", name)
		m := regexp.MustCompile(`set DPSOLVE_MEMORY_LIMIT \(this needs DPSOLVE_MEMORY_LIMIT=(\S+) or more`).FindStringSubmatch(msg)
		require.NotNil(t, m, "%s: %s", name, msg)
		// The suggested limit admits the problem; 1% less does not.
		t.Setenv(resources.EnvLimit, m[1])
		assert.NoError(t, check(), "%s with %s=%s", name, resources.EnvLimit, m[1])
		b, err := resources.ParseBytes(m[1])
		require.NoError(t, err)
		t.Setenv(resources.EnvLimit, resources.FormatBytes(0.99*b))
		assert.Error(t, check(), name)
		t.Setenv(resources.EnvLimit, "1GiB")
	}
	// The CLI prints it as is (exit 1, before any work).
	code, _, stderr := runCLI(t, "solve", "--workload", "prefix", "--n", "20000")
	assert.Equal(t, 1, code)
	assert.Regexp(t, `^dpsolve solve: dpsolve solve at n = 20000 needs about 29\.9 GiB of memory, but only 870 MiB is available to it: 85% of the 1 GiB limit set by DPSOLVE_MEMORY_LIMIT, .*; the largest n that fits is about \d+; to plan for another limit set DPSOLVE_MEMORY_LIMIT \(this needs DPSOLVE_MEMORY_LIMIT=35\.2GiB or more, if that much memory is free\)\n$`, stderr)
}

// TestReleaseMemoryRefusalsActionable: the release's two memory refusals
// (the histogram a full-domain template needs, then the release's own
// estimate) are worded the same way, and following each one's suggested
// DPSOLVE_MEMORY_LIMIT leads to a dry run that passes. Before, both said
// "… but only 1.0 MiB (DPSOLVE_MEMORY_LIMIT) is available" with no value.
func TestReleaseMemoryRefusalsActionable(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "mid.json")
	require.NoError(t, os.WriteFile(spec, []byte(`{"domain": [{"name": "a", "size": 100}, {"name": "b", "size": 100}, {"name": "c", "size": 100}],
	  "workload": [{"product": {"a": "prefix", "b": "identity", "c": "identity"}}]}`), 0o644))
	suggestion := regexp.MustCompile(`; to plan for another limit set DPSOLVE_MEMORY_LIMIT \(this needs DPSOLVE_MEMORY_LIMIT=(\S+) or more, if that much memory is free\)\n$`)
	limit := "1MiB"
	var seen []string
	for i := 0; i < 3; i++ {
		t.Setenv(resources.EnvLimit, limit)
		code, _, stderr := runCLI(t, "release", "--spec", spec, "--template", "kron", "--rho", "0.1", "--dry-run", "--quiet")
		if code == 0 {
			break
		}
		require.Equal(t, 1, code, stderr)
		assert.Contains(t, stderr, "is available to it: the "+resources.FormatBytes(mustParseBytes(t, limit))+" limit set by DPSOLVE_MEMORY_LIMIT")
		m := suggestion.FindStringSubmatch(stderr)
		require.NotNil(t, m, stderr)
		seen = append(seen, stderr)
		limit = m[1]
	}
	require.Len(t, seen, 2, "the histogram's refusal, then the release's estimate")
	assert.Contains(t, seen[0], "needs at least 22.9 MiB of memory") // 24 bytes · 10⁶ cells
	assert.Contains(t, seen[1], "this release (data, measurements and answers) needs about")
	code, _, stderr := runCLI(t, "release", "--spec", spec, "--template", "kron", "--rho", "0.1", "--dry-run", "--quiet")
	assert.Equal(t, 0, code, stderr)
}

func mustParseBytes(t *testing.T, s string) float64 {
	b, err := resources.ParseBytes(s)
	require.NoError(t, err)
	return b
}
