package layers

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const (
	module = "github.com/dpsolve/dpsolve"
	root   = "../.."
)

// testOnly is the layer of packages that only _test.go files may import.
const testOnly = -1

// layerNames are the layers bottom-up (docs/architecture.md).
var layerNames = []string{
	"foundation", "kernels", "optimizers and data model", "privacy primitives",
	"mechanisms and planners", "pipelines", "benchmarks and experiments", "commands",
}

// exact places single packages; prefix places a folder and everything
// under it (a new package under mechanism/ is a mechanism without edits
// here). A package that neither names fails the test: put it in a layer.
var exact = map[string]int{
	"status": 0, "progress": 0, "internal/inputerr": 0, "internal/ctxwait": 0,
	"internal/matio": 0, "internal/resources": 0, "internal/reference": 0, "internal/atomicdir": 0, "internal/rank": 0, "internal/pinv": 0,
	"native": 1, "blas": 1, "cg": 1, "kron": 1, "internal/symdense": 1, "internal/expsum": 1, "internal/psd": 1,
	"newton":          2,
	"internal/readme": testOnly, "internal/vocabulary": testOnly, "internal/layers": testOnly,
}

var prefix = map[string]int{
	"model":            2,
	"privacy":          3,
	"mechanism":        4,
	"pipeline":         5,
	"bench":            6,
	"cmd":              7,
	"internal/testkit": testOnly,
}

// layerOf returns the layer of the package in directory rel (slash
// separated, relative to the module root) and whether it is placed.
func layerOf(rel string) (int, bool) {
	if l, ok := exact[rel]; ok {
		return l, true
	}
	best, layer := -1, 0
	for p, l := range prefix {
		if (rel == p || strings.HasPrefix(rel, p+"/")) && len(p) > best {
			best, layer = len(p), l
		}
	}
	return layer, best >= 0
}

func name(l int) string {
	if l == testOnly {
		return "test-only"
	}
	return strconv.Itoa(l) + " (" + layerNames[l] + ")"
}

// TestArrowsPointDown walks every non-test Go file of the module and checks
// each of its imports of the module against the layers: same layer or
// lower, never a test-only package. It also fails on a package that is in
// no layer, so the layering is kept up as packages are added.
func TestArrowsPointDown(t *testing.T) {
	files, unplaced := 0, map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			n := d.Name()
			if path != root && (strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") || n == "testdata" || n == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		from, ok := layerOf(rel)
		if !ok {
			unplaced[rel] = true
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		files++
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if !strings.HasPrefix(p, module+"/") {
				continue
			}
			dep := strings.TrimPrefix(p, module+"/")
			to, ok := layerOf(dep)
			switch {
			case !ok:
				unplaced[dep] = true
			case to == testOnly && from != testOnly:
				t.Errorf("%s imports the test-only %s: only _test.go files may", filepath.ToSlash(path), dep)
			case to > from && from != testOnly:
				t.Errorf("%s (layer %s) imports %s (layer %s): arrows must point down", filepath.ToSlash(path), name(from), dep, name(to))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(unplaced) > 0 {
		var l []string
		for p := range unplaced {
			l = append(l, p)
		}
		sort.Strings(l)
		t.Errorf("packages in no layer (add them to exact or prefix here and to docs/architecture.md): %s", strings.Join(l, ", "))
	}
	if files < 100 {
		t.Fatalf("only %d Go files checked: the walk is broken", files)
	}
}

// TestLayerOf checks the placement rules on paths whose answer is known,
// so that a broken rule cannot pass the walk silently.
func TestLayerOf(t *testing.T) {
	for rel, want := range map[string]int{
		"blas": 1, "kron": 1, "newton": 2, "model/workload": 2, "privacy/accounting": 3,
		"mechanism/plan/plantest": 4, "pipeline/tables": 5, "bench/funcpert": 6, "bench/benchplot": 6,
		"cmd/dpsolve/internal/batch": 7, "cmd/dpsolve-plot": 7, "internal/testkit/kronwork": testOnly,
	} {
		if got, ok := layerOf(rel); !ok || got != want {
			t.Errorf("layerOf(%q) = %d, %v; want %d", rel, got, ok, want)
		}
	}
	for _, rel := range []string{"internal/newthing", "mechanismx", "tools"} {
		if l, ok := layerOf(rel); ok {
			t.Errorf("layerOf(%q) = %d: an unknown package must be unplaced", rel, l)
		}
	}
}

// TestPlottingOutOfTheCLI keeps gonum/plot (and the LaTeX, PDF, SVG and font
// packages it brings) out of the dpsolve binary: no module package that
// cmd/dpsolve reaches through non-test files imports it; the figures are
// cmd/dpsolve-plot's. Build constraints are ignored, so every build is
// covered. The walk must find the plotting package itself, or it proves
// nothing.
func TestPlottingOutOfTheCLI(t *testing.T) {
	const plotLib = "gonum.org/v1/plot"
	imports := map[string][]string{} // module package → its imports
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			n := d.Name()
			if path != root && (strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") || n == "testdata" || n == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(rel)
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			imports[pkg] = append(imports[pkg], p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	plots := func(pkg string) bool {
		for _, p := range imports[pkg] {
			if p == plotLib || strings.HasPrefix(p, plotLib+"/") {
				return true
			}
		}
		return false
	}
	if !plots("bench/benchplot") {
		t.Fatalf("bench/benchplot does not import %s: the walk is broken or the plots moved (update this test)", plotLib)
	}
	// breadth-first from the command, remembering who reached whom
	via := map[string]string{"cmd/dpsolve": ""}
	queue := []string{"cmd/dpsolve"}
	for len(queue) > 0 {
		pkg := queue[0]
		queue = queue[1:]
		if plots(pkg) {
			chain := pkg
			for p := via[pkg]; p != ""; p = via[p] {
				chain = p + " → " + chain
			}
			t.Errorf("the dpsolve binary imports %s: %s", plotLib, chain)
		}
		for _, p := range imports[pkg] {
			if dep, ok := strings.CutPrefix(p, module+"/"); ok {
				if _, seen := via[dep]; !seen {
					via[dep] = pkg
					queue = append(queue, dep)
				}
			}
		}
	}
	if len(via) < 30 {
		t.Fatalf("cmd/dpsolve reaches only %d module packages: the walk is broken", len(via))
	}
}
