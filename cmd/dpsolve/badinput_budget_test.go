package main

// The release's budget and ordering cases, from the CLI on the Adult
// records: one ledger whatever names it, everything that can refuse
// refused before the charge, the plan's privacy model checked against the
// budget, infeasible releases refused in seconds (with and without
// --dry-run), and the smaller items (--quiet, FIFOs, binary input,
// fractional counts, a killed run's leftovers, batch {out}, units). Each
// test says what the command did before (on the commit that introduced
// these tests' fixes; run the suite with DPSOLVE_TEST_BIN=an older build
// to see those cases fail).

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/internal/matio"
	"github.com/dpsolve/dpsolve/internal/testkit/budgettest"
	"github.com/dpsolve/dpsolve/privacy/ledger"
)

// adultCSV returns the integer-coded Adult records shipped in the
// repository (examples/adult/data/coded); a missing file fails the test.
func adultCSV(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "examples", "adult", "data", "coded", "adult.csv"))
	require.NoError(t, err)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("the Adult data shipped in the repository is missing: %v", err)
	}
	return p
}

// adultSpec is six Adult attributes, all 2-way marginals and the
// cumulative age distribution.
const adultSpec = `{"domain": [{"name": "age", "size": 85}, {"name": "workclass", "size": 9}, {"name": "education-num", "size": 16},
  {"name": "marital-status", "size": 7}, {"name": "race", "size": 5}, {"name": "sex", "size": 2}],
 "workload": [{"name": "m2", "marginals": {"k": 2}}, {"name": "cum_age", "product": {"age": "prefix"}}]}`

// budgetFixture is a directory with spec.json (adultSpec), adult.csv (a
// symbolic link to the records) and L.json, a ledger of ρ = 1.
func budgetFixture(t *testing.T) string {
	t.Helper()
	data := adultCSV(t)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "spec.json"), []byte(adultSpec), 0o644))
	require.NoError(t, os.Symlink(data, filepath.Join(dir, "adult.csv")))
	marg := strings.Replace(adultSpec, `, {"name": "cum_age", "product": {"age": "prefix"}}`, "", 1)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "m.json"), []byte(marg), 0o644))
	require.NoError(t, ledger.Create(filepath.Join(dir, "L.json"), budgettest.ZCDP(1)))
	return dir
}

// relArgs is a kron release of the fixture at ρ = rho charged to ledger.
func relArgs(rho, ledgerPath, out string, extra ...string) []string {
	return append([]string{"release", "--spec", "spec.json", "--data", "adult.csv", "--template", "kron",
		"--rho", rho, "--budget-file", ledgerPath, "--out", out, "--insecure-seed", "7"}, extra...)
}

func readLedger(t *testing.T, path string) *ledger.File {
	t.Helper()
	f, err := ledger.Read(path)
	require.NoError(t, err)
	return f
}

// Before: the write renamed a new file over the link, so the two names
// became two ledgers and both releases succeeded (1.2 of 1 spent).
func TestBudgetSymlinkedLedgerIsOneLedger(t *testing.T) {
	dir := budgetFixture(t)
	require.NoError(t, os.Symlink("L.json", filepath.Join(dir, "link.json")))
	code, _, stderr, _ := runBin(t, dir, nil, relArgs("0.6", "link.json", "o1")...)
	require.Equal(t, 0, code, stderr)
	code, _, stderr, _ = runBin(t, dir, nil, relArgs("0.6", "L.json", "o2")...)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "budget exceeded")
	assert.NoDirExists(t, filepath.Join(dir, "o2"))
	fi, err := os.Lstat(filepath.Join(dir, "link.json"))
	require.NoError(t, err)
	assert.Equal(t, os.ModeSymlink, fi.Mode().Type(), "the link is still a link")
	assert.Len(t, readLedger(t, filepath.Join(dir, "L.json")).Spent, 1)
}

// Before: a hard link forked the ledger like a symbolic link did.
func TestBudgetHardLinkedLedgerRefused(t *testing.T) {
	dir := budgetFixture(t)
	require.NoError(t, os.Link(filepath.Join(dir, "L.json"), filepath.Join(dir, "hard.json")))
	before, _ := os.ReadFile(filepath.Join(dir, "L.json"))
	for _, dry := range [][]string{nil, {"--dry-run"}} {
		code, _, stderr, took := runBin(t, dir, nil, relArgs("0.1", "hard.json", "o", dry...)...)
		assert.Equal(t, 1, code, "dry run %v", dry)
		assert.Contains(t, stderr, "has 2 hard links")
		assert.Less(t, took, 10*time.Second)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "L.json"))
	assert.Equal(t, before, after)
	assert.NoDirExists(t, filepath.Join(dir, "o"))
}

