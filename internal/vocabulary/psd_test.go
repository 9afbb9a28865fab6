package vocabulary

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"strings"
	"testing"
)

// psdHome is where a positive semidefinite matrix is factored: psd.Factor
// (Cholesky when definite, else the eigendecomposition) and psd.Principal,
// with the one tolerance psd.Tol.
const psdHome = "internal/psd"

// psdAllowed names the functions outside psdHome that compute something of
// a positive semidefinite matrix under a name the detector matches but are
// not factorizations, each with its reason.
var psdAllowed = map[string]string{
	"mechanism/mf.sqrtPSD": "a matrix function, the symmetric square root V^{1/2} = Q·diag(√μ₊)·Qᵀ, not a factor R with RᵀR = V; only the solvers' starting point, scaled to unit diagonal and checked by Cholesky before use, nothing certified or inverted from it",
}

// psdName matches the names the module's copies of the factorization had
// (newton's psdFactor, sdp's FactorGram, lrm's GramFactor, mf's sqrtPSD)
// and their obvious variants.
var psdName = regexp.MustCompile(`(?i)(psd.*(factor|sqrt|root|chol))|((factor|sqrt|root|chol).*psd)|(gram.*factor)|(factor.*gram)`)

// secondPSDFactors returns "file:line: name (why)" for every function in
// src (a non-test file of package directory dir) outside psdHome that
// restates the PSD factorization:
//   - one that runs a Cholesky factorization (a call whose name holds
//     "Cholesky", or a mat.Cholesky it declares), an eigendecomposition (a
//     call whose name starts with SymEig or symEig, or a mat.EigenSym it
//     declares) and takes square roots (math.Sqrt): the
//     Cholesky-else-√eigenvalues pattern with its own tolerance. Without the
//     square roots it is something else (a Newton direction that floors
//     |λ|, a shift found from λ_min, a benchmark timing each kernel);
//   - one named like the old copies (psdName) that decomposes (either of
//     the above) without calling package psd, unless psdAllowed names it.
func secondPSDFactors(dir, file string, src []byte) ([]string, error) {
	if dir == psdHome {
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
		if !ok || fn.Body == nil {
			continue
		}
		chol, eig, sqrt, home := decompositions(fn.Body)
		name := fn.Name.Name
		switch {
		case chol && eig && sqrt:
			out = append(out, fset.Position(fn.Pos()).String()+": "+name+" (Cholesky, then an eigendecomposition)")
		case psdName.MatchString(name) && (chol || eig) && !home:
			if _, ok := psdAllowed[dir+"."+name]; !ok {
				out = append(out, fset.Position(fn.Pos()).String()+": "+name+" (a PSD factorization by name, without internal/psd)")
			}
		}
	}
	return out, nil
}

// decompositions reports whether body runs a Cholesky factorization, an
// eigendecomposition, takes a square root, and calls package psd.
func decompositions(body *ast.BlockStmt) (chol, eig, sqrt, home bool) {
	ast.Inspect(body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.CallExpr:
			var name string
			switch fun := x.Fun.(type) {
			case *ast.Ident:
				name = fun.Name
			case *ast.SelectorExpr:
				name = fun.Sel.Name
				if pkg, ok := fun.X.(*ast.Ident); ok {
					home = home || pkg.Name == "psd"
					sqrt = sqrt || pkg.Name == "math" && name == "Sqrt"
				}
			}
			if strings.Contains(name, "Cholesky") {
				chol = true
			}
			if strings.HasPrefix(name, "SymEig") || strings.HasPrefix(name, "symEig") {
				eig = true
			}
		case *ast.ValueSpec:
			if sel, ok := x.Type.(*ast.SelectorExpr); ok {
				if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "mat" {
					chol = chol || sel.Sel.Name == "Cholesky"
					eig = eig || sel.Sel.Name == "EigenSym"
				}
			}
		}
		return true
	})
	return chol, eig, sqrt, home
}

// TestOnePSDFactorization fails on a factorization of a positive
// semidefinite matrix written outside internal/psd: a Cholesky-else-
// eigendecomposition in one function, or a decomposing function named like
// the copies the module had (psdFactor, FactorGram, GramFactor, sqrtPSD)
// that does not call internal/psd. sqrtPSD stays, by name, for the reason
// psdAllowed gives.
func TestOnePSDFactorization(t *testing.T) {
	walkSources(t, func(dir, rel string, src []byte) error {
		got, err := secondPSDFactors(dir, rel, src)
		for _, g := range got {
			t.Errorf("%s restates the PSD factorization: use internal/psd (psd.Factor, psd.Principal)", g)
		}
		return err
	})
}

// The detector on sources whose answer is known: the module's old copies
// (newton's psdFactor on blas, sdp's FactorGram on gonum's mat, lrm's
// GramFactor on its symEig) are found; a wrapper that calls psd, a Cholesky
// alone under another name, a Cholesky-else-eigenvalues Newton direction
// without square roots, an allowed name, and the home are not.
func TestSecondPSDFactorsDetects(t *testing.T) {
	src := []byte(`package p

import "gonum.org/v1/gonum/mat"

func psdFactor(v blas.General) (blas.General, bool) {
	c := blas.NewSquare(v.Rows)
	if lowerCholesky(c) {
		return c, true
	}
	mu := make([]float64, v.Rows)
	ok := blas.SymEig(c, mu, true)
	c.Data[0] *= math.Sqrt(mu[0])
	return c, ok
}

func FactorGram(v *mat.SymDense) *mat.Dense {
	var ch mat.Cholesky
	if ch.Factorize(v) {
		return nil
	}
	var es mat.EigenSym
	es.Factorize(v, true)
	_ = math.Sqrt(es.Values(nil)[0])
	return nil
}

func GramFactor(v *mat.SymDense) *mat.Dense {
	vals, q, _ := symEig(v)
	_, _ = vals, q
	return nil
}

func FactorGramWrapped(v blas.General) (blas.General, int, error) {
	return psd.Factor(v)
}

func solveChol(a blas.General) bool {
	return blas.Cholesky(a)
}

func sqrtPSD(v, a, q, r blas.General) bool {
	return blas.SymEigVectors(a, q, nil)
}

func newtonDirection(h *mat.SymDense) float64 {
	var ch mat.Cholesky
	if ch.Factorize(h) {
		return 0
	}
	var eig mat.EigenSym
	eig.Factorize(h, true)
	return 1 / math.Max(math.Abs(eig.Values(nil)[0]), 1e-10)
}
`)
	got, err := secondPSDFactors("p", "p.go", src)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"p.go:5:1: psdFactor (Cholesky, then an eigendecomposition)",
		"p.go:16:1: FactorGram (Cholesky, then an eigendecomposition)",
		"p.go:27:1: GramFactor (a PSD factorization by name, without internal/psd)",
		"p.go:41:1: sqrtPSD (a PSD factorization by name, without internal/psd)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// sqrtPSD is allowed in mechanism/mf only.
	got, _ = secondPSDFactors("mechanism/mf", "mechanism/mf/p.go", src)
	for _, g := range got {
		if strings.Contains(g, "sqrtPSD") {
			t.Errorf("the allowed mechanism/mf.sqrtPSD was flagged: %s", g)
		}
	}
	if got, _ := secondPSDFactors(psdHome, "psd.go", src); len(got) != 0 {
		t.Errorf("the home package was flagged: %v", got)
	}
}
