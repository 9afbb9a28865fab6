package domain_test

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/internal/matio"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
)

// The issue's example spec, with the matrix file written next to it.
func TestLoadSpecIssueExample(t *testing.T) {
	dir := t.TempDir()
	groups := mat.NewDense(3, 64, nil) // three race groups: 0–9, 10–40, 41–63
	for c := 0; c < 64; c++ {
		switch {
		case c < 10:
			groups.Set(0, c, 1)
		case c < 41:
			groups.Set(1, c, 1)
		default:
			groups.Set(2, c, 1)
		}
	}
	require.NoError(t, matio.WriteMatrix(filepath.Join(dir, "race_groups.npy"), groups))
	spec := `{"domain":   [{"name": "sex", "size": 2}, {"name": "age", "size": 115}, {"name": "race", "size": 64}],
	 "workload": [{"name": "t1", "weight": 1, "product": {"sex": "identity", "age": "prefix"}},
	              {"name": "t2", "product": {"race": {"matrix": "race_groups.npy"}, "age": {"ranges": [[0, 17], [18, 64], [65, 114]]}}},
	              {"name": "m",  "marginals": {"k": 2}}]}`
	path := filepath.Join(dir, "s.json")
	require.NoError(t, os.WriteFile(path, []byte(spec), 0o644))
	k, err := domain.LoadSpec(path, workload.Blocks)
	require.NoError(t, err)
	assert.Equal(t, 2*115*64, k.Cells())
	// t1: 2·115; t2: 3·3; m: sex×age 230, sex×race 128, age×race 7360.
	assert.Equal(t, 230+9+230+128+7360, k.Queries())
	terms := k.Terms()
	require.Len(t, terms, 3)
	assert.Equal(t, domain.TermProduct, terms[0].Kind)
	assert.Equal(t, domain.BlockIdentity, terms[0].Products[0].Blocks[0].Kind)
	assert.Equal(t, domain.BlockBuiltin, terms[0].Products[0].Blocks[1].Kind)
	assert.Equal(t, domain.BlockTotal, terms[0].Products[0].Blocks[2].Kind, "an attribute not named is total")
	b := terms[1].Products[0].Blocks[2]
	assert.Equal(t, domain.BlockMatrix, b.Kind)
	assert.Equal(t, "race_groups.npy", b.Spec)
	assert.Equal(t, filepath.Join(dir, "race_groups.npy"), b.Path)
	w, err := b.Matrix()
	require.NoError(t, err)
	assert.True(t, mat.Equal(w, groups))
	assert.Equal(t, [][2]int{{0, 17}, {18, 64}, {65, 114}}, terms[1].Products[0].Blocks[1].Ranges)
	assert.Equal(t, domain.TermMarginals, terms[2].Kind)
	assert.Equal(t, [][]int{{0, 1}, {0, 2}, {1, 2}}, terms[2].Sets)
	assert.Equal(t, 1.0, terms[1].Weight, "default weight")
}

// Equal blocks of one attribute are one shared object (the error
// evaluation and the planners cache per block).
func TestEqualBlocksAreShared(t *testing.T) {
	k, err := domain.ParseSpec(strings.NewReader(`{"domain": [{"name": "a", "size": 3}, {"name": "b", "size": 4}],
	  "workload": [{"product": {"a": "prefix"}}, {"product": {"a": "Prefix ", "b": "identity"}}, {"product": {"b": "identity"}},
	               {"marginals": {"sets": [["b"]]}}]}`), "", workload.Blocks)
	require.NoError(t, err)
	ts := k.Terms()
	assert.Same(t, ts[1].Products[0].Blocks[1], ts[3].Products[0].Blocks[1], "a marginal's identity is the product terms' identity")
	assert.Same(t, ts[2].Products[0].Blocks[0], ts[3].Products[0].Blocks[0], "and its total their total")
	assert.Same(t, ts[0].Products[0].Blocks[0], ts[1].Products[0].Blocks[0])
	assert.Equal(t, domain.BlockTotal, ts[0].Products[0].Blocks[1].Kind)
	assert.Same(t, ts[1].Products[0].Blocks[1], ts[2].Products[0].Blocks[1])
}

