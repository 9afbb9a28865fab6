package blas_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// matFactorizations are gonum/mat's types that run LAPACK. Every one of
// them that the module uses must have an entry in matChecks, which runs it
// and so proves (in the cgo build) that it reaches the backend's LAPACK.
var matFactorizations = map[string]bool{
	"Cholesky": true, "BandCholesky": true, "EigenSym": true, "Eigen": true, "SVD": true,
	"GSVD": true, "HOGSVD": true, "QR": true, "LQ": true, "LU": true,
}

// spd returns an n×n symmetric positive definite test matrix.
func spd(n int) *mat.SymDense {
	a := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			v := 1 / float64(1+i+j)
			if i == j {
				v += float64(n)
			}
			a.SetSym(i, j, v)
		}
	}
	return a
}

// general returns a nonsymmetric m×n test matrix of full rank.
func general(m, n int) *mat.Dense {
	a := mat.NewDense(m, n, nil)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			v := float64((3*i+7*j)%11) - 5
			if i == j {
				v += 20
			}
			a.Set(i, j, v)
		}
	}
	return a
}

// matChecks runs each gonum/mat operation that factorizes (the types above,
// and the Dense methods that factorize internally). Each returns false if
// gonum reported a failure.
var matChecks = map[string]func() bool{
	"Cholesky": func() bool { var c mat.Cholesky; return c.Factorize(spd(40)) },
	"BandCholesky": func() bool {
		var c mat.BandCholesky
		return c.Factorize(mat.NewSymBandDense(3, 1, []float64{4, 1, 4, 1, 4, 0}))
	},
	"EigenSym": func() bool { var e mat.EigenSym; return e.Factorize(spd(40), true) },
	"Eigen":    func() bool { var e mat.Eigen; return e.Factorize(general(30, 30), mat.EigenRight) },
	"SVD":      func() bool { var s mat.SVD; return s.Factorize(general(40, 30), mat.SVDThin) },
	"GSVD": func() bool {
		var g mat.GSVD
		return g.Factorize(general(20, 10), general(15, 10), mat.GSVDU|mat.GSVDV|mat.GSVDQ)
	},
	"HOGSVD": func() bool {
		var h mat.HOGSVD
		return h.Factorize(general(20, 10), general(15, 10))
	},
	"QR": func() bool { var q mat.QR; q.Factorize(general(40, 30)); return true },
	"LQ": func() bool { var l mat.LQ; l.Factorize(general(30, 40)); return true },
	"LU": func() bool { var l mat.LU; l.Factorize(general(30, 30)); return true },
	"Dense.Solve": func() bool {
		var x mat.Dense
		return x.Solve(general(30, 30), general(30, 2)) == nil
	},
	"Dense.Inverse": func() bool { var x mat.Dense; return x.Inverse(general(30, 30)) == nil },
}

// The static half of the seam for gonum/mat: every factorization type the
// module's non-test code names has a runtime check above (the runtime half,
// TestMatFactorizationsRunOnBackend, is in a file built with cgo only).
func TestMatFactorizationsAreChecked(t *testing.T) {
	used := map[string][]string{}
	root := ".."
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && path != root || d.Name() == "testdata" || d.Name() == "vendor" {
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
		name := ""
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "gonum.org/v1/gonum/mat" {
				name = "mat"
				if imp.Name != nil {
					name = imp.Name.Name
				}
			}
		}
		if name == "" {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == name && matFactorizations[sel.Sel.Name] {
					rel, _ := filepath.Rel(root, path)
					used[sel.Sel.Name] = append(used[sel.Sel.Name], rel)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(used) == 0 {
		t.Fatal("found no gonum/mat factorization in the module: the walk missed it")
	}
	names := make([]string, 0, len(used))
	for n := range used {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if matChecks[n] == nil {
			t.Errorf("mat.%s is used (%s) but not checked to run on the backend's LAPACK: add it to matChecks", n, used[n][0])
		}
	}
	t.Logf("mat factorizations used in the module: %v", names)
}
