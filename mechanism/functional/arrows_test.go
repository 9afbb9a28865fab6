package functional

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestArrowsPointDown keeps the order of the functional-perturbation
// packages: functional and its subpackages (basis, project) sit below
// mechanism/distributed, which may import the basis, and the experiment
// combining both lives above them (bench/funcpert). No
// file here, tests included, may import distributed or anything under it.
func TestArrowsPointDown(t *testing.T) {
	const forbidden = "github.com/dpsolve/dpsolve/mechanism/distributed"
	n := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		n++
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if p == forbidden || strings.HasPrefix(p, forbidden+"/") {
				t.Errorf("%s imports %s: the functional packages must stay below distributed", path, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 5 {
		t.Fatalf("only %d Go files found under mechanism/functional: the walk is broken", n)
	}
}
