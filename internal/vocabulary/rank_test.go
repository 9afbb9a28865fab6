package vocabulary

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// rankHome is where the numerical-rank rule dim·ε·largest is spelled:
// rank.Cutoff.
const rankHome = "internal/rank"

// secondRankRules returns "file:line" for every restatement of the rank
// rule in src (a non-test file of package directory dir) outside rankHome:
// a product float64(…) * 0x1p-52 * x, the rule written out. Products with
// a leading factor (64·n·ε·x, a certificate's deliberately wider
// tolerance) are other rules and are not matched.
func secondRankRules(dir, file string, src []byte) ([]string, error) {
	if dir == rankHome {
		return nil, nil
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		outer, ok := n.(*ast.BinaryExpr)
		if !ok || outer.Op != token.MUL {
			return true
		}
		inner, ok := outer.X.(*ast.BinaryExpr)
		if !ok || inner.Op != token.MUL {
			return true
		}
		lit, ok := inner.Y.(*ast.BasicLit)
		if !ok || lit.Kind != token.FLOAT || strings.ToLower(lit.Value) != "0x1p-52" {
			return true
		}
		if call, ok := inner.X.(*ast.CallExpr); ok {
			if id, ok := call.Fun.(*ast.Ident); ok && id.Name == "float64" {
				out = append(out, fset.Position(outer.Pos()).String())
			}
		}
		return true
	})
	return out, nil
}

// TestOneRankRule fails on a pseudo-inverse or rank cut-off that writes
// dim·ε·largest itself instead of calling rank.Cutoff.
func TestOneRankRule(t *testing.T) {
	walkSources(t, func(dir, rel string, src []byte) error {
		got, err := secondRankRules(dir, rel, src)
		for _, g := range got {
			t.Errorf("%s restates the rank rule: use rank.Cutoff (internal/rank)", g)
		}
		return err
	})
}

// The detector on sources whose answer is known.
func TestSecondRankRulesDetects(t *testing.T) {
	src := []byte("package p\n\nfunc f(n int, s []float64) (a, b, c float64) {\n\ta = float64(n) * 0x1p-52 * s[0]\n\tb = 64 * float64(n) * 0x1p-52 * s[0]\n\tc = s[0] * (1 - 0x1p-52)\n\treturn\n}\n")
	got, err := secondRankRules("p", "p.go", src)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != "p.go:4:6" {
		t.Errorf("got %v, want the one restatement at p.go:4:6", got)
	}
	if got, _ := secondRankRules(rankHome, "rank.go", src); len(got) != 0 {
		t.Errorf("the home package was flagged: %v", got)
	}
}
