package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

// TestNoiseFlagOneParser: every command reads --mechanism through
// calibrate.ParseMechanism (mechanismFlag), so compare and lrm reject an
// unknown noise with the same usage line (exit 2), accept the names in any
// case, as the parser does, and report them in the canonical spelling; and
// no command switches on the flag's strings itself (flagStringSwitches).
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

	// answer offers all three; its old aliases (privacy definitions, not
	// mechanisms) are refused with the list, and compare says it does not
	// offer zcdp rather than that zcdp is unknown.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"answer", "--strategy", "s.npy", "--data", "x.csv", "--out", "y.csv", "--workload", "identity", "--mechanism", "pure", "--eps", "1"},
			`--mechanism must be laplace, gaussian or zcdp, got "pure" (unknown mechanism)`},
		{[]string{"compare", "--workload", "prefix", "--n", "8", "--mechanism", "ZCDP"},
			`--mechanism must be laplace or gaussian, got "ZCDP" (this command does not offer zcdp)`},
	} {
		code, _, errOut := runCLI(t, c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", c.args, code, errOut, c.want)
		}
	}

	var found []string
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		got, err := flagStringSwitches(path, src)
		found = append(found, got...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range found {
		fn := f[strings.LastIndexByte(f, ' ')+1:]
		if _, ok := flagStringExceptions[fn]; ok {
			seen[fn] = true
			continue
		}
		t.Errorf("%s: a command decides on a --mechanism string itself; parse the flag with mechanismFlag (calibrate.ParseMechanism) and decide on the Kind or NoiseKind", f)
	}
	for fn := range flagStringExceptions {
		if !seen[fn] {
			t.Errorf("flagStringExceptions lists %s, which no longer decides on such a string: remove it from the list", fn)
		}
	}
}

// flagStringExceptions are the functions ("file:func") that may decide on
// one of the strings because they parse another flag whose values share a
// spelling, each with why; the list only shrinks.
var flagStringExceptions = map[string]string{
	"plan.go:planNoise": "plan's --privacy flag (gaussian|pure) names the privacy definition, as plan files do (docs/architecture.md)",
}

// flagValues are the --mechanism values, from the one list in calibrate.
func flagValues() map[string]bool {
	v := map[string]bool{}
	for _, k := range []calibrate.Kind{calibrate.Pure, calibrate.Approx, calibrate.Concentrated} {
		v[calibrate.MechanismName(k)] = true
	}
	return v
}

// flagStringSwitches returns "file:line:col file:func" for each place in
// src that decides on a --mechanism value spelled as a string literal (any
// case): a switch case, an == or != comparison, or a map key; func is the
// enclosing function ("-" outside one).
func flagStringSwitches(file string, src []byte) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	values := flagValues()
	isValue := func(e ast.Expr) bool {
		lit, ok := e.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return false
		}
		s, err := strconv.Unquote(lit.Value)
		return err == nil && values[strings.ToLower(s)]
	}
	seen := map[string]bool{}
	for _, d := range f.Decls {
		fn := "-"
		if fd, ok := d.(*ast.FuncDecl); ok {
			fn = fd.Name.Name
		}
		add := func(p token.Pos) { seen[fset.Position(p).String()+" "+filepath.Base(file)+":"+fn] = true }
		ast.Inspect(d, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CaseClause:
				for _, e := range n.List {
					if isValue(e) {
						add(e.Pos())
					}
				}
			case *ast.BinaryExpr:
				if (n.Op == token.EQL || n.Op == token.NEQ) && (isValue(n.X) || isValue(n.Y)) {
					add(n.Pos())
				}
			case *ast.KeyValueExpr:
				if isValue(n.Key) {
					add(n.Key.Pos())
				}
			}
			return true
		})
	}
	var out []string
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out, nil
}

// The detector on sources whose answer is known, so that the scan above
// cannot pass by finding nothing.
func TestFlagStringSwitchesDetects(t *testing.T) {
	for src, want := range map[string]int{
		"package p\nfunc f(s string) int {\n\tswitch s {\n\tcase \"gaussian\", \"ZCDP\":\n\t\treturn 1\n\t}\n\treturn 0\n}\n":    2,
		"package p\nfunc f(s string) bool { return s == \"laplace\" || \"zcdp\" != s }\n":                                        2,
		"package p\nvar m = map[string]int{\"Laplace\": 1}\n":                                                                    1,
		"package p\nfunc f(s string) bool { return s == \"aim\" }\nconst d = \"gaussian\"\n":                                     0,
		"package p\nfunc f(s string) string {\n\tswitch s {\n\tcase \"mst\":\n\t\treturn \"laplace(eps)\"\n\t}\n\treturn s\n}\n": 0,
	} {
		got, err := flagStringSwitches("p.go", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != want {
			t.Errorf("flagStringSwitches(%q) = %v, want %d findings", src, got, want)
		}
	}
}
