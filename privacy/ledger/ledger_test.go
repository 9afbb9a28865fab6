package ledger

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/dpsolve/dpsolve/internal/testkit/budgettest"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain doubles as a child process for the multi-process test: with
// LEDGER_CHILD_PATH set it makes one Spend and exits 0 (spent), 3
// (refused) or 1 (other error).
func TestMain(m *testing.M) {
	if p := os.Getenv("LEDGER_CHILD_PATH"); p != "" {
		rho, _ := strconv.ParseFloat(os.Getenv("LEDGER_CHILD_RHO"), 64)
		_, err := Spend(p, budgettest.ZCDP(rho), "child "+strconv.Itoa(os.Getpid()))
		switch {
		case err == nil:
			os.Exit(0)
		case errors.Is(err, ErrExceeded):
			os.Exit(3)
		}
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func newLedger(t *testing.T, l calibrate.Budget) string {
	p := filepath.Join(t.TempDir(), "budget.json")
	require.NoError(t, Create(p, l))
	return p
}

func TestSpendComposesAndRefuses(t *testing.T) {
	p := newLedger(t, budgettest.ZCDP(1))
	st, err := Spend(p, budgettest.ZCDP(0.5), "first")
	require.NoError(t, err)
	assert.Equal(t, 0.5, st.Spent.Rho)
	// Pure ε = 0.8 costs ε²/2 = 0.32 in ρ.
	st, err = Spend(p, budgettest.PureDP(0.8), "second")
	require.NoError(t, err)
	assert.InDelta(t, 0.82, st.Spent.Rho, 1e-15)
	assert.InDelta(t, 0.18, st.Remaining.Rho, 1e-15)
	before, _ := os.ReadFile(p)
	_, err = Check(p, budgettest.ZCDP(0.2))
	require.ErrorIs(t, err, ErrExceeded)
	_, err = Spend(p, budgettest.ZCDP(0.2), "third")
	require.ErrorIs(t, err, ErrExceeded)
	require.ErrorIs(t, err, ErrInput)
	assert.Contains(t, err.Error(), "costs rho=0.2 but rho=0.82 of the limit rho=1 is already spent over 2 release(s)")
	after, _ := os.ReadFile(p)
	assert.Equal(t, before, after, "a refused spend writes nothing")
	f, err := Read(p)
	require.NoError(t, err)
	require.Len(t, f.Spent, 2)
	assert.Equal(t, "second", f.Spent[1].Label)
	assert.Equal(t, 0.8, f.Spent[1].Budget.Epsilon())
	// An exact fit (0.18 left, within the 1e-12 slack) is accepted.
	_, err = Spend(p, budgettest.ZCDP(0.18), "last")
	require.NoError(t, err)
}

func TestApproxLedger(t *testing.T) {
	p := newLedger(t, budgettest.ApproxDP(1, 1e-6))
	for i := 0; i < 3; i++ {
		_, err := Spend(p, budgettest.ApproxDP(0.3, 3e-7), "")
		require.NoError(t, err, "release %d", i)
	}
	// ε: 0.9 + 0.1 = 1 fits, but δ: 9e-7 + 2e-7 > 1e-6 does not.
	_, err := Spend(p, budgettest.ApproxDP(0.1, 2e-7), "")
	assert.ErrorIs(t, err, ErrExceeded)
	st, err := Spend(p, budgettest.PureDP(0.1), "")
	require.NoError(t, err, "pure ε costs (ε, 0)")
	assert.InDelta(t, 1.0, st.Spent.Epsilon, 1e-15)
	_, err = Spend(p, budgettest.ZCDP(0.01), "")
	assert.ErrorIs(t, err, ErrInput)
	assert.Contains(t, err.Error(), "without choosing a delta")
	q := newLedger(t, budgettest.ZCDP(1))
	_, err = Spend(q, budgettest.ApproxDP(0.1, 1e-9), "")
	assert.ErrorContains(t, err, "implies no zCDP bound")
}

func TestBadLedgers(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"notjson": "{", "nolimit": `{"spent": []}`, "both": `{"limit": {"rho": 1, "epsilon": 1}}`,
		"negative": `{"limit": {"rho": -1}}`, "unknown": `{"limit": {"rho": 1}, "extra": 1}`,
		"badentry": `{"limit": {"rho": 1}, "spent": [{"time": "", "kind": "zcdp", "charged_rho": -1}]}`,
		"trailing": `{"limit": {"rho": 1}} {}`, "delta1": `{"limit": {"epsilon": 1, "delta": 1}}`,
	} {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		_, err := Spend(p, budgettest.ZCDP(0.1), "")
		assert.ErrorIs(t, err, ErrInput, name)
	}
	_, err := Spend(filepath.Join(dir, "missing.json"), budgettest.ZCDP(0.1), "")
	assert.ErrorIs(t, err, ErrInput)
	assert.Contains(t, err.Error(), "does not exist")
	p := newLedger(t, budgettest.ZCDP(1))
	assert.ErrorIs(t, Create(p, budgettest.ZCDP(1)), ErrInput, "Create never overwrites")
	// A bad budget cannot be built (calibrate's tests); the zero Budget,
	// "no budget", is refused.
	_, err = Spend(p, calibrate.Budget{}, "")
	assert.ErrorIs(t, err, ErrInput)
}

func TestConcurrentGoroutines(t *testing.T) {
	// 24 goroutines each try to spend 0.1 of ρ = 1: exactly 10 succeed.
	p := newLedger(t, budgettest.ZCDP(1))
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, refused := 0, 0
	for i := 0; i < 24; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := Spend(p, budgettest.ZCDP(0.1), "")
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				ok++
			} else if errors.Is(err, ErrExceeded) {
				refused++
			} else {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, 10, ok)
	assert.Equal(t, 14, refused)
	f, err := Read(p)
	require.NoError(t, err)
	assert.Len(t, f.Spent, 10)
	assert.LessOrEqual(t, f.Total().Rho, 1+1e-12)
}