// Before: the first charge left the ledger 0600 (CreateTemp's mode).
func TestBudgetLedgerKeepsMode(t *testing.T) {
	dir := budgetFixture(t)
	p := filepath.Join(dir, "L.json")
	require.NoError(t, os.Chmod(p, 0o664))
	code, _, stderr, _ := runBin(t, dir, nil, relArgs("0.1", "L.json", "o")...)
	require.Equal(t, 0, code, stderr)
	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o664), fi.Mode().Perm())
}

// Two releases at once through two names of one ledger: exactly one of
// two 0.6 charges fits ρ = 1. Before: both succeeded (two ledgers, two
// lock files).
func TestBudgetConcurrentReleasesThroughTwoNames(t *testing.T) {
	dir := budgetFixture(t)
	require.NoError(t, os.Symlink(filepath.Join(dir, "L.json"), filepath.Join(dir, "link.json")))
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i, name := range []string{"L.json", "link.json"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(needBinary(t), relArgs("0.6", name, fmt.Sprintf("o%d", i))...)
			cmd.Dir = dir
			err := cmd.Run()
			if ee, ok := err.(*exec.ExitError); ok {
				codes[i] = ee.ExitCode()
			} else if err != nil {
				codes[i] = -1
			}
		}()
	}
	wg.Wait()
	assert.ElementsMatch(t, []int{0, 1}, codes, "one release succeeds, one is refused")
	f := readLedger(t, filepath.Join(dir, "L.json"))
	assert.Len(t, f.Spent, 1)
	assert.LessOrEqual(t, f.Total().Rho, 1.0)
}