// Every product of a marginals term holds the parser's one identity and
// one total of each attribute size (attributes a and c, both of size 2,
// hold the same two): 2·2 distinct objects across the 8 marginals of upto
// 3 over 3 attributes, each the one the product term holds.
func TestMarginalsShareOneBlockPerKind(t *testing.T) {
	k, err := domain.ParseSpec(strings.NewReader(`{"domain": [{"name": "a", "size": 2}, {"name": "b", "size": 3}, {"name": "c", "size": 2}],
	  "workload": [{"product": {"b": "identity"}}, {"marginals": {"upto": 3}}]}`), "", workload.Blocks)
	require.NoError(t, err)
	ts := k.Terms()
	seen := map[*domain.Block]bool{}
	for _, p := range ts[1].Products {
		for i, b := range p.Blocks {
			seen[b] = true
			if i == 1 && b.Kind == domain.BlockIdentity {
				assert.Same(t, ts[0].Products[0].Blocks[1], b)
			}
			if i == 0 && b.Kind == domain.BlockTotal {
				assert.Same(t, ts[0].Products[0].Blocks[0], b)
			}
		}
	}
	assert.Len(t, ts[1].Products, 8)
	assert.Len(t, seen, 4)
	all := ts[1].Products[7].Blocks // the marginal on {a, b, c}
	assert.Same(t, all[0], all[2], "a and c have one size: one identity")
	assert.Same(t, ts[1].Products[0].Blocks[0], ts[1].Products[0].Blocks[2], "and one total")
}

func TestMarginalsSetOrder(t *testing.T) {
	k, err := domain.ParseSpec(strings.NewReader(`{"domain": [{"name": "a", "size": 2}, {"name": "b", "size": 3}, {"name": "c", "size": 2}],
	  "workload": [{"name": "u", "marginals": {"upto": 2}},
	               {"name": "s", "weight": 2, "marginals": {"sets": [["c", "a"], []]}}]}`), "", workload.Blocks)
	require.NoError(t, err)
	assert.Equal(t, [][]int{{}, {0}, {1}, {2}, {0, 1}, {0, 2}, {1, 2}}, k.Terms()[0].Sets)
	assert.Equal(t, [][]int{{0, 2}, {}}, k.Terms()[1].Sets, "sets are sorted to domain order, kept in the given order")
	assert.Equal(t, 1+2+3+2+6+4+6, k.Terms()[0].Queries())
	// The marginal on {a, c} is row-major over (a, c): its Gram is I₂ ⊗ J₃ ⊗ I₂.
	p := k.Terms()[1].Products[0]
	assert.Equal(t, domain.BlockIdentity, p.Blocks[0].Kind)
	assert.Equal(t, domain.BlockTotal, p.Blocks[1].Kind)
	assert.Equal(t, domain.BlockIdentity, p.Blocks[2].Kind)
	// Dense check against the existing marginals workload: all 2-way
	// marginals of 2×3×2 have the Gram of NewMarginals(dims, 2).
	k2, err := domain.ParseSpec(strings.NewReader(`{"domain": [{"name": "a", "size": 2}, {"name": "b", "size": 3}, {"name": "c", "size": 2}],
	  "workload": [{"marginals": {"k": 2}}]}`), "", workload.Blocks)
	require.NoError(t, err)
	mw, err := workload.NewMarginals([]int{2, 3, 2}, 2)
	require.NoError(t, err)
	v, err := k2.DenseGram(100)
	require.NoError(t, err)
	assert.True(t, mat.EqualApprox(v, mw.Gram(), 1e-12))
	assert.Equal(t, mw.Queries(), k2.Queries())
}

