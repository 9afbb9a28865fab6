package ledger_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/ledger"
)

func Example() {
	dir, _ := os.MkdirTemp("", "ledger")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "adult-budget.json")

	// The data owner sets a total of ρ = 1 once.
	total, _ := calibrate.ZCDP(1)
	_ = ledger.Create(path, total)

	// Each release charges the ledger before drawing any noise.
	release, _ := calibrate.ZCDP(0.6)
	st, err := ledger.Spend(path, release, "2-way marginals")
	fmt.Println(st.Spent, err)
	_, err = ledger.Spend(path, release, "again")
	fmt.Println(errors.Is(err, ledger.ErrExceeded))
	// Output:
	// rho=0.6 <nil>
	// true
}

// An entry counts what its budget costs in the ledger's unit, whether or
// not it records the charge: here a pure ε = 1 release written by another
// tool costs ε²/2 = 0.5 of the ρ limit. Status states the limit, the spend
// and what remains in that unit.
func ExampleFile_Status() {
	dir, _ := os.MkdirTemp("", "ledger")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "budget.json")
	_ = os.WriteFile(path, []byte(`{"limit": {"rho": 1}, "spent": [
	  {"time": "2026-12-01T09:00:00Z", "label": "by another tool", "kind": "pure", "epsilon": 1}]}`), 0o644)
	f, err := ledger.Read(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(f.Status())
	fmt.Println(f.Spent[0].Label, "charged", ledger.Limit{Rho: f.Spent[0].ChargedRho}.In(f.Limit))
	// Output:
	// limit rho=1, spent rho=0.5 over 1 release(s), rho=0.5 remains
	// by another tool charged rho=0.5
}
