package vocabulary

import (
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// noiseHome is where the noise model is spelled: calibrate.NoiseKind
// (Laplace, Gaussian), docs/architecture.md "One noise model".
const noiseHome = "privacy/calibrate"

// noiseExceptions are the second spellings of the noise model that remain,
// each with who removes it; the test fails on any other, and on an
// exception that is gone (so this list only shrinks).
var noiseExceptions = map[string]string{}

// secondNoiseModels returns "dir.Name" for each spelling of the noise model
// in src (a non-test file of package directory dir) outside noiseHome: an
// alias of calibrate.NoiseKind; a named type with a constant "laplace" or
// "gaussian"; a named type with constants L1 and L2 (a sensitivity ball); an
// exported function with a bool parameter named pure.
func secondNoiseModels(dir, file string, src []byte) ([]string, error) {
	if dir == noiseHome {
		return nil, nil
	}
	f, err := parser.ParseFile(token.NewFileSet(), file, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	found := map[string]bool{}
	consts := map[string]map[string]bool{} // type name → its constants' names and values
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.GenDecl:
			var typ string
			for _, sp := range d.Specs {
				switch sp := sp.(type) {
				case *ast.TypeSpec:
					if sel, ok := sp.Type.(*ast.SelectorExpr); ok && sp.Assign.IsValid() && sel.Sel.Name == "NoiseKind" {
						found[dir+"."+sp.Name.Name] = true
					}
				case *ast.ValueSpec:
					if d.Tok != token.CONST {
						continue
					}
					if id, ok := sp.Type.(*ast.Ident); ok {
						typ = id.Name
					} else if sp.Type != nil || len(sp.Values) > 0 {
						typ = "" // another type, or an untyped constant
					}
					if typ == "" {
						continue
					}
					if consts[typ] == nil {
						consts[typ] = map[string]bool{}
					}
					for i, n := range sp.Names {
						consts[typ][n.Name] = true
						if i < len(sp.Values) {
							if lit, ok := sp.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
								v, _ := strconv.Unquote(lit.Value)
								consts[typ]["="+strings.ToLower(v)] = true
							}
						}
					}
				}
			}
		case *ast.FuncDecl:
			if !d.Name.IsExported() || d.Recv != nil {
				continue
			}
			for _, p := range d.Type.Params.List {
				if id, ok := p.Type.(*ast.Ident); ok && id.Name == "bool" {
					for _, n := range p.Names {
						if n.Name == "pure" {
							found[dir+"."+d.Name.Name] = true
						}
					}
				}
			}
		}
	}
	for typ, c := range consts {
		if c["=laplace"] || c["=gaussian"] || c["L1"] && c["L2"] {
			found[dir+"."+typ] = true
		}
	}
	var out []string
	for k := range found {
		out = append(out, k)
	}
	sort.Strings(out)
	return out, nil
}

// TestOneNoiseModel fails on a spelling of the noise model outside
// calibrate.NoiseKind that noiseExceptions does not list, and on a listed
// one that no longer exists.
func TestOneNoiseModel(t *testing.T) {
	seen := map[string]bool{}
	walkSources(t, func(dir, rel string, src []byte) error {
		got, err := secondNoiseModels(dir, rel, src)
		for _, g := range got {
			seen[g] = true
			if _, ok := noiseExceptions[g]; !ok {
				t.Errorf("%s: %s spells the noise model again; use calibrate.NoiseKind (docs/architecture.md)", rel, g)
			}
		}
		return err
	})
	for k := range noiseExceptions {
		if !seen[k] {
			t.Errorf("noiseExceptions lists %s, which no longer spells the noise model: remove it from the list", k)
		}
	}
}

// The detector on sources whose answer is known, so that it cannot pass
// by finding nothing.
func TestSecondNoiseModelsDetects(t *testing.T) {
	for src, want := range map[string]string{
		"package p\nimport \"x/calibrate\"\ntype M = calibrate.NoiseKind\n":                     "p.M",
		"package p\ntype Privacy string\nconst (\n\tA Privacy = \"Gaussian\"\n\tB = \"x\"\n)\n": "p.Privacy",
		"package p\ntype Ball int\nconst (\n\tL1 Ball = 1\n\tL2 Ball = 2\n)\n":                  "p.Ball",
		"package p\nfunc New(w int, pure bool) {}\n":                                            "p.New",
		"package p\ntype S string\nconst A S = \"uniform\"\nfunc f(pure bool) {}\n":             "",
	} {
		got, err := secondNoiseModels("p", "p.go", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, ",") != want {
			t.Errorf("secondNoiseModels(%q) = %v, want %q", src, got, want)
		}
	}
	if got, _ := secondNoiseModels(noiseHome, "c.go", []byte("package calibrate\ntype NoiseKind string\nconst Laplace NoiseKind = \"laplace\"\n")); len(got) != 0 {
		t.Errorf("the home package was flagged: %v", got)
	}
}
