package accounting

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNoSolverImport keeps the error formulas free of the solvers: no
// non-test file of accounting imports strategy (whose optimized baseline
// links newton), newton, blas or native. The layer test of the whole tree
// checks the same for every package; this one fails even before that test
// exists.
func TestNoSolverImport(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	forbidden := []string{"/mechanism/strategy", "/newton", "/blas", "/native"}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		pf, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		n++
		for _, im := range pf.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			for _, fb := range forbidden {
				if strings.HasPrefix(p, "github.com/dpsolve/dpsolve") && strings.HasSuffix(p, fb) {
					t.Errorf("%s imports %s: accounting must not import a solver", f, p)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no Go files found: the walk is broken")
	}
}
