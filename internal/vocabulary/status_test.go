package vocabulary

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// solverPackages report how their iterative solves ended. They say it with
// status.Status (package status, the concept's one home): an exported
// status string, a Converged bool, or a package's own Status type would be
// a second word for it.
var solverPackages = []string{"newton", "cg", "mechanism/lrm", "mechanism/sdp", "mechanism/plan", "mechanism/marginals"}

// statusWords are status.Status's text forms; an exported string constant
// with one of them as its value spells the status a second way.
var statusWords = map[string]bool{`"converged"`: true, `"iteration_limit"`: true, `"cancelled"`: true, `"stalled"`: true, `"failed"`: true}

// secondStatuses returns "file: what" for every exported declaration of
// src (a non-test Go file) that carries a solve's status other than as
// status.Status: a struct field named …Status of type string, a field
// named …Converged of type bool, a defined (not alias) type named …Status,
// or an exported string constant whose value is a status word.
func secondStatuses(file string, src []byte) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), file, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []string
	flag := func(what string) { out = append(out, filepath.ToSlash(file)+": "+what) }
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, sp := range gd.Specs {
			switch sp := sp.(type) {
			case *ast.TypeSpec:
				if !sp.Name.IsExported() {
					continue
				}
				if strings.HasSuffix(sp.Name.Name, "Status") && !sp.Assign.IsValid() {
					if _, isStruct := sp.Type.(*ast.StructType); !isStruct {
						flag("type " + sp.Name.Name)
					}
				}
				if st, ok := sp.Type.(*ast.StructType); ok {
					for _, fl := range st.Fields.List {
						for _, name := range fl.Names {
							if name.IsExported() {
								if what := fieldStatus(sp.Name.Name, name.Name, fl.Type); what != "" {
									flag(what)
								}
							}
						}
					}
				}
			case *ast.ValueSpec:
				if gd.Tok != token.CONST {
					continue
				}
				for i, name := range sp.Names {
					if i < len(sp.Values) && name.IsExported() {
						if lit, ok := sp.Values[i].(*ast.BasicLit); ok && statusWords[lit.Value] {
							flag("const " + name.Name + " = " + lit.Value)
						}
					}
				}
			}
		}
	}
	return out, nil
}

// fieldStatus names field of struct typ if it is a status string or a
// Converged bool, else "".
func fieldStatus(typ, field string, t ast.Expr) string {
	id, ok := t.(*ast.Ident)
	switch {
	case !ok:
		return ""
	case strings.HasSuffix(field, "Status") && id.Name == "string":
		return typ + "." + field + " string"
	case strings.HasSuffix(field, "Converged") && id.Name == "bool":
		return typ + "." + field + " bool"
	}
	return ""
}

// TestOneStatus: the solver packages' exported APIs say how a solve ended
// with status.Status only.
func TestOneStatus(t *testing.T) {
	for _, pkg := range solverPackages {
		files, err := filepath.Glob(filepath.Join(root, pkg, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(files)
		n := 0
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			n++
			rel, _ := filepath.Rel(root, file)
			bad, err := secondStatuses(rel, src)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range bad {
				t.Errorf("%s: a solve's status is status.Status (package status), not a second spelling", b)
			}
		}
		if n == 0 {
			t.Errorf("no Go files in %s: the package moved, update solverPackages", pkg)
		}
	}
}

// TestSecondStatusIsCaught: the check flags the spellings the solver
// packages used before status.Status (plan's and sdp's Status string,
// lrm's and cg's Converged bool, newton's own string type), and leaves
// status.Status fields, the alias newton keeps, unexported names and
// unrelated strings alone.
func TestSecondStatusIsCaught(t *testing.T) {
	src := []byte(`package p

import "github.com/dpsolve/dpsolve/status"

type Result struct {
	Status    string
	Converged bool
	Message   string
	Polished  bool
	Outcome   status.Status
	status    string
}

type Consistency struct {
	Converged bool ` + "`json:\"converged\"`" + `
}

type Status string

type Alias = status.Status

type ledgerStatus struct{ Status string }

const (
	Done    = "converged"
	Label   = "newton"
	private = "stalled"
)
`)
	got, err := secondStatuses("p/p.go", src)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"p/p.go: Result.Status string", "p/p.go: Result.Converged bool", "p/p.go: Consistency.Converged bool",
		"p/p.go: type Status", `p/p.go: const Done = "converged"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