// Every bad spec of the issue's list gets an error wrapping ErrInput that
// names the problem (and the term and attribute where there is one).
func TestParseSpecRejectsBadSpecs(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, matio.WriteMatrix(filepath.Join(dir, "w5.npy"), mat.NewDense(2, 5, []float64{1, 1, 0, 0, 0, 0, 0, 1, 1, 1})))
	d2 := `"domain": [{"name": "a", "size": 4}, {"name": "b", "size": 3}]`
	cases := []struct{ name, spec, want string }{
		{"not json", `{"domain": [`, "malformed JSON"},
		{"empty input", ``, "empty"},
		{"trailing data", `{` + d2 + `, "workload": [{"product": {"a": "identity", "b": "identity"}}]} {}`, "unexpected data"},
		{"unknown top key", `{` + d2 + `, "workload": [{"product": {}}], "extra": 1}`, `unknown key "extra"`},
		{"no domain", `{"workload": [{"product": {}}]}`, `"domain" is missing`},
		{"empty workload", `{` + d2 + `, "workload": []}`, "no terms"},
		{"missing workload", `{` + d2 + `}`, "no terms"},
		{"unknown attribute", `{` + d2 + `, "workload": [{"name": "t", "product": {"z": "identity"}}]}`, `term "t": unknown attribute "z"`},
		{"unknown attribute in sets", `{` + d2 + `, "workload": [{"name": "m", "marginals": {"sets": [["a", "q"]]}}]}`, `unknown attribute "q"`},
		{"duplicate attribute", `{"domain": [{"name": "a", "size": 2}, {"name": "a", "size": 3}], "workload": [{"product": {}}]}`, `attribute "a" is listed twice`},
		{"duplicate term", `{` + d2 + `, "workload": [{"name": "t", "product": {"a": "identity", "b": "identity"}}, {"name": "t", "product": {}}]}`, `term name "t" is used twice`},
		{"attribute twice in product", `{` + d2 + `, "workload": [{"name": "t", "product": {"a": "identity", "a": "total"}}]}`, `attribute "a" is named twice`},
		{"attribute twice in marginal", `{` + d2 + `, "workload": [{"name": "m", "marginals": {"sets": [["a", "a"]]}}]}`, `appears twice`},
		{"set twice", `{` + d2 + `, "workload": [{"name": "m", "marginals": {"sets": [["a", "b"], ["b", "a"]]}}]}`, `listed twice`},
		{"matrix size mismatch", `{` + d2 + `, "workload": [{"name": "t", "product": {"a": {"matrix": "w5.npy"}, "b": "identity"}}]}`, `term "t", attribute "a": matrix "w5.npy" is 2×5: it needs 4 columns`},
		{"matrix missing", `{` + d2 + `, "workload": [{"name": "t", "product": {"a": {"matrix": "nope.npy"}}}]}`, `attribute "a": matrix "nope.npy"`},
		{"range outside", `{` + d2 + `, "workload": [{"name": "t", "product": {"a": {"ranges": [[0, 1], [2, 4]]}, "b": "identity"}}]}`, `term "t", attribute "a": range 2, [2, 4], is outside the domain 0…3`},
		{"range negative", `{` + d2 + `, "workload": [{"name": "t", "product": {"a": {"ranges": [[-1, 1]]}}}]}`, `outside the domain`},
		{"range reversed", `{` + d2 + `, "workload": [{"name": "t", "product": {"a": {"ranges": [[2, 1]]}}}]}`, `outside the domain 0…3 or empty`},
		{"range not pair", `{` + d2 + `, "workload": [{"name": "t", "product": {"a": {"ranges": [[1]]}}}]}`, `must be a pair`},
		{"range fractional", `{` + d2 + `, "workload": [{"name": "t", "product": {"a": {"ranges": [[0.5, 1]]}}}]}`, `not integers`},
		{"ranges empty", `{` + d2 + `, "workload": [{"name": "t", "product": {"a": {"ranges": []}}}]}`, `at least one range`},
		{"negative weight", `{` + d2 + `, "workload": [{"name": "t", "weight": -1, "product": {"a": "identity", "b": "identity"}}]}`, `term "t": weight must be a finite number ≥ 0, got -1`},
		{"huge weight", `{` + d2 + `, "workload": [{"name": "t", "weight": 1e999, "product": {}}]}`, `weight must be a finite number`},
		{"string weight", `{` + d2 + `, "workload": [{"name": "t", "weight": "x", "product": {}}]}`, `weight`},
		{"zero size", `{"domain": [{"name": "a", "size": 0}], "workload": [{"product": {}}]}`, `attribute "a": size must be an integer in 1…8192, got 0`},
		{"fractional size", `{"domain": [{"name": "a", "size": 2.5}], "workload": [{"product": {}}]}`, `got 2.5`},
		{"huge size", `{"domain": [{"name": "a", "size": 100000}], "workload": [{"product": {}}]}`, `1…8192`},
		{"no name", `{"domain": [{"size": 3}], "workload": [{"product": {}}]}`, `non-empty "name"`},
		{"name not string", `{"domain": [{"name": 3, "size": 3}], "workload": [{"product": {}}]}`, `field "name" must be a string, got a JSON number`},
		{"control character in a name", `{"domain": [{"name": "a\u001b[31m", "size": 2}], "workload": [{"product": {}}]}`, `names must be printable`},
		{"control character in a term name", `{` + d2 + `, "workload": [{"name": "t\u0007", "product": {}}]}`, `names must be printable`},
		{"uncovered cell", `{` + d2 + `, "workload": [{"name": "t", "product": {"a": {"ranges": [[0, 2]]}}}]}`, `the cell (a = 3, b = 0) is in no query`},
		{"unknown block", `{` + d2 + `, "workload": [{"name": "t", "product": {"a": "bogus"}}]}`, `term "t", attribute "a": block "bogus"`},
		{"marginals as block", `{` + d2 + `, "workload": [{"name": "t", "product": {"a": "marginals:dims=2x2"}}]}`, `not a 1-D block`},
		{"block number", `{` + d2 + `, "workload": [{"name": "t", "product": {"a": 5}}]}`, `a block is a name`},
		{"block both", `{` + d2 + `, "workload": [{"name": "t", "product": {"a": {"matrix": "w5.npy", "ranges": [[0, 1]]}}}]}`, `not both`},
		{"block unknown key", `{` + d2 + `, "workload": [{"name": "t", "product": {"a": {"rows": 1}}}]}`, `unknown key "rows"`},
		{"product and marginals", `{` + d2 + `, "workload": [{"name": "t", "product": {}, "marginals": {"k": 1}}]}`, `not both`},
		{"neither", `{` + d2 + `, "workload": [{"name": "t", "weight": 1}]}`, `needs "product" or "marginals"`},
		{"k too big", `{` + d2 + `, "workload": [{"name": "m", "marginals": {"k": 3}}]}`, `k must be an integer in 0…2`},
		{"k and upto", `{` + d2 + `, "workload": [{"name": "m", "marginals": {"k": 1, "upto": 1}}]}`, `exactly one of`},
		{"sets empty", `{` + d2 + `, "workload": [{"name": "m", "marginals": {"sets": []}}]}`, `"sets" is empty`},
		{"empty term name", `{` + d2 + `, "workload": [{"name": " ", "product": {}}]}`, `"name" is empty`},
		{"width too wide", `{` + d2 + `, "workload": [{"name": "t", "product": {"a": "width:k=9"}}]}`, `width`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k, err := domain.ParseSpec(strings.NewReader(c.spec), dir, workload.Blocks)
			require.Error(t, err, "spec accepted: %v", k)
			assert.True(t, errors.Is(err, inputerr.ErrInput), "wraps ErrInput: %v", err)
			assert.Contains(t, err.Error(), c.want)
			assert.NotContains(t, err.Error(), "Go ", "no Go type names in user messages")
			assert.NotContains(t, err.Error(), "struct")
		})
	}
}

