package vocabulary

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// walkSources calls visit with the package directory, path and contents
// (both relative to the module root, slash-separated) of every non-test Go
// file of the module, skipping hidden, testdata and vendor directories. It
// fails the test if visit or the walk fails, or if the walk found fewer
// than 100 files (a broken walk must not pass as a clean module).
func walkSources(t *testing.T, visit func(dir, rel string, src []byte) error) {
	t.Helper()
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		return visit(filepath.ToSlash(filepath.Dir(rel)), rel, src)
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("only %d Go files under the module root: the walk is broken", files)
	}
}