// spendInChildren starts one child process of this test binary per path,
// all at once, each spending rho (LEDGER_CHILD_PATH, LEDGER_CHILD_RHO; see
// TestMain), and counts those that succeeded and those refused (exit 3);
// any other failure fails the test.
func spendInChildren(t *testing.T, paths []string, rho string) (ok, refused int) {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmds := make([]*exec.Cmd, len(paths))
	for i, p := range paths {
		cmds[i] = exec.Command(exe, "-test.run", "^$")
		cmds[i].Env = append(os.Environ(), "LEDGER_CHILD_PATH="+p, "LEDGER_CHILD_RHO="+rho)
		cmds[i].Stderr = os.Stderr
		require.NoError(t, cmds[i].Start())
	}
	for _, c := range cmds {
		err := c.Wait()
		var ee *exec.ExitError
		switch {
		case err == nil:
			ok++
		case errors.As(err, &ee) && ee.ExitCode() == 3:
			refused++
		default:
			t.Errorf("child failed: %v", err)
		}
	}
	return ok, refused
}

func TestConcurrentProcesses(t *testing.T) {
	// 8 processes each try to spend 0.3 of ρ = 1: exactly 3 succeed.
	if testing.Short() {
		t.Skip("starts 8 processes")
	}
	p := newLedger(t, budgettest.ZCDP(1))
	ok, refused := spendInChildren(t, []string{p, p, p, p, p, p, p, p}, "0.3")
	assert.Equal(t, 3, ok)
	assert.Equal(t, 5, refused)
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	var f File
	require.NoError(t, json.Unmarshal(b, &f))
	assert.Len(t, f.Spent, 3)
	assert.InDelta(t, 0.9, f.Total().Rho, 1e-15)
}