// overflowDomain lists 6 attributes of 8000 values: 8000⁶ = 2.6e23 cells.
func overflowDomain() string {
	var s []string
	for i := 0; i < 6; i++ {
		s = append(s, `{"name": "x`+string(rune('0'+i))+`", "size": 8000}`)
	}
	return strings.Join(s, ",")
}

// A domain of more cells than an int holds is a valid spec: the marginals
// template never needs the count, and the templates that do refuse it by
// Cells = math.MaxInt. (It was refused as "the domain's cell count
// overflows" before, for every template.)
func TestSpecBeyondIntCells(t *testing.T) {
	k, err := domain.ParseSpec(strings.NewReader(`{"domain": [`+overflowDomain()+`], "workload": [{"product": {}}]}`), t.TempDir(), workload.Blocks)
	require.NoError(t, err)
	assert.Equal(t, math.MaxInt, k.Cells())
	want := new(big.Int).Exp(big.NewInt(8000), big.NewInt(6), nil) // 2.62e23
	assert.Equal(t, 0, want.Cmp(k.CellCount()), "exact count %v", k.CellCount())
	var sb strings.Builder
	for i := 0; i < 100; i++ {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `{"name": "b%d", "size": 2}`, i)
	}
	k, err = domain.ParseSpec(strings.NewReader(`{"domain": [`+sb.String()+`], "workload": [{"name": "m", "marginals": {"upto": 3}}]}`), t.TempDir(), workload.Blocks)
	require.NoError(t, err)
	assert.Equal(t, 0, new(big.Int).Lsh(big.NewInt(1), 100).Cmp(k.CellCount()), "2^100 cells")
}