// Everything that can refuse does so before the charge: the ledger is
// byte-for-byte unchanged and nothing is written. Before: a symlinked
// --out passed the check, the budget was charged, then the rename failed;
// counts of 1e300 were refused "too large for the grid" after the charge;
// a Gaussian plan was accepted for pure ε (L1 sensitivity 182.4, 824×
// the error of a pure plan); a 10¹⁸-cell kron release planned for minutes
// before refusing; fractional counts were accepted.
func TestBudgetRefusedBeforeTheCharge(t *testing.T) {
	dir := budgetFixture(t)
	require.NoError(t, os.Mkdir(filepath.Join(dir, "target"), 0o755))
	require.NoError(t, os.Symlink("target", filepath.Join(dir, "outlink")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "file"), []byte("x\n"), 0o644))
	// Histograms over the 6 attributes (85·9·16·7·5·2 = 856800 cells).
	huge := make([]float64, 856800)
	frac := make([]float64, 856800)
	for i := range huge {
		huge[i] = 1e300
		frac[i] = 0.5
	}
	require.NoError(t, matio.WriteVector(filepath.Join(dir, "huge.npy"), huge))
	require.NoError(t, matio.WriteVector(filepath.Join(dir, "frac.npy"), frac))
	code, _, stderr, _ := runBin(t, dir, nil, "plan", "--spec", "spec.json", "--template", "kron", "--out", "gplan", "--quiet")
	require.Equal(t, 0, code, stderr)
	code, _, stderr, _ = runBin(t, dir, nil, "plan", "--spec", "spec.json", "--template", "kron", "--privacy", "pure", "--out", "pplan", "--quiet")
	require.Equal(t, 0, code, stderr)
	big := `{"domain": [` + strings.TrimSuffix(strings.Repeat(`{"name": "aN", "size": 1000},`, 6), ",") + `], "workload": [{"name": "m", "marginals": {"k": 2}}, {"name": "p", "product": {"a0": "prefix"}}]}`
	for i := 0; i < 6; i++ {
		big = strings.Replace(big, `"aN"`, fmt.Sprintf(`"a%d"`, i), 1)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big.json"), []byte(big), 0o644))
	base := func(extra ...string) []string {
		return append([]string{"release", "--spec", "spec.json", "--budget-file", "L.json", "--insecure-seed", "1"}, extra...)
	}
	cases := []struct {
		name   string
		args   []string
		code   int
		stderr []string
		within time.Duration
	}{
		{"out symlink", base("--data", "adult.csv", "--template", "kron", "--rho", "0.1", "--out", "outlink"), 2, []string{"--out outlink is a symbolic link"}, 2 * time.Second},
		{"out a file", base("--data", "adult.csv", "--template", "kron", "--rho", "0.1", "--out", "file"), 2, []string{"--out file exists and is not a directory"}, 2 * time.Second},
		{"counts beyond the grid", base("--data", "huge.npy", "--plan", "gplan", "--rho", "0.1", "--out", "o"), 1, []string{"too large for the noise grid"}, 0},
		{"counts beyond the grid, marginals plan", []string{"release", "--spec", "m.json", "--budget-file", "L.json", "--data", "huge.npy", "--template", "marginals", "--rho", "0.1", "--out", "o"}, 1, []string{"too large for the noise grid"}, 0},
		{"counts beyond the grid, pure marginals plan", []string{"release", "--spec", "m.json", "--budget-file", "L.json", "--data", "huge.npy", "--template", "marginals", "--eps", "1", "--out", "o"}, 1, []string{"too large for the noise grid"}, 0},
		{"fractional counts", base("--data", "frac.npy", "--plan", "gplan", "--rho", "0.1", "--out", "o"), 1, []string{"not whole numbers", "--allow-fractional"}, 0},
		{"gaussian plan, pure budget", base("--data", "adult.csv", "--plan", "gplan", "--eps", "1", "--out", "o"), 1,
			[]string{"--plan gplan was planned for --privacy gaussian", "pure ε-DP budget", "dpsolve plan --spec spec.json --template kron --privacy pure"}, 5 * time.Second},
		{"pure plan, rho budget", base("--data", "adult.csv", "--plan", "pplan", "--rho", "0.1", "--out", "o"), 1,
			[]string{"--plan pplan was planned for --privacy pure", "ρ-zCDP budget", "--privacy gaussian"}, 5 * time.Second},
		// No ledger here: a ρ ledger refuses an (ε,δ) charge by itself.
		{"pure plan, (eps, delta) budget", []string{"release", "--spec", "spec.json", "--data", "adult.csv", "--plan", "pplan", "--eps", "1", "--delta", "1e-6", "--out", "o", "--insecure-seed", "1"}, 1,
			[]string{"(ε,δ)-DP budget", "--privacy gaussian"}, 5 * time.Second},
		{"10^18 cells, kron", []string{"release", "--spec", "big.json", "--data", "adult.csv", "--template", "kron", "--rho", "0.1", "--budget-file", "L.json", "--out", "o"}, 1,
			[]string{"1e+18", "cells", "needs at least", "EiB", "is available"}, 5 * time.Second},
		{"10^18 cells, kron, dry run", []string{"release", "--spec", "big.json", "--template", "kron", "--rho", "0.1", "--budget-file", "L.json", "--dry-run"}, 1,
			[]string{"1e+18", "needs at least"}, 5 * time.Second},
		{"10^18 cells, best, dry run", []string{"release", "--spec", "big.json", "--rho", "0.1", "--dry-run"}, 1,
			[]string{"needs at least"}, 5 * time.Second},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			before, _ := os.ReadFile(filepath.Join(dir, "L.json"))
			code, _, stderr, took := runBinWithin(t, dir, time.Minute, c.args...)
			assert.Equal(t, c.code, code, "stderr: %s", stderr)
			for _, s := range c.stderr {
				assert.Contains(t, stderr, s)
			}
			assert.NotContains(t, stderr, "charged")
			after, _ := os.ReadFile(filepath.Join(dir, "L.json"))
			assert.Equal(t, string(before), string(after), "the ledger is unchanged")
			assert.NoDirExists(t, filepath.Join(dir, "o"))
			entries, _ := os.ReadDir(filepath.Join(dir, "target"))
			assert.Empty(t, entries, "nothing written through the link")
			if c.within > 0 {
				assert.Less(t, took, c.within)
			}
			// The next case starts clean even if this one released.
			require.NoError(t, os.RemoveAll(filepath.Join(dir, "o")))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "L.json"), before, 0o644))
		})
	}
	// --allow-fractional is the rule of dpsolve run.
	code, _, stderr, _ = runBin(t, dir, nil, "release", "--spec", "spec.json", "--data", "frac.npy", "--plan", "gplan", "--rho", "0.1", "--out", "of", "--allow-fractional", "--insecure-seed", "1", "--quiet")
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "not whole numbers (--allow-fractional)")
}

