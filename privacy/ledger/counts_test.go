package ledger

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dpsolve/dpsolve/internal/testkit/budgettest"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Before this file's fixes the ledger summed the charged_* members as
// written: an entry without them (written by hand or by another tool)
// counted as free, one whose charged_* disagreed with its own budget
// counted what the charged_* said, an (ε,δ) entry in a ρ ledger counted
// nothing, and a repeated member silently kept its last value.

// writeLedger writes content to a new file and returns its path.
func writeLedger(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "L.json")
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

// TestHandWrittenEntriesCount: an entry without charged_* is charged what
// its budget costs in the ledger's unit (ρ itself; ε²/2 for pure ε in a ρ
// ledger, Bun & Steinke 2016 Prop. 1.4; (ε, δ) in an (ε,δ) ledger).
func TestHandWrittenEntriesCount(t *testing.T) {
	// The case: 0.9 of ρ = 1 written by hand, then a release of 0.3.
	p := writeLedger(t, `{"limit": {"rho": 1}, "spent": [{"time": "t", "label": "by hand", "kind": "zcdp", "rho": 0.9}]}`)
	f, err := Read(p)
	require.NoError(t, err)
	assert.Equal(t, 0.9, f.Total().Rho)
	assert.Equal(t, 0.9, f.Spent[0].ChargedRho, "the charge is set from the budget")
	before, _ := os.ReadFile(p)
	_, err = Spend(p, budgettest.ZCDP(0.3), "more")
	require.ErrorIs(t, err, ErrExceeded)
	assert.Contains(t, err.Error(), "rho=0.9 of the limit rho=1 is already spent over 1 release(s)")
	after, _ := os.ReadFile(p)
	assert.Equal(t, before, after)
	st, err := Spend(p, budgettest.ZCDP(0.1), "fits")
	require.NoError(t, err)
	assert.InDelta(t, 1.0, st.Spent.Rho, 1e-15)

	// Pure ε = 0.6 in a ρ ledger: 0.6²/2 = 0.18.
	p = writeLedger(t, `{"limit": {"rho": 0.2}, "spent": [{"time": "t", "kind": "pure", "epsilon": 0.6}]}`)
	f, err = Read(p)
	require.NoError(t, err)
	assert.InDelta(t, 0.18, f.Total().Rho, 1e-16)
	_, err = Check(p, budgettest.ZCDP(0.05))
	require.ErrorIs(t, err, ErrExceeded)

	// An (ε,δ) ledger: (0.5, 1e-7) and a pure 0.25 → (0.75, 1e-7).
	p = writeLedger(t, `{"limit": {"epsilon": 1, "delta": 1e-6}, "spent": [
	  {"time": "t", "kind": "approx", "epsilon": 0.5, "delta": 1e-7},
	  {"time": "t", "kind": "pure", "epsilon": 0.25}]}`)
	f, err = Read(p)
	require.NoError(t, err)
	assert.Equal(t, Limit{Epsilon: 0.75, Delta: 1e-7}, f.Total())
}