func TestLoadSpecMissingFile(t *testing.T) {
	_, err := domain.LoadSpec(filepath.Join(t.TempDir(), "none.json"), workload.Blocks)
	assert.ErrorIs(t, err, inputerr.ErrInput)
}

// BenchmarkParseSpecMarginals100 parses all 0…3-way marginals of 100 binary
// attributes (166,751 Kronecker products over 2¹⁰⁰ cells), the spec whose
// coverage check used to walk every attribute with every product alive.
func BenchmarkParseSpecMarginals100(b *testing.B) {
	var sb strings.Builder
	for i := 0; i < 100; i++ {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `{"name": "b%d", "size": 2}`, i)
	}
	spec := `{"domain": [` + sb.String() + `], "workload": [{"name": "m", "marginals": {"upto": 3}}]}`
	for b.Loop() {
		if _, err := domain.ParseSpec(strings.NewReader(spec), "", nil); err != nil {
			b.Fatal(err)
		}
	}
}

// A codebook in the spec: values give the size by their count, edges by
// their bins; each value and each number maps to the code the definition
// says (checked against a linear scan of the edges, an independent route
// from the binary search).
func TestSpecCodebook(t *testing.T) {
	spec := `{"domain": [{"name": "sex", "values": ["Female", "Male"]},
	  {"name": "age", "edges": [17, 18, 30, 50.5, 91]},
	  {"name": "hours", "edges": [0, 40, 100], "clamp": true, "size": 2},
	  {"name": "country", "values": ["United-States", "Mexico", "Other"], "other": "Other", "aliases": {"USA": "United-States"}},
	  {"name": "n", "size": 3}],
	 "workload": [{"name": "m", "marginals": {"k": 1}}]}`
	k, err := domain.ParseSpec(strings.NewReader(spec), ".", workload.Blocks)
	require.NoError(t, err)
	at := k.Attributes()
	assert.Equal(t, []int{2, 4, 2, 3, 3}, []int{at[0].Size, at[1].Size, at[2].Size, at[3].Size, at[4].Size})
	assert.Nil(t, at[4].Codebook, "integer codes keep working unchanged")
	sex, age, hours, country := at[0].Codebook, at[1].Codebook, at[2].Codebook, at[3].Codebook
	for s, want := range map[string]int{"Female": 0, " Male ": 1} {
		c, err := sex.Code(s)
		require.NoError(t, err)
		assert.Equal(t, want, c)
	}
	_, err = sex.Code("male")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `not one of the values "Female", "Male"`)
	edges := []float64{17, 18, 30, 50.5, 91}
	for _, v := range []float64{17, 17.5, 18, 29.999, 30, 50.4, 50.5, 90, 90.99} {
		want := -1
		for i := 0; i+1 < len(edges); i++ {
			if edges[i] <= v && v < edges[i+1] {
				want = i
			}
		}
		c, err := age.CodeNumber(v)
		require.NoError(t, err, "%v", v)
		assert.Equal(t, want, c, "%v", v)
	}
	for _, bad := range []string{"16.99", "91", "1e9", "NaN", "x", ""} {
		_, err := age.Code(bad)
		assert.Error(t, err, bad)
	}
	_, err = age.Code("91")
	assert.Contains(t, err.Error(), `at or above the last edge 91`)
	for v, want := range map[string]int{"-5": 0, "0": 0, "39": 0, "40": 1, "99": 1, "100": 1, "1e6": 1} {
		c, err := hours.Code(v)
		require.NoError(t, err, v)
		assert.Equal(t, want, c, "clamped %s", v)
	}
	for v, want := range map[string]int{"USA": 0, "Mexico": 1, "Canada": 2, "Other": 2} {
		c, err := country.Code(v)
		require.NoError(t, err)
		assert.Equal(t, want, c, v)
	}
	assert.Equal(t, "[17, 18)", age.Label(0))
	assert.Equal(t, "[18, 50.5)", age.RangeLabel(1, 2))
	assert.Equal(t, "Female..Male", sex.RangeLabel(0, 1))
	assert.Equal(t, "Mexico", country.Label(1))
}