// Before: "the domain's cell count overflows" for every template; the
// marginals template never needs the count.
func TestBudgetDomainsBeyondAnInt(t *testing.T) {
	dir := t.TempDir()
	var d100, d30 []string
	for i := 0; i < 100; i++ {
		d100 = append(d100, fmt.Sprintf(`{"name": "b%d", "size": 2}`, i))
	}
	for i := 0; i < 30; i++ {
		d30 = append(d30, fmt.Sprintf(`{"name": "a%d", "size": 10}`, i))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "s100.json"), []byte(`{"domain": [`+strings.Join(d100, ",")+`], "workload": [{"name": "m", "marginals": {"k": 2}}]}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "s30.json"), []byte(`{"domain": [`+strings.Join(d30, ",")+`], "workload": [{"name": "m", "marginals": {"k": 2}}]}`), 0o644))
	// Records: 50 rows of each.
	for _, c := range []struct {
		name  string
		attrs int
		size  int
	}{{"r100.csv", 100, 2}, {"r30.csv", 30, 10}} {
		var sb strings.Builder
		for i := 0; i < c.attrs; i++ {
			if i > 0 {
				sb.WriteByte(',')
			}
			if c.size == 2 {
				fmt.Fprintf(&sb, "b%d", i)
			} else {
				fmt.Fprintf(&sb, "a%d", i)
			}
		}
		sb.WriteByte('\n')
		for r := 0; r < 50; r++ {
			for i := 0; i < c.attrs; i++ {
				if i > 0 {
					sb.WriteByte(',')
				}
				fmt.Fprintf(&sb, "%d", (r*7+i*3)%c.size)
			}
			sb.WriteByte('\n')
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, c.name), []byte(sb.String()), 0o644))
	}
	for _, c := range []struct{ spec, data, cells string }{{"s100.json", "r100.csv", "1.268e+30"}, {"s30.json", "r30.csv", "1e+30"}} {
		code, stdout, stderr, _ := runBin(t, dir, nil, "plan", "--spec", c.spec, "--template", "marginals", "--quiet", "--json")
		require.Equal(t, 0, code, "%s: %s", c.spec, stderr)
		var pj map[string]any
		require.NoError(t, json.Unmarshal([]byte(stdout), &pj))
		assert.Equal(t, "marginals", pj["template"])
		out := "o_" + c.spec
		code, stdout, stderr, _ = runBin(t, dir, nil, "release", "--spec", c.spec, "--data", c.data, "--rho", "1", "--out", out, "--insecure-seed", "1", "--quiet")
		require.Equal(t, 0, code, "%s: %s", c.spec, stderr)
		assert.Contains(t, stderr, "planning with the marginals template only", "best falls back to marginals")
		assert.Contains(t, stdout, c.cells)
		assert.FileExists(t, filepath.Join(dir, out, "answers.csv"))
	}
}

// Before: release had no --quiet flag (usage error).
func TestBudgetReleaseQuiet(t *testing.T) {
	dir := budgetFixture(t)
	code, _, stderr, _ := runBin(t, dir, nil, "release", "--spec", "spec.json", "--data", "adult.csv", "--template", "kron", "--rho", "0.5", "--out", "o", "--insecure-seed", "1", "--quiet")
	require.Equal(t, 0, code, stderr)
	assert.NotContains(t, stderr, "dpsolve release: plan")
	assert.NotContains(t, stderr, "records")
	for _, cmd := range []string{"answer", "bench", "funcpert", "version", "run", "solve", "plan", "batch", "sdp", "lrm", "compare", "mf"} {
		if _, ok := commands[cmd]; !ok {
			continue
		}
		_, stdout, stderr, _ := runBin(t, dir, nil, cmd, "-h")
		assert.Contains(t, stdout+stderr, "-quiet", "dpsolve %s takes --quiet", cmd)
	}
}

// Before: a FIFO as --data (or as a spec's matrix block) hung the
// command; a binary --data echoed 2 KB of raw bytes.
func TestBudgetNonRegularAndBinaryInputs(t *testing.T) {
	dir := budgetFixture(t)
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "fifo.csv"), 0o644))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "fifo.npy"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "mspec.json"), []byte(`{"domain": [{"name": "a", "size": 3}], "workload": [{"name": "t", "product": {"a": {"matrix": "fifo.npy"}}}]}`), 0o644))
	bin := make([]byte, 4096)
	for i := range bin {
		bin[i] = []byte{0, 0xff, 1, 'a', 0x1b}[i%5]
	}
	copy(bin, "age,workclass\x00\xff,")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bin.csv"), bin, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "esc.json"), []byte(`{"domain": [{"name": "a\u001b[31mRED", "size": 2}], "workload": [{"name": "t", "product": {"b": "identity"}}]}`), 0o644))
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"fifo data", []string{"release", "--spec", "spec.json", "--data", "fifo.csv", "--template", "kron", "--rho", "0.1", "--out", "o"}, "fifo.csv is a named pipe"},
		{"fifo spec", []string{"release", "--spec", "fifo.csv", "--data", "adult.csv", "--rho", "0.1", "--out", "o"}, "named pipe"},
		{"fifo matrix block", []string{"plan", "--spec", "mspec.json"}, "named pipe"},
		{"escape sequence in a spec name", []string{"plan", "--spec", "esc.json"}, "names must be printable"},
		{"binary data", []string{"release", "--spec", "spec.json", "--data", "bin.csv", "--template", "kron", "--rho", "0.1", "--out", "o"}, "bin.csv"},
	} {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			code, stdout, stderr, took := runBinWithin(t, dir, 20*time.Second, c.args...)
			assert.Equal(t, 1, code, stderr)
			assert.Contains(t, stderr, c.want)
			assert.Less(t, took, 10*time.Second, "refused at once, not after a read that never ends")
			for _, b := range stdout + stderr {
				assert.True(t, b == '\n' || b >= ' ' && b != 0x7f, "non-printable %q in the message", b)
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			assert.Less(t, len(lines[len(lines)-1]), 400, "at most ~80 bytes of the file are echoed: %s", lines[len(lines)-1])
		})
	}
}

// Before: kill -9 during the final write left .OUT.tmp-* forever. A stale
// one (its process gone) is removed by the next release to that output.
func TestBudgetStaleOutputRemoved(t *testing.T) {
	dir := budgetFixture(t)
	dead := exec.Command("true")
	require.NoError(t, dead.Run())
	stale := filepath.Join(dir, fmt.Sprintf(".o.tmp-%d-123", dead.Process.Pid))
	require.NoError(t, os.Mkdir(stale, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(stale, "answers.csv"), []byte("noisy\n"), 0o644))
	code, _, stderr, _ := runBin(t, dir, nil, relArgs("0.1", "L.json", "o")...)
	require.Equal(t, 0, code, stderr)
	assert.NoDirExists(t, stale)
	assert.Contains(t, stderr, "removed "+filepath.Base(stale))
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		assert.NotContains(t, e.Name(), ".tmp-", "no temporary directory left")
	}
}

// Before: {out}/../.. expanded as given and the job wrote outside its folder.
func TestBudgetBatchOutConfined(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "m.jsonl"),
		[]byte(`{"id": "a", "command": "solve", "args": ["--workload", "prefix", "--n", "8", "--quiet", "--out-a", "{out}/../../escaped.npy"]}`+"\n"), 0o644))
	code, _, stderr, _ := runBin(t, dir, nil, "batch", "--manifest", "m.jsonl", "--out", "b")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "outside the job's folder")
	assert.NoFileExists(t, filepath.Join(dir, "escaped.npy"))
	assert.NoFileExists(t, filepath.Join(filepath.Dir(dir), "escaped.npy"))
}

// Before: a pure ε release charged to a ρ ledger said "charged eps=1 …
// spent rho=0.5 of rho=1" without saying that eps=1 is rho=0.5 there.
func TestBudgetMessagesStateTheUnit(t *testing.T) {
	dir := budgetFixture(t)
	code, _, stderr, _ := runBin(t, dir, nil, "release", "--spec", "spec.json", "--data", "adult.csv", "--template", "kron",
		"--eps", "1", "--budget-file", "L.json", "--out", "o", "--insecure-seed", "1")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "charged eps=1 (rho=0.5 in this ledger's unit) to L.json")
	code, _, stderr, _ = runBin(t, dir, nil, "release", "--spec", "spec.json", "--data", "adult.csv", "--template", "kron",
		"--eps", "1.1", "--budget-file", "L.json", "--out", "o2", "--insecure-seed", "1")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "costs eps=1.1, that is rho=0.605 in this ledger's unit")
}

// runBinWithin is runBin that kills the command after limit (exit -1), so
// a command that would hang fails the test instead of timing it out.
func runBinWithin(t *testing.T, dir string, limit time.Duration, args ...string) (int, string, string, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	return runBinContext(t, ctx, dir, nil, args...)
}
