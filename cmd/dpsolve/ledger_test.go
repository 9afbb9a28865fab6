package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpsolve/dpsolve/internal/testkit/budgettest"
	"github.com/dpsolve/dpsolve/privacy/ledger"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Before this file there was no command to read or start a ledger: a user
// wrote the JSON by hand and read it with a text editor.

func ledgerCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(append([]string{"ledger"}, args...), &o, &e)
	return code, o.String(), e.String()
}

func TestLedgerCreate(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "L.json")
	code, out, errOut := ledgerCLI(t, "create", p, "--rho", "1")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "created "+p+": limit rho=1, nothing spent\n", out)
	f, err := ledger.Read(p)
	require.NoError(t, err)
	assert.Equal(t, ledger.Limit{Rho: 1}, f.Limit)
	assert.Empty(t, f.Spent)
	_, err = ledger.Spend(p, budgettest.ZCDP(0.4), "a release")
	require.NoError(t, err, "a created ledger is one a release charges")

	// Never overwrites: exit 2, the file unchanged.
	before, _ := os.ReadFile(p)
	code, _, errOut = ledgerCLI(t, "create", p, "--rho", "5")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "already exists; a ledger is never overwritten")
	after, _ := os.ReadFile(p)
	assert.Equal(t, before, after)

	// (ε,δ) and pure ε limits, flags before or after FILE, --eps as release spells it.
	for args, want := range map[string]ledger.Limit{
		"--epsilon 1 --delta 1e-6 A.json": {Epsilon: 1, Delta: 1e-6},
		"B.json --eps 2":                  {Epsilon: 2},
		"C.json --epsilon 0.5 --json":     {Epsilon: 0.5},
	} {
		fields := strings.Fields(args)
		for i, a := range fields {
			if strings.HasSuffix(a, ".json") {
				fields[i] = filepath.Join(dir, a)
			}
		}
		code, out, errOut := ledgerCLI(t, append([]string{"create"}, fields...)...)
		require.Equal(t, 0, code, "%s: %s", args, errOut)
		name := fields[0]
		if !strings.HasSuffix(name, ".json") {
			name = fields[len(fields)-1]
		}
		f, err := ledger.Read(name)
		require.NoError(t, err, args)
		assert.Equal(t, want, f.Limit, args)
		if strings.Contains(args, "--json") {
			var j ledgerJSON
			require.NoError(t, json.Unmarshal([]byte(out), &j), out)
			assert.Equal(t, map[string]float64{"epsilon": 0.5, "delta": 0}, j.Limit)
			assert.Equal(t, "epsilon", j.Unit)
		}
	}

	// Bad command lines: exit 2, nothing written.
	for _, args := range [][]string{
		{"create", filepath.Join(dir, "x.json")},
		{"create", filepath.Join(dir, "x.json"), "--rho", "1", "--epsilon", "1"},
		{"create", filepath.Join(dir, "x.json"), "--delta", "1e-6"},
		{"create", filepath.Join(dir, "x.json"), "--rho", "-1"},
		{"create", filepath.Join(dir, "x.json"), "--rho", "0"},
		{"create", filepath.Join(dir, "x.json"), "--rho", "NaN"},
		{"create", filepath.Join(dir, "x.json"), "--epsilon", "1", "--delta", "1"},
		{"create", filepath.Join(dir, "x.json"), "--epsilon", "1", "--eps", "1"},
		{"create", filepath.Join(dir, "x.json"), filepath.Join(dir, "y.json"), "--rho", "1"},
		{"create", filepath.Join(dir, "missing", "x.json"), "--rho", "1"},
		{"create", "--rho", "1"},
		{"show"},
		{},
		{"delete", "x.json"},
	} {
		code, _, _ := ledgerCLI(t, args...)
		assert.Equal(t, 2, code, "%v", args)
	}
	_, err = os.Stat(filepath.Join(dir, "x.json"))
	assert.True(t, os.IsNotExist(err))
}

// showLedger writes a ledger of three releases in ρ = 1: ρ = 0.25, pure
// ε = 0.5 (ε²/2 = 0.125 in ρ) written by hand without charged_rho, and a
// ρ = 0.1 charged by Spend.
func showLedger(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "L.json")
	require.NoError(t, os.WriteFile(p, []byte(`{"limit": {"rho": 1}, "spent": [
	  {"time": "2026-12-01T09:00:00Z", "label": "tables v1", "kind": "zcdp", "rho": 0.25, "charged_rho": 0.25},
	  {"time": "2026-12-02T10:00:00Z", "label": "by hand", "kind": "pure", "epsilon": 0.5}]}`), 0o644))
	_, err := ledger.Spend(p, budgettest.ZCDP(0.1), "tables\tv2")
	require.NoError(t, err)
	return p
}

