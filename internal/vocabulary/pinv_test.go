package vocabulary

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"
)

// pinvHome is where pseudo-inverses are computed: pinv.Dense (from the
// SVD) and pinv.NewSym (from the eigendecomposition of a Gram).
const pinvHome = "internal/pinv"

// secondPinvs returns "file:line" for every hand-written pseudo-inverse in
// src (a non-test file of package directory dir) outside pinvHome: a
// function that declares its own mat.SVD or mat.EigenSym and divides by the
// values it gets from it (x / s[j] with s := svd.Values(…), or 1/l ranging
// over them) — inverting singular values or eigenvalues, which is the
// pseudo-inverse and its rank decision restated. Functions that only take
// square roots, bounds or the largest value of a decomposition are not
// matched.
func secondPinvs(dir, file string, src []byte) ([]string, error) {
	if dir == pinvHome {
		return nil, nil
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil || !declaresDecomposition(fn.Body) {
			continue
		}
		values := map[string]bool{} // s := x.Values(…)
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if as, ok := n.(*ast.AssignStmt); ok && len(as.Lhs) == len(as.Rhs) {
				for i, r := range as.Rhs {
					if call, ok := r.(*ast.CallExpr); ok {
						if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Values" {
							if id, ok := as.Lhs[i].(*ast.Ident); ok {
								values[id.Name] = true
							}
						}
					}
				}
			}
			return true
		})
		ranged := map[string]bool{} // for _, l := range s
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if rs, ok := n.(*ast.RangeStmt); ok {
				if id, ok := rs.X.(*ast.Ident); ok && values[id.Name] {
					if v, ok := rs.Value.(*ast.Ident); ok {
						ranged[v.Name] = true
					}
				}
			}
			return true
		})
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			b, ok := n.(*ast.BinaryExpr)
			if !ok || b.Op != token.QUO {
				return true
			}
			switch y := b.Y.(type) {
			case *ast.IndexExpr:
				if id, ok := y.X.(*ast.Ident); ok && values[id.Name] {
					out = append(out, fset.Position(b.Pos()).String())
				}
			case *ast.Ident:
				if ranged[y.Name] {
					out = append(out, fset.Position(b.Pos()).String())
				}
			}
			return true
		})
	}
	return out, nil
}

// declaresDecomposition reports whether body declares a variable of type
// mat.SVD or mat.EigenSym.
func declaresDecomposition(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok {
			return !found
		}
		if sel, ok := vs.Type.(*ast.SelectorExpr); ok {
			if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "mat" && (sel.Sel.Name == "SVD" || sel.Sel.Name == "EigenSym") {
				found = true
			}
		}
		return !found
	})
	return found
}

// TestOnePseudoInverse fails on a pseudo-inverse written by hand instead of
// calling internal/pinv.
func TestOnePseudoInverse(t *testing.T) {
	walkSources(t, func(dir, rel string, src []byte) error {
		got, err := secondPinvs(dir, rel, src)
		for _, g := range got {
			t.Errorf("%s inverts the values of its own SVD or eigendecomposition: use internal/pinv (pinv.Dense, pinv.NewSym)", g)
		}
		return err
	})
}

// The detector on sources whose answer is known: the two hand-written
// forms the module used to have (an SVD's s[j] and an eigenvalue ranged
// over) are found; a square root of the values, a division by a value of
// a decomposition made elsewhere, and the home package are not.
func TestSecondPinvsDetects(t *testing.T) {
	src := []byte(`package p

import "gonum.org/v1/gonum/mat"

func svdPinv(a *mat.Dense, v *mat.Dense) {
	var svd mat.SVD
	svd.Factorize(a, mat.SVDThin)
	s := svd.Values(nil)
	v.Set(0, 0, v.At(0, 0)/s[0])
}

func eigPinv(x *mat.SymDense) (t float64) {
	var eig mat.EigenSym
	eig.Factorize(x, true)
	vals := eig.Values(nil)
	for _, l := range vals {
		t += 1 / l
	}
	return t
}

func roots(x *mat.SymDense) (t float64) {
	var eig mat.EigenSym
	eig.Factorize(x, false)
	vals := eig.Values(nil)
	for _, l := range vals {
		t += l * l / 2
	}
	return t
}

func elsewhere(vals []float64) (t float64) {
	for _, l := range vals {
		t += 1 / l
	}
	return t
}
`)
	got, err := secondPinvs("p", "p.go", src)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"p.go:9:14", "p.go:17:8"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("got %v, want %v", got, want)
	}
	if got, _ := secondPinvs(pinvHome, "pinv.go", src); len(got) != 0 {
		t.Errorf("the home package was flagged: %v", got)
	}
}