// TestFileFormatKept: a ledger written before charges were calibrate.Budget
// values (the package doc's example, byte for byte) still reads, and a new
// entry is written in the same fields, with calibrate.Kind's names.
func TestFileFormatKept(t *testing.T) {
	p := filepath.Join(t.TempDir(), "old.json")
	old := `{"limit": {"rho": 1},
 "spent": [{"time": "2026-12-01T09:00:00Z", "label": "tables v1", "kind": "zcdp", "rho": 0.25, "charged_rho": 0.25}]}`
	require.NoError(t, os.WriteFile(p, []byte(old), 0o644))
	st, err := Spend(p, budgettest.PureDP(0.5), "pure")
	require.NoError(t, err)
	assert.InDelta(t, 0.375, st.Spent.Rho, 1e-15, "0.25 + 0.5²/2")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	var raw struct {
		Limit map[string]float64
		Spent []map[string]any
	}
	require.NoError(t, json.Unmarshal(b, &raw))
	assert.Equal(t, map[string]float64{"rho": 1}, raw.Limit)
	require.Len(t, raw.Spent, 2)
	assert.Equal(t, map[string]any{"time": "2026-12-01T09:00:00Z", "label": "tables v1", "kind": "zcdp", "rho": 0.25, "charged_rho": 0.25}, raw.Spent[0])
	delete(raw.Spent[1], "time")
	assert.Equal(t, map[string]any{"label": "pure", "kind": "pure", "epsilon": 0.5, "charged_rho": 0.125}, raw.Spent[1])

	q := newLedger(t, budgettest.ApproxDP(1, 1e-6))
	_, err = Spend(q, budgettest.ApproxDP(0.5, 1e-7), "approx")
	require.NoError(t, err)
	f, err := Read(q)
	require.NoError(t, err)
	assert.Equal(t, Entry{Time: f.Spent[0].Time, Label: "approx", Budget: budgettest.ApproxDP(0.5, 1e-7), ChargedEpsilon: 0.5, ChargedDelta: 1e-7}, f.Spent[0])

	// Create writes each kind of limit in the format above.
	for b, want := range map[calibrate.Budget]string{
		budgettest.ZCDP(0.5): `{"rho":0.5}`, budgettest.PureDP(2): `{"epsilon":2}`, budgettest.ApproxDP(1, 1e-6): `{"delta":0.000001,"epsilon":1}`,
	} {
		r := newLedger(t, b)
		var raw struct{ Limit json.RawMessage }
		bs, err := os.ReadFile(r)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(bs, &raw))
		var m map[string]float64
		require.NoError(t, json.Unmarshal(raw.Limit, &m))
		canon, _ := json.Marshal(m)
		assert.Equal(t, want, string(canon), "%v", b)
	}
}

// An entry is written in the file's member order (time, label, kind, the
// budget, the charge) and read back with its budget validated: a budget
// calibrate refuses, a kind that disagrees with the budget, or an unknown
// member make the ledger invalid instead of being read as some budget.
func TestEntryEncoding(t *testing.T) {
	e := Entry{Time: "t", Label: "l", Budget: budgettest.ApproxDP(0.5, 1e-7), ChargedEpsilon: 0.5, ChargedDelta: 1e-7}
	b, err := json.Marshal(e)
	require.NoError(t, err)
	assert.Equal(t, `{"time":"t","label":"l","kind":"approx","epsilon":0.5,"delta":1e-7,"charged_epsilon":0.5,"charged_delta":1e-7}`, string(b))
	var back Entry
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, e, back)
	dir := t.TempDir()
	for name, entry := range map[string]string{
		"invalid budget": `{"time": "t", "kind": "zcdp", "rho": -1, "charged_rho": 0.1}`,
		"kind mismatch":  `{"time": "t", "kind": "pure", "rho": 0.1, "charged_rho": 0.1}`,
		"two kinds":      `{"time": "t", "kind": "zcdp", "rho": 0.1, "epsilon": 1, "charged_rho": 0.1}`,
		"unknown member": `{"time": "t", "kind": "zcdp", "rho": 0.1, "charged_rho": 0.1, "extra": 1}`,
	} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".json")
		require.NoError(t, os.WriteFile(p, []byte(`{"limit": {"rho": 1}, "spent": [`+entry+`]}`), 0o644))
		_, err := Read(p)
		assert.ErrorIs(t, err, ErrInput, name)
	}
}