// TestChargedMustAgree: a recorded charge that disagrees with the entry's
// budget makes the ledger invalid, named by entry and label; a hand-written
// decimal within the tolerance agrees.
func TestChargedMustAgree(t *testing.T) {
	for name, c := range map[string]struct{ ledger, want string }{
		"rho undercounted": {`{"limit": {"rho": 1}, "spent": [{"time": "t", "label": "a", "kind": "zcdp", "rho": 0.25, "charged_rho": 0.25},
			{"time": "t", "label": "tables v2", "kind": "zcdp", "rho": 0.9, "charged_rho": 0.1}]}`,
			`entry 2 (label "tables v2"): records charged_rho 0.1, but its budget rho=0.9 (zCDP) costs rho=0.9`},
		"pure in rho, charged eps": {`{"limit": {"rho": 1}, "spent": [{"time": "t", "kind": "pure", "epsilon": 1, "charged_epsilon": 1}]}`,
			`entry 1 (no label): records charged_epsilon 1, but its budget eps=1 (pure DP) costs rho=0.5`},
		"explicit zero": {`{"limit": {"rho": 1}, "spent": [{"time": "t", "label": "z", "kind": "zcdp", "rho": 0.5, "charged_rho": 0}]}`,
			`entry 1 (label "z"): records charged_rho 0`},
		"delta undercounted": {`{"limit": {"epsilon": 1, "delta": 1e-6}, "spent": [{"time": "t", "kind": "approx", "epsilon": 0.5, "delta": 1e-7, "charged_epsilon": 0.5, "charged_delta": 1e-8}]}`,
			`records charged_delta 1e-08, but its budget eps=0.5, delta=1e-07 costs eps=0.5, delta=1e-07`},
		"approx in rho": {`{"limit": {"rho": 1}, "spent": [{"time": "t", "label": "other tool", "kind": "approx", "epsilon": 0.5, "delta": 1e-7}]}`,
			`entry 1 (label "other tool"): its budget eps=0.5, delta=1e-07 cannot be counted in this ledger (limit rho=1): an (epsilon, delta) release cannot be charged to a rho ledger`},
		"zcdp in approx": {`{"limit": {"epsilon": 1, "delta": 1e-6}, "spent": [{"time": "t", "kind": "zcdp", "rho": 0.1}]}`,
			`entry 1 (no label): its budget rho=0.1 (zCDP) cannot be counted in this ledger`},
		"no budget": {`{"limit": {"rho": 1}, "spent": [{"time": "t", "label": "empty"}]}`,
			`entry 1 (label "empty"): records no budget`},
		"charge only": {`{"limit": {"rho": 1}, "spent": [{"time": "t", "charged_rho": 0.5}]}`,
			`entry 1 (no label): records no budget`},
		"bad budget": {`{"limit": {"rho": 1}, "spent": [{"time": "t", "label": "neg", "kind": "zcdp", "rho": -1}]}`,
			`entry 1 (label "neg"): rho must be positive`},
	} {
		p := writeLedger(t, c.ledger)
		_, err := Read(p)
		require.ErrorIs(t, err, ErrInput, name)
		assert.Contains(t, err.Error(), c.want, name)
		assert.True(t, strings.HasPrefix(err.Error(), "ledger: invalid input: "+p+": "), "%s: %v", name, err)
		before, _ := os.ReadFile(p)
		_, err = Spend(p, budgettest.ZCDP(0.01), "x")
		require.ErrorIs(t, err, ErrInput, name)
		assert.NotErrorIs(t, err, ErrExceeded, name)
		after, _ := os.ReadFile(p)
		assert.Equal(t, before, after, name)
	}
	// 0.1²/2 is 0.005000000000000001 in binary: the decimal 0.005 agrees.
	p := writeLedger(t, `{"limit": {"rho": 1}, "spent": [{"time": "t", "kind": "pure", "epsilon": 0.1, "charged_rho": 0.005}]}`)
	f, err := Read(p)
	require.NoError(t, err)
	eps := 0.1 // a variable: the constant expression 0.1*0.1/2 would be exact
	assert.Equal(t, eps*eps/2, f.Total().Rho, "the computed charge is summed, not the recorded one")
	assert.NotEqual(t, 0.005, f.Total().Rho)
}

