package blas_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// kernelPackages may call gonum's BLAS/LAPACK routines; every other package
// goes through package blas (types such as blas64.General may be shared).
var kernelPackages = []string{"blas", "native"}

// gonumKernels are the gonum packages whose routines only the kernel
// packages may call or import.
var gonumKernels = map[string]bool{
	"gonum.org/v1/gonum/blas/blas64":     true,
	"gonum.org/v1/gonum/lapack/lapack64": true,
	"gonum.org/v1/gonum/blas/gonum":      true,
	"gonum.org/v1/gonum/lapack/gonum":    true,
}

// The source scan behind "one kernel seam": no non-test file outside blas/
// and native/ calls a function of blas64 or lapack64, or imports gonum's
// BLAS/LAPACK implementations directly.
func TestNoKernelCallsOutsideTheSeam(t *testing.T) {
	root := ".."
	fset := token.NewFileSet()
	var scanned int
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			top := strings.Split(rel, string(filepath.Separator))[0]
			for _, k := range kernelPackages {
				if rel == k {
					return filepath.SkipDir
				}
			}
			if strings.HasPrefix(d.Name(), ".") && rel != "." || top == "vendor" || top == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		scanned++
		names := map[string]string{} // local name → import path
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !gonumKernels[p] {
				continue
			}
			name := p[strings.LastIndex(p, "/")+1:]
			if imp.Name != nil {
				name = imp.Name.Name
			}
			if p == "gonum.org/v1/gonum/blas/gonum" || p == "gonum.org/v1/gonum/lapack/gonum" {
				t.Errorf("%s imports %s: kernels belong in blas/ or native/", rel, p)
				continue
			}
			names[name] = p
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok {
				if p, ok := names[id.Name]; ok {
					t.Errorf("%s: calls %s.%s (%s): use package blas", fset.Position(call.Pos()), id.Name, sel.Sel.Name, p)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if scanned < 50 {
		t.Fatalf("scanned only %d files: the walk missed the module", scanned)
	}
}
