package vocabulary

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// root is the module root, relative to this package's directory.
const root = "../.."

// specHome is where workload specs are parsed: the built-in strings
// (workload.Parse, ParseShape), the training workloads of DP matrix
// factorization (workload.ParseTraining), the JSON multi-attribute specs
// (domain.ParseSpec, LoadSpec) and the one loader (workload.Load). A
// package that moves them (say, the multi-attribute domain into its own
// package) adds itself here.
var specHome = map[string]bool{"model/workload": true, "model/domain": true}

// specDelegates are the exported parsers outside specHome that only hand
// the name to the home's parser (the value, a call their body must make)
// and build their own type from its result.
var specDelegates = map[string]string{
	"mechanism/mf.ParseWorkload":         "workload.ParseTraining",
	"mechanism/mf.ParseToeplitzWorkload": "workload.ParseTraining",
}

// specParser matches the names of exported functions and methods that
// would read a workload spec: Parse…/Load…/Read… ending in Workload(s),
// Spec(s), Family or Families.
var specParser = regexp.MustCompile(`^(Parse|Load|Read)\w*(Workloads?|Specs?|Family|Families)$`)

// secondDialects returns "file: Name" for every exported function or
// method of src (a non-test Go file of package directory dir) whose name
// says it parses workload specs, unless dir is their home or the function
// is a listed delegate whose body calls the home's parser.
func secondDialects(dir, file string, src []byte) ([]string, error) {
	if specHome[dir] {
		return nil, nil
	}
	f, err := parser.ParseFile(token.NewFileSet(), file, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if ok && fn.Name.IsExported() && specParser.MatchString(fn.Name.Name) {
			if call, ok := specDelegates[dir+"."+fn.Name.Name]; ok && fn.Recv == nil && calls(fn.Body, call) {
				continue
			}
			out = append(out, filepath.ToSlash(file)+": "+fn.Name.Name)
		}
	}
	return out, nil
}

// TestOneSpecDialect: no package besides specHome exports a parser of
// workload specs. (bench.ParseWorkload was one: its n-relative values,
// ';' separators and marginals without dims are now workload.Parse's.)
func TestOneSpecDialect(t *testing.T) {
	walkSources(t, func(dir, rel string, src []byte) error {
		bad, err := secondDialects(dir, rel, src)
		for _, b := range bad {
			t.Errorf("%s parses workload specs outside %v: one spec dialect, workload.Parse / workload.Load", b, keys(specHome))
		}
		return err
	})
}

// TestSecondDialectIsCaught: the check flags the parser that used to
// live in bench, and leaves alone the home package and unrelated names.
func TestSecondDialectIsCaught(t *testing.T) {
	src := []byte("package bench\n\nfunc ParseWorkload(spec string, n int) {}\nfunc LoadSpecs() {}\nfunc parseWorkload() {}\nfunc ParseDims() {}\ntype T struct{}\nfunc (T) ReadFamily() {}\n")
	got, err := secondDialects("bench", "bench/families.go", src)
	if err != nil {
		t.Fatal(err)
	}
	want := "bench/families.go: ParseWorkload,bench/families.go: LoadSpecs,bench/families.go: ReadFamily"
	if strings.Join(got, ",") != want {
		t.Errorf("got %q, want %q", strings.Join(got, ","), want)
	}
	if got, _ := secondDialects("model/domain", "model/domain/spec.go", src); len(got) != 0 {
		t.Errorf("the home package was flagged: %v", got)
	}
}

// calls reports whether body calls pkg.Func (call "pkg.Func").
func calls(body *ast.BlockStmt, call string) bool {
	pkg, name, _ := strings.Cut(call, ".")
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == name {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == pkg {
					found = true
				}
			}
		}
		return !found
	})
	return found
}

// TestSpecDelegateMustDelegate: mf's ParseWorkload passes while it hands
// the name to workload.ParseTraining, and is flagged as a second parser
// as soon as it reads the name itself.
func TestSpecDelegateMustDelegate(t *testing.T) {
	good := []byte("package mf\n\nfunc ParseWorkload(spec string, n int) (*Workload, error) {\n\tt, err := workload.ParseTraining(spec)\n\tif err != nil {\n\t\treturn nil, err\n\t}\n\treturn FromTraining(t, n)\n}\n")
	own := []byte("package mf\n\nfunc ParseWorkload(spec string, n int) (*Workload, error) {\n\tparts := strings.Split(spec, \",\")\n\treturn build(parts, n)\n}\n")
	if got, err := secondDialects("mechanism/mf", "mechanism/mf/evaluate.go", good); err != nil || len(got) != 0 {
		t.Errorf("the delegate was flagged: %v, %v", got, err)
	}
	if got, _ := secondDialects("mechanism/mf", "mechanism/mf/evaluate.go", own); len(got) != 1 {
		t.Errorf("a ParseWorkload that parses the name itself was not flagged: %v", got)
	}
	if got, _ := secondDialects("bench", "bench/mf.go", good); len(got) != 1 {
		t.Errorf("a delegate not listed in specDelegates was not flagged: %v", got)
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