// TestDuplicateMembers: a repeated member anywhere makes the ledger
// invalid (encoding/json would keep the last one), compared ignoring case
// as encoding/json matches members to fields.
func TestDuplicateMembers(t *testing.T) {
	entry := `{"time": "t", "label": "first", "kind": "zcdp", "rho": 0.5, "charged_rho": 0.5}`
	for name, c := range map[string]struct{ ledger, want string }{
		"entry budget": {`{"limit": {"rho": 1}, "spent": [` + entry + `, {"time": "t", "label": "dup", "kind": "zcdp", "rho": 0.9, "rho": 0.1}]}`,
			`entry 2 (label "dup") has the member "rho" twice`},
		"entry charge": {`{"limit": {"rho": 1}, "spent": [{"time": "t", "kind": "zcdp", "rho": 0.5, "charged_rho": 0.5, "charged_rho": 0.5}]}`,
			`entry 1 (no label) has the member "charged_rho" twice`},
		"entry case": {`{"limit": {"rho": 1}, "spent": [{"time": "t", "label": "c", "kind": "zcdp", "rho": 0.5, "Label": "d"}]}`,
			`has the member "Label" twice`},
		"limit":       {`{"limit": {"rho": 0.5, "rho": 5}, "spent": []}`, `the limit has the member "rho" twice`},
		"spent twice": {`{"limit": {"rho": 1}, "spent": [` + entry + `], "spent": []}`, `the member "spent" appears twice`},
		"limit twice": {`{"limit": {"rho": 1}, "spent": [], "limit": {"rho": 9}}`, `the member "limit" appears twice`},
		"escaped":     {`{"limit": {"rho": 1, "r\u0068o": 2}, "spent": []}`, `the limit has the member "rho" twice`},
	} {
		p := writeLedger(t, c.ledger)
		_, err := Read(p)
		require.ErrorIs(t, err, ErrInput, name)
		assert.Contains(t, err.Error(), c.want, name)
		_, err = Check(p, budgettest.ZCDP(0.01))
		assert.ErrorIs(t, err, ErrInput, name)
	}
	// The duplicate search itself, on nested values.
	assert.Equal(t, "a.[1].b", duplicatePath([]byte(`{"a": [{"b": 1}, {"b": 1, "c": 2, "b": 3}]}`)))
	assert.Equal(t, "", duplicatePath([]byte(`{"a": [{"b": 1}, {"b": 1}], "b": {"a": 1}}`)))
}

// TestRhoLedgerMessage: a refusal in a ρ ledger states ρ (before: "eps=0
// … already spent" when nothing was spent yet), and every refusal states
// the limit, the spend and what remains in the ledger's unit.
func TestRhoLedgerMessage(t *testing.T) {
	p := newLedger(t, budgettest.ZCDP(0.5))
	_, err := Spend(p, budgettest.ZCDP(0.6), "x")
	require.ErrorIs(t, err, ErrExceeded)
	assert.Contains(t, err.Error(), "this release costs rho=0.6 but rho=0 of the limit rho=0.5 is already spent over 0 release(s) and rho=0.5 remains; nothing was released")
	assert.NotContains(t, err.Error(), "eps")

	_, err = Spend(p, budgettest.ZCDP(0.2), "x")
	require.NoError(t, err)
	_, err = Check(p, budgettest.PureDP(1))
	require.ErrorIs(t, err, ErrExceeded)
	assert.Contains(t, err.Error(), "costs eps=1, that is rho=0.5 in this ledger's unit but rho=0.2 of the limit rho=0.5 is already spent over 1 release(s) and rho=0.3 remains")

	q := newLedger(t, budgettest.ApproxDP(1, 1e-6))
	_, err = Spend(q, budgettest.ApproxDP(0.9, 9e-7), "x")
	require.NoError(t, err)
	_, err = Spend(q, budgettest.ApproxDP(0.05, 2e-7), "x")
	require.ErrorIs(t, err, ErrExceeded)
	assert.Contains(t, err.Error(), "costs eps=0.05, delta=2e-07 but eps=0.9, delta=9e-07 of the limit eps=1, delta=1e-06 is already spent over 1 release(s) and eps=0.1, delta=1e-07 remains")

	// A pure ε ledger: δ is not shown unless something spent one.
	r := newLedger(t, budgettest.PureDP(1))
	_, err = Spend(r, budgettest.PureDP(1.5), "x")
	assert.Contains(t, err.Error(), "but eps=0 of the limit eps=1 is already spent over 0 release(s) and eps=1 remains")

	// A hand-written ledger over its limit: nothing remains, never a
	// negative amount.
	o := writeLedger(t, `{"limit": {"rho": 1}, "spent": [{"time": "t", "kind": "zcdp", "rho": 1.5}]}`)
	_, err = Spend(o, budgettest.ZCDP(0.01), "x")
	require.ErrorIs(t, err, ErrExceeded)
	assert.Contains(t, err.Error(), "rho=1.5 of the limit rho=1 is already spent over 1 release(s) and rho=0 remains")
}

