package main

import (
	"strings"
	"testing"
)

// TestNoiseFlagOneParser: compare and lrm read --mechanism through
// calibrate.ParseNoiseKind, so both reject an unknown noise with the same
// usage line (exit 2), and both accept the names in any case, as the
// parser does, and report them in the canonical spelling.
func TestNoiseFlagOneParser(t *testing.T) {
	const want = `--mechanism must be laplace or gaussian, got "uniform"`
	for _, args := range [][]string{
		{"compare", "--workload", "prefix", "--n", "8", "--mechanism", "uniform", "--eps", "1"},
		{"lrm", "--workload", "prefix", "--n", "8", "--mechanism", "uniform", "--eps", "1"},
	} {
		code, _, errOut := runCLI(t, args...)
		if code != 2 || !strings.Contains(errOut, want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and %q", args[0], code, errOut, want)
		}
	}
	code, out, errOut := runCLI(t, "compare", "--workload", "prefix", "--n", "8", "--mechanism", "LAPLACE",
		"--eps", "1", "--strategies", "identity", "--json", "--quiet")
	if code != 0 || !strings.Contains(out, `"mechanism": "laplace"`) && !strings.Contains(out, `"mechanism":"laplace"`) {
		t.Errorf("compare --mechanism LAPLACE: exit %d, stdout %q, stderr %q; want the laplace noise", code, out, errOut)
	}
}