func TestLedgerShowText(t *testing.T) {
	p := showLedger(t)
	code, out, errOut := ledgerCLI(t, "show", p)
	require.Equal(t, 0, code, errOut)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 9, out)
	assert.Equal(t, "ledger     "+p, lines[0])
	assert.Equal(t, "limit      rho=1", lines[1])
	// 0.25 + 0.125 + 0.1 = 0.475; 1 − 0.475 = 0.525.
	assert.Equal(t, "spent      rho=0.475 over 3 release(s)", lines[2])
	assert.Equal(t, "remaining  rho=0.525", lines[3])
	assert.Equal(t, "", lines[4])
	assert.Regexp(t, `^#\s+time\s+budget\s+charged\s+label$`, lines[5])
	assert.Regexp(t, `^1\s+2026-12-01T09:00:00Z\s+rho=0\.25\s+rho=0\.25\s+tables v1$`, lines[6])
	assert.Regexp(t, `^2\s+2026-12-02T10:00:00Z\s+eps=0\.5\s+rho=0\.125\s+by hand$`, lines[7])
	assert.Regexp(t, `^3\s+\d{4}-\d\d-\d\dT\S+Z\s+rho=0\.1\s+rho=0\.1\s+"tables\\tv2"$`, lines[8], "a tab in a label is quoted")

	// A ρ ledger with nothing spent says ρ, never "eps=0".
	q := filepath.Join(t.TempDir(), "new.json")
	require.Equal(t, 0, run([]string{"ledger", "create", q, "--rho", "0.5"}, &bytes.Buffer{}, &bytes.Buffer{}))
	_, out, _ = ledgerCLI(t, "show", q)
	assert.Contains(t, out, "spent      rho=0 over 0 release(s)\nremaining  rho=0.5\n")
	assert.NotContains(t, out, "eps")
}

func TestLedgerShowJSON(t *testing.T) {
	p := showLedger(t)
	code, out, errOut := ledgerCLI(t, "show", "--json", p)
	require.Equal(t, 0, code, errOut)
	var j map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &j), out)
	assert.Equal(t, p, j["file"])
	assert.Equal(t, "rho", j["unit"])
	assert.Equal(t, map[string]any{"rho": 1.0}, j["limit"])
	spent := j["spent"].(map[string]any)["rho"].(float64)
	assert.InDelta(t, 0.475, spent, 1e-15)
	assert.InDelta(t, 0.525, j["remaining"].(map[string]any)["rho"].(float64), 1e-15)
	assert.Equal(t, false, j["over_limit"])
	assert.Equal(t, 3.0, j["releases"])
	entries := j["entries"].([]any)
	require.Len(t, entries, 3)
	assert.Equal(t, map[string]any{"index": 1.0, "time": "2026-12-01T09:00:00Z", "label": "tables v1", "kind": "zcdp",
		"budget": map[string]any{"rho": 0.25}, "charged": map[string]any{"rho": 0.25}}, entries[0])
	assert.Equal(t, map[string]any{"index": 2.0, "time": "2026-12-02T10:00:00Z", "label": "by hand", "kind": "pure",
		"budget": map[string]any{"epsilon": 0.5}, "charged": map[string]any{"rho": 0.125}}, entries[1])
	e3 := entries[2].(map[string]any)
	assert.Equal(t, "tables\tv2", e3["label"])
	assert.NotEmpty(t, e3["time"])

	// An (ε,δ) ledger states both components everywhere.
	q := filepath.Join(t.TempDir(), "A.json")
	require.Equal(t, 0, run([]string{"ledger", "create", q, "--epsilon", "1", "--delta", "1e-6"}, &bytes.Buffer{}, &bytes.Buffer{}))
	_, err := ledger.Spend(q, budgettest.ApproxDP(0.25, 1e-7), "x")
	require.NoError(t, err)
	_, out, _ = ledgerCLI(t, "show", q, "--json")
	var a ledgerJSON
	require.NoError(t, json.Unmarshal([]byte(out), &a))
	assert.Equal(t, "epsilon_delta", a.Unit)
	assert.Equal(t, map[string]float64{"epsilon": 0.25, "delta": 1e-7}, a.Spent)
	assert.Equal(t, map[string]float64{"epsilon": 0.75, "delta": 9e-7}, a.Remaining)
}

// TestLedgerShowRefusals: an invalid ledger is refused with the entry
// named; a missing one points at ledger create; an overspent (hand-written)
// one is shown with nothing remaining.
func TestLedgerShowRefusals(t *testing.T) {
	dir := t.TempDir()
	dup := filepath.Join(dir, "dup.json")
	require.NoError(t, os.WriteFile(dup, []byte(`{"limit": {"rho": 1}, "spent": [{"time": "t", "label": "x", "kind": "zcdp", "rho": 0.9, "rho": 0.1}]}`), 0o644))
	code, _, errOut := ledgerCLI(t, "show", dup)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, `entry 1 (label "x") has the member "rho" twice`)

	code, _, errOut = ledgerCLI(t, "show", filepath.Join(dir, "none.json"))
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "dpsolve ledger create")

	over := filepath.Join(dir, "over.json")
	require.NoError(t, os.WriteFile(over, []byte(`{"limit": {"rho": 1}, "spent": [{"time": "t", "kind": "zcdp", "rho": 1.5}]}`), 0o644))
	code, out, errOut := ledgerCLI(t, "show", over)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "remaining  rho=0 (the recorded releases spend more than the limit)")
	_, out, _ = ledgerCLI(t, "show", over, "--json")
	var j ledgerJSON
	require.NoError(t, json.Unmarshal([]byte(out), &j))
	assert.True(t, j.OverLimit)
	assert.Equal(t, map[string]float64{"rho": 0}, j.Remaining)
}