func TestStatusAndIn(t *testing.T) {
	rho, pure, approx := Limit{Rho: 1}, Limit{Epsilon: 2}, Limit{Epsilon: 1, Delta: 1e-6}
	assert.Equal(t, "rho=0", Limit{}.In(rho))
	assert.Equal(t, "eps=0", Limit{}.In(pure))
	assert.Equal(t, "eps=0, delta=0", Limit{}.In(approx))
	assert.Equal(t, "eps=0.5, delta=1e-07", Limit{Epsilon: 0.5, Delta: 1e-7}.In(pure), "a δ spent in a pure ledger is shown")
	f := File{Limit: approx, Spent: []Entry{{Budget: budgettest.ApproxDP(0.25, 1e-7), ChargedEpsilon: 0.25, ChargedDelta: 1e-7}}}
	st := f.Status()
	assert.Equal(t, Status{Limit: approx, Spent: Limit{Epsilon: 0.25, Delta: 1e-7}, Remaining: Limit{Epsilon: 0.75, Delta: 9e-7}, Releases: 1}, st)
	assert.Equal(t, "limit eps=1, delta=1e-06, spent eps=0.25, delta=1e-07 over 1 release(s), eps=0.75, delta=9e-07 remains", st.String())
	over := Status{Limit: rho, Spent: Limit{Rho: 2}, Remaining: Limit{Rho: -1}}
	assert.Equal(t, Limit{}, over.Left())
}

// TestTotalsMatchBudgets: ledgers written by Spend with random charges of
// every kind read back with the total an independent sum of the budgets'
// costs gives (ρ + ε²/2 in a ρ ledger; Σε, Σδ in an (ε,δ) ledger), and the
// recorded charges agree with the computed ones.
func TestTotalsMatchBudgets(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 20; trial++ {
		inRho := trial%2 == 0
		var l calibrate.Budget
		if inRho {
			l = budgettest.ZCDP(1e6)
		} else {
			l = budgettest.ApproxDP(1e6, 0.5)
		}
		p := newLedger(t, l)
		var want Limit
		for k := 0; k < 1+rng.IntN(6); k++ {
			v := 0.01 + rng.Float64()
			var b calibrate.Budget
			switch {
			case rng.IntN(2) == 0:
				b = budgettest.PureDP(v)
				if inRho {
					want.Rho += v * v / 2
				} else {
					want.Epsilon += v
				}
			case inRho:
				b = budgettest.ZCDP(v)
				want.Rho += v
			default:
				d := 1e-9 * (1 + rng.Float64())
				b = budgettest.ApproxDP(v, d)
				want.Epsilon += v
				want.Delta += d
			}
			_, err := Spend(p, b, "r")
			require.NoError(t, err)
		}
		f, err := Read(p)
		require.NoError(t, err)
		got := f.Total()
		// Sums of the same terms in the same order: equal to rounding.
		assert.InDelta(t, want.Rho, got.Rho, 1e-12*(1+want.Rho), "trial %d", trial)
		assert.InDelta(t, want.Epsilon, got.Epsilon, 1e-12*(1+want.Epsilon), "trial %d", trial)
		assert.InDelta(t, want.Delta, got.Delta, 1e-20, "trial %d", trial)
	}
}

// TestReadRefusesNonRegular: Read of a FIFO (before: blocked until a
// writer came) or a device is refused at once.
func TestReadRefusesNonRegular(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo.json")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	done := make(chan error, 1)
	go func() { _, err := Read(fifo); done <- err }()
	select {
	case err := <-done:
		require.ErrorIs(t, err, ErrInput)
		assert.Contains(t, err.Error(), "not a regular file")
	case <-time.After(5 * time.Second):
		t.Fatal("Read of a FIFO blocked")
	}
	_, err := Read("/dev/zero")
	require.ErrorIs(t, err, ErrInput)
}
