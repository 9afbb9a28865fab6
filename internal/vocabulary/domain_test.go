package vocabulary

import (
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strings"
	"testing"
)

// domainHome is where the multi-attribute domain is spelled: domain.Attribute
// (a name and a number of values), domain.Term (a named, weighted list of
// Kronecker products) and domain.Kron (a domain and its terms).
const domainHome = "model/domain"

// domainExceptions are the struct types outside domainHome that have the
// shape of a domain type and are not a second one, each with why.
var domainExceptions = map[string]string{
	"pipeline/tables.explicitWorkload": "unexported: a domain.Kron's terms as the release computes with them, each block " +
		"as an explicit matrix converted once, and (flatten) a dense strategy's one-attribute view of n cells, which no " +
		"Kron holds (attributes have at most domain.MaxAttributeSize values); built only from a *domain.Kron",
	"pipeline/tables.explicitTerm": "unexported: one term of tables.explicitWorkload",
}

// secondDomainTypes returns "dir.Type" for every struct type of src (a
// non-test Go file of package directory dir), exported or not, that
// restates a domain type: a Name string and a Size int and nothing else
// (an attribute); a Name string, a Weight float64 and a Products, Blocks
// or Sets slice (a term); or a Domain or Attributes slice with a Terms
// slice (a workload of terms). domainHome is skipped.
func secondDomainTypes(dir, file string, src []byte) ([]string, error) {
	if dir == domainHome {
		return nil, nil
	}
	f, err := parser.ParseFile(token.NewFileSet(), file, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		sp, ok := n.(*ast.TypeSpec)
		if !ok {
			return true
		}
		st, ok := sp.Type.(*ast.StructType)
		if !ok {
			return true
		}
		typ := map[string]string{} // field name → "string", "int", "float64" or "slice"
		for _, fl := range st.Fields.List {
			kind := ""
			switch t := fl.Type.(type) {
			case *ast.Ident:
				kind = t.Name
			case *ast.ArrayType:
				kind = "slice"
			}
			for _, name := range fl.Names {
				typ[name.Name] = kind
			}
		}
		attribute := len(typ) == 2 && typ["Name"] == "string" && typ["Size"] == "int"
		term := typ["Name"] == "string" && typ["Weight"] == "float64" &&
			(typ["Products"] == "slice" || typ["Blocks"] == "slice" || typ["Sets"] == "slice")
		workload := (typ["Domain"] == "slice" || typ["Attributes"] == "slice") && typ["Terms"] == "slice"
		if attribute || term || workload {
			out = append(out, dir+"."+sp.Name.Name)
		}
		return true
	})
	return out, nil
}

// TestOneDomain: no package besides domain declares a struct that restates
// an attribute, a term or a workload of terms, except the listed ones.
func TestOneDomain(t *testing.T) {
	found := map[string]bool{}
	walkSources(t, func(dir, rel string, src []byte) error {
		bad, err := secondDomainTypes(dir, rel, src)
		for _, b := range bad {
			found[b] = true
			if _, ok := domainExceptions[b]; !ok {
				t.Errorf("%s (%s) restates the multi-attribute domain: use domain.Attribute, domain.Term or domain.Kron", b, rel)
			}
		}
		return err
	})
	var stale []string
	for e := range domainExceptions {
		if !found[e] {
			stale = append(stale, e)
		}
	}
	sort.Strings(stale)
	for _, e := range stale {
		t.Errorf("exception %s no longer exists: remove it from domainExceptions", e)
	}
}

// TestSecondDomainIsCaught: the check flags the restatements that used to
// live in records and tables, and leaves alone the home package and structs
// of a similar but different shape (a report row with a name and a weight,
// a file with a name and a size among other fields).
func TestSecondDomainIsCaught(t *testing.T) {
	src := []byte(`package tables

type Attribute struct {
	Name string
	Size int
}

type Term struct {
	Name     string
	Weight   float64
	Products []Product
}

type Workload struct {
	Domain []Attribute
	Terms  []Term
}

type TermError struct {
	Name    string
	Weight  float64
	Queries int
}

type file struct {
	Name string
	Size int
	Mode uint32
}
`)
	got, err := secondDomainTypes("pipeline/tables", "pipeline/tables/workload.go", src)
	if err != nil {
		t.Fatal(err)
	}
	want := "pipeline/tables.Attribute,pipeline/tables.Term,pipeline/tables.Workload"
	if strings.Join(got, ",") != want {
		t.Errorf("got %q, want %q", strings.Join(got, ","), want)
	}
	if got, _ := secondDomainTypes(domainHome, "model/domain/kron.go", src); len(got) != 0 {
		t.Errorf("the home package was flagged: %v", got)
	}
}
