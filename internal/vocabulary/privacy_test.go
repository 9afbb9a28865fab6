package vocabulary

import (
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strings"
	"testing"
)

// budgetHome is where a privacy budget is spelled: calibrate.Budget (ρ-zCDP,
// pure ε-DP or (ε,δ)-DP).
const budgetHome = "mechanism/calibrate"

// budgetExceptions are the exported structs outside budgetHome that hold
// ρ or (ε, δ) fields and are not a second budget type, each with why.
var budgetExceptions = map[string]string{
	"mechanism/ledger.Limit": "an amount in a ledger's unit, not a release's budget: the limit as the ledger " +
		"file stores it ({\"rho\": R} or {\"epsilon\": E, \"delta\": D}) and the running sums Spent and Remaining, " +
		"which may be zero; the limit a ledger is created with and what a release costs enter as calibrate.Budget",
	"mechanism/ledger.Entry": "one line of the ledger file: its kind/epsilon/delta/rho fields are the charged " +
		"calibrate.Budget in the file format existing ledgers are written in, so they keep reading",
}

// secondBudgets returns "dir.Type" for every exported struct type of src (a
// non-test Go file of package directory dir) with a float64 field named Rho,
// or with both an Epsilon (or Eps) and a Delta float64 field: a restatement
// of calibrate.Budget. budgetHome is skipped.
func secondBudgets(dir, file string, src []byte) ([]string, error) {
	if dir == budgetHome {
		return nil, nil
	}
	f, err := parser.ParseFile(token.NewFileSet(), file, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		sp, ok := n.(*ast.TypeSpec)
		if !ok || !sp.Name.IsExported() {
			return true
		}
		st, ok := sp.Type.(*ast.StructType)
		if !ok {
			return true
		}
		has := map[string]bool{}
		for _, fl := range st.Fields.List {
			if id, ok := fl.Type.(*ast.Ident); ok && id.Name == "float64" {
				for _, name := range fl.Names {
					has[name.Name] = true
				}
			}
		}
		if has["Rho"] || (has["Epsilon"] || has["Eps"]) && has["Delta"] {
			out = append(out, dir+"."+sp.Name.Name)
		}
		return true
	})
	return out, nil
}

// TestOnePrivacyType: no package besides calibrate exports a struct that
// restates a privacy budget, except the listed ledger file types.
func TestOnePrivacyType(t *testing.T) {
	found := map[string]bool{}
	walkSources(t, func(dir, rel string, src []byte) error {
		bad, err := secondBudgets(dir, rel, src)
		for _, b := range bad {
			found[b] = true
			if _, ok := budgetExceptions[b]; !ok {
				t.Errorf("%s (%s) restates a privacy budget: use calibrate.Budget", b, rel)
			}
		}
		return err
	})
	var stale []string
	for e := range budgetExceptions {
		if !found[e] {
			stale = append(stale, e)
		}
	}
	sort.Strings(stale)
	for _, e := range stale {
		t.Errorf("exception %s no longer restates a budget (or moved): remove it from budgetExceptions", e)
	}
}

// TestSecondBudgetIsCaught: the check flags the restatements the module
// had (ledger's Charge with its Kind string, accounting.Noise's own ε and
// δ, a struct holding ρ alone) and leaves alone calibrate itself, a single
// ε (a share, a grid value), a Delta that is a sensitivity on its own, and
// unexported types.
func TestSecondBudgetIsCaught(t *testing.T) {
	src := []byte(`package p

type Charge struct {
	Kind                string
	Epsilon, Delta, Rho float64
}

type Noise struct {
	Epsilon float64
	Delta   float64
	Scale   float64
}

type Spend struct{ Rho float64 }

type Row struct {
	Eps   float64
	Delta int
}

type Table struct{ Epsilon float64 }

type Config struct{ Delta float64 }

type limit struct{ Rho, Epsilon, Delta float64 }
`)
	got, err := secondBudgets("p", "p/p.go", src)
	if err != nil {
		t.Fatal(err)
	}
	if want := "p.Charge,p.Noise,p.Spend"; strings.Join(got, ",") != want {
		t.Errorf("got %q, want %q", strings.Join(got, ","), want)
	}
	if got, _ := secondBudgets(budgetHome, budgetHome+"/budget.go", src); len(got) != 0 {
		t.Errorf("calibrate itself was flagged: %v", got)
	}
}
