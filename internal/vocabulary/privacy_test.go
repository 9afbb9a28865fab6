package vocabulary

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// budgetHome is where a privacy budget is spelled: calibrate.Budget (ρ-zCDP,
// pure ε-DP or (ε,δ)-DP).
const budgetHome = "privacy/calibrate"

// budgetExceptions are the structs outside budgetHome that hold ρ or
// (ε, δ) fields or JSON keys and are not a second budget type, each with
// why.
var budgetExceptions = map[string]string{
	"privacy/ledger.Limit": "an amount in a ledger's unit, not a release's budget: the limit as the ledger " +
		"file stores it ({\"rho\": R} or {\"epsilon\": E, \"delta\": D}, where δ = 0 is pure ε-DP, which " +
		"calibrate.Budget's encoding does not accept) and the running sums Spent and Remaining, which may be " +
		"zero; the limit a ledger is created with and what a release costs enter as calibrate.Budget",
}

// budgetLike reports whether a struct's names restate a budget: "rho", or
// "epsilon" (or "eps") together with "delta".
func budgetLike(has map[string]bool) bool {
	return has["rho"] || (has["epsilon"] || has["eps"]) && has["delta"]
}

// secondBudgets returns "dir.Type" for every struct type of src (a non-test
// Go file of package directory dir) that restates calibrate.Budget: an
// exported struct with a float64 field named Rho, or both an Epsilon (or
// Eps) and a Delta float64 field; or any struct, exported, unexported or
// anonymous ("dir.file:line"), whose JSON keys spell "rho", or "epsilon"
// (or "eps") with "delta" — a report or file format that writes a budget
// itself instead of carrying calibrate.Budget and its one encoding
// (calibrate.MarshalInline keeps such keys flat). budgetHome is skipped.
func secondBudgets(dir, file string, src []byte) ([]string, error) {
	if dir == budgetHome {
		return nil, nil
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	named := map[*ast.StructType]*ast.Ident{}
	ast.Inspect(f, func(n ast.Node) bool {
		if sp, ok := n.(*ast.TypeSpec); ok {
			if st, ok := sp.Type.(*ast.StructType); ok {
				named[st] = sp.Name
			}
		}
		return true
	})
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		st, ok := n.(*ast.StructType)
		if !ok {
			return true
		}
		fields, keys := map[string]bool{}, map[string]bool{}
		for _, fl := range st.Fields.List {
			if id, ok := fl.Type.(*ast.Ident); ok && id.Name == "float64" {
				for _, name := range fl.Names {
					fields[strings.ToLower(name.Name)] = true
				}
			}
			if fl.Tag != nil {
				if tag, err := strconv.Unquote(fl.Tag.Value); err == nil {
					key, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
					keys[key] = true
				}
			}
		}
		name, isNamed := named[st]
		switch {
		case isNamed && (name.IsExported() && budgetLike(fields) || budgetLike(keys)):
			out = append(out, dir+"."+name.Name)
		case !isNamed && budgetLike(keys):
			out = append(out, fmt.Sprintf("%s.%s:%d", dir, path.Base(file), fset.Position(st.Pos()).Line))
		}
		return true
	})
	return out, nil
}

// TestOnePrivacyType: no package besides calibrate has a struct that
// restates a privacy budget — an exported one with ρ or (ε, δ) fields, or
// any whose JSON keys spell them — except the listed ledger limit.
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
// δ, a struct holding ρ alone; the command line's reports spelling
// "rho"/"epsilon"/"delta" JSON keys themselves, unexported, with a *float64
// δ, or as an anonymous struct) and leaves alone calibrate itself, a single
// ε (a share, a grid value), a Delta that is a sensitivity on its own, an
// unexported type's Go fields without JSON keys, keys that only contain the
// words ("epsilon_share"), and a report that carries calibrate.Budget.
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
` +
		// The reports' JSON keys (' stands for a backquote).
		strings.ReplaceAll(`
type tblJSON struct {
	Mechanism string  'json:"mechanism"'
	Rho       float64 'json:"rho,omitempty"'
	Epsilon   float64 'json:"epsilon,omitempty"'
	Delta     float64 'json:"delta,omitempty"'
}

type lrmJSON struct {
	Eps   float64  'json:"epsilon"'
	Delta *float64 'json:"delta,omitempty"'
}

type zcdpJSON struct{ R float64 'json:"rho"' }

func report() any {
	return struct {
		E float64 'json:"eps"'
		D float64 'json:"delta"'
	}{}
}

type shareJSON struct {
	Share float64 'json:"epsilon_share"'
	Delta float64 'json:"delta_sensitivity"'
}

type carried struct {
	Mechanism string           'json:"mechanism"'
	Budget    calibrate.Budget 'json:"-"'
	Eps       []float64        'json:"eps"'
}
`, "'", "`"))
	got, err := secondBudgets("p", "p/p.go", src)
	if err != nil {
		t.Fatal(err)
	}
	if want := "p.Charge,p.Noise,p.Spend,p.tblJSON,p.lrmJSON,p.zcdpJSON,p.p.go:42"; strings.Join(got, ",") != want {
		t.Errorf("got %q, want %q", strings.Join(got, ","), want)
	}
	if got, _ := secondBudgets(budgetHome, budgetHome+"/budget.go", src); len(got) != 0 {
		t.Errorf("calibrate itself was flagged: %v", got)
	}
}