// Bad codebooks are refused with a message naming the attribute and what is
// wrong, wrapping ErrInput.
func TestSpecCodebookRefused(t *testing.T) {
	for _, c := range []struct{ domain, want string }{
		{`{"name": "a", "values": []}`, `"values" is empty`},
		{`{"name": "a", "values": ["x", "x"]}`, `listed twice`},
		{`{"name": "a", "values": ["x", ""]}`, `may not be empty`},
		{`{"name": "a", "values": ["x", " y"]}`, `surrounding spaces`},
		{`{"name": "a", "values": ["x"], "other": "z"}`, `"other" is "z", which is not one of the values`},
		{`{"name": "a", "values": ["x"], "aliases": {"y": "z"}}`, `alias "y" names "z"`},
		{`{"name": "a", "values": ["x", "y"], "aliases": {"y": "x"}}`, `alias "y" is also a value`},
		{`{"name": "a", "values": ["x"], "clamp": true}`, `"clamp" applies to "edges"`},
		{`{"name": "a", "values": ["x"], "edges": [0, 1]}`, `not both`},
		{`{"name": "a", "edges": [0]}`, `at least two`},
		{`{"name": "a", "edges": [0, 2, 2]}`, `increase strictly: edge 3 (2) follows 2`},
		{`{"name": "a", "edges": [0, 2, 1]}`, `increase strictly`},
		{`{"name": "a", "edges": [0, 1e999]}`, `not a finite number`},
		{`{"name": "a", "edges": [0, 1], "other": "x"}`, `apply to "values"`},
		{`{"name": "a", "values": ["x", "y"], "size": 3}`, `"size" is 3 but the codebook has 2 codes`},
		{`{"name": "a", "clamp": true, "size": 2}`, `need "values" or "edges"`},
		{`{"name": "a"}`, `needs a "size"`},
		{`{"name": "answer", "size": 2}`, `attribute "answer": the name is reserved`},
		{`{"name": "table", "values": ["x"]}`, `reserved`},
	} {
		spec := `{"domain": [` + c.domain + `], "workload": [{"marginals": {"k": 1}}]}`
		_, err := domain.ParseSpec(strings.NewReader(spec), ".", workload.Blocks)
		require.Error(t, err, c.domain)
		assert.ErrorIs(t, err, inputerr.ErrInput)
		assert.Contains(t, err.Error(), c.want, c.domain)
	}
	// The label column of a codebook attribute is reserved too.
	spec := `{"domain": [{"name": "sex", "values": ["F", "M"]}, {"name": "sex label", "size": 2}], "workload": [{"marginals": {"k": 1}}]}`
	_, err := domain.ParseSpec(strings.NewReader(spec), ".", workload.Blocks)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `the label column of attribute "sex"`)
}
