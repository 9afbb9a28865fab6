package ledger_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dpsolve/dpsolve/mechanism/calibrate"
	"github.com/dpsolve/dpsolve/mechanism/ledger"
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
