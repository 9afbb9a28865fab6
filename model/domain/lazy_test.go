package domain_test

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
)

// Parsing a spec over two attributes of size 4096 with identity, total and
// marginals terms builds no d×d Gram (one is 128 MiB): the parser's
// identity and total blocks are structural until a caller asks for their
// Gram. Measured from the runtime's allocation counter: below 16 MiB in
// all (the sorted vectors and maps of the parser are O(d)). The Grams then
// built on demand equal the dense ones (I and 11ᵀ), and concurrent first
// calls all get the same matrix.
func TestIdentityTotalGramsLazy(t *testing.T) {
	const d = 4096
	src := `{"domain": [{"name": "a", "size": 4096}, {"name": "b", "size": 4096}],
	  "workload": [{"name": "ia", "product": {"a": "identity"}},
	               {"name": "ib", "product": {"b": "identity", "a": "total"}},
	               {"name": "m", "marginals": {"k": 1}}]}`
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	k, err := domain.ParseSpec(strings.NewReader(src), "", workload.Blocks)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("parse allocated %d bytes (one Gram: %d)", alloc, 8*d*d)
	require.Less(t, alloc, uint64(16<<20))

	var id, tot *domain.Block
	for _, p := range k.Products() {
		for _, b := range p.Blocks {
			switch b.Kind {
			case domain.BlockIdentity:
				id = b
			case domain.BlockTotal:
				tot = b
			}
		}
	}
	require.NotNil(t, id)
	require.NotNil(t, tot)
	grams := make([]*mat.SymDense, 4)
	var wg sync.WaitGroup
	for i := range grams {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			grams[i] = id.Gram()
		}(i)
	}
	wg.Wait()
	for _, g := range grams[1:] {
		require.Same(t, grams[0], g)
	}
	g := grams[0]
	for _, ij := range [][2]int{{0, 0}, {4095, 4095}, {0, 1}, {17, 4000}} {
		want := 0.0
		if ij[0] == ij[1] {
			want = 1
		}
		require.Equal(t, want, g.At(ij[0], ij[1]))
		require.Equal(t, 1.0, tot.Gram().At(ij[0], ij[1]))
	}
}

// A marginals term's products share their block lists' storage (windows
// of one array per set shape and first position modulo the period of the
// attribute sizes; one allocation when they do not repeat). Each must still be exactly the materialised list
// the same marginal written as a product term gets from the parser's
// independent path (NewProductTerm, which names the identities and
// totals the rest): the same block objects at every attribute, capacity n
// (an append cannot reach a neighbour), the same query counts, and the
// same dense Gram. Uniform and mixed sizes, k, upto and listed sets
// (unsorted, the empty set) are covered, with sizes of period 1, 2 and 3
// (shared windows) and sizes that do not repeat (own lists).
func TestMarginalsWindowsEqualProducts(t *testing.T) {
	for _, tc := range []struct{ sizes []int }{
		{[]int{2, 2, 2, 2, 2}},
		{[]int{3, 3, 3, 3}},
		{[]int{2, 3, 2, 4}},
		{[]int{1, 2, 1}},
		{[]int{2, 3, 2, 3, 2, 3}},
		{[]int{2, 3, 1, 2, 3, 1, 2}},
		{repeat([]int{1, 2}, 16)},    // period 2: windows from 16 attributes on
		{repeat([]int{1, 1, 2}, 25)}, // period 3
		{repeat([]int{1, 2}, 15)},    // period 2 of 15: own lists
	} {
		var names, dom []string
		for i, d := range tc.sizes {
			names = append(names, string(rune('a'+i)))
			dom = append(dom, fmt.Sprintf(`{"name": %q, "size": %d}`, names[i], d))
		}
		margs := []string{`{"k": 2}`, `{"upto": 3}`, `{"k": 1}`, `{"sets": [["c", "a"], [], ["b"], ["c", "b", "a"], ["a"]]}`}
		if len(tc.sizes) > 8 {
			margs = []string{`{"k": 2}`, `{"sets": [["c", "a"], [], ["b"], ["c", "b", "a"], ["a"], ["d", "i", "m"], ["b", "n"],
				["a", "c", "e", "g", "i"], ["c", "e", "g", "i", "k"], ["b", "d", "f", "h", "j"]]}`} // 5 attributes: keyed by a string
		}
		for _, marg := range margs {
			src := `{"domain": [` + strings.Join(dom, ", ") + `], "workload": [{"name": "m", "marginals": ` + marg + `}]}`
			k, err := domain.ParseSpec(strings.NewReader(src), "", nil)
			require.NoError(t, err, src)
			m := k.Terms()[0]
			// The same marginals as product terms, one per set.
			var prods []string
			for si, s := range m.Sets {
				var fs []string
				for _, a := range s {
					fs = append(fs, fmt.Sprintf(`%q: "identity"`, names[a]))
				}
				prods = append(prods, fmt.Sprintf(`{"name": "p%d", "product": {%s}}`, si, strings.Join(fs, ", ")))
			}
			src2 := `{"domain": [` + strings.Join(dom, ", ") + `], "workload": [{"name": "m", "marginals": ` + marg + `}, ` + strings.Join(prods, ", ") + `]}`
			k2, err := domain.ParseSpec(strings.NewReader(src2), "", nil)
			require.NoError(t, err, src2)
			m2 := k2.Terms()[0]
			for si, p := range m2.Products {
				q := k2.Terms()[si+1].Products[0]
				require.Len(t, p.Blocks, len(tc.sizes))
				assert.Equal(t, len(tc.sizes), cap(p.Blocks), "%s: set %v: capacity", src, m2.Sets[si])
				for i := range p.Blocks {
					assert.Same(t, q.Blocks[i], p.Blocks[i], "%s: set %v, attribute %d", src, m2.Sets[si], i)
				}
				assert.Equal(t, q.Queries(), p.Queries())
			}
			assert.Equal(t, m.Queries(), k.Queries())
			g, err := k.DenseGram(1000)
			require.NoError(t, err)
			part, err := k2.Part(seq(1, len(m.Sets)))
			require.NoError(t, err)
			g2, err := part.DenseGram(1000)
			require.NoError(t, err)
			assert.True(t, mat.EqualApprox(g, g2, 1e-12), src)
		}
	}
}

// repeat returns the first n entries of pattern repeated.
func repeat(pattern []int, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = pattern[i%len(pattern)]
	}
	return out
}

// seq returns lo, lo+1, …, lo+n−1.
func seq(lo, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = lo + i
	}
	return out
}

// NewMarginalsTerm (outside the parser) keeps the caller's sets unchanged,
// sorts its own copies, and its products hold the identity exactly at
// their set's positions; a product changed after the fact is checked
// block by block by NewKron, which refuses a wrong size.
func TestNewMarginalsTermWindows(t *testing.T) {
	dom := []domain.Attribute{{Name: "a", Size: 2}, {Name: "b", Size: 2}, {Name: "c", Size: 2}}
	sets := [][]int{{2, 0}, {1}, {}}
	tm, err := domain.NewMarginalsTerm("m", 1, dom, sets)
	require.NoError(t, err)
	assert.Equal(t, [][]int{{2, 0}, {1}, {}}, sets, "the caller's sets are not sorted in place")
	assert.Equal(t, [][]int{{0, 2}, {1}, {}}, tm.Sets)
	for si, p := range tm.Products {
		in := map[int]bool{}
		for _, a := range tm.Sets[si] {
			in[a] = true
		}
		for i, b := range p.Blocks {
			want := domain.BlockTotal
			if in[i] {
				want = domain.BlockIdentity
			}
			assert.Equal(t, want, b.Kind, "set %v, attribute %d", tm.Sets[si], i)
		}
	}
	k, err := domain.NewKron(dom, []*domain.Term{tm})
	require.NoError(t, err)
	assert.Equal(t, 4+2+1, k.Queries())

	bad, err := domain.NewMarginalsTerm("m", 1, dom, [][]int{{0}})
	require.NoError(t, err)
	wrong, err := domain.NewBlock("identity", 3, nil)
	require.NoError(t, err)
	bad.Products[0].Blocks = []*domain.Block{wrong, bad.Products[0].Blocks[1], bad.Products[0].Blocks[2]}
	_, err = domain.NewKron(dom, []*domain.Term{bad})
	require.ErrorIs(t, err, domain.ErrInput)
	assert.Contains(t, err.Error(), `attribute "a": block size`)

	// A product a caller put in the term's place is counted from its
	// blocks, not from the term's sets: a product term's identity on b and
	// c in place of the marginal on ∅ has 4 queries, not 1.
	other, err := domain.NewMarginalsTerm("m", 1, dom, [][]int{{}, {0}})
	require.NoError(t, err)
	id, err := domain.NewBlock("identity", 2, nil)
	require.NoError(t, err)
	pt, err := domain.NewProductTerm("p", 1, dom, map[string]*domain.Block{"b": id, "c": id})
	require.NoError(t, err)
	other.Products[0] = pt.Products[0]
	k, err = domain.NewKron(dom, []*domain.Term{other})
	require.NoError(t, err)
	assert.Equal(t, 4+2, k.Queries())
}

// Parsing all ≤3-way marginals of 100 attributes (166,751 products)
// allocates well under the 133 MB that one block pointer per attribute per
// product took: the products, their sets and the window arrays come to
// about 29 MB when all sizes are 2 and 36 MB when they alternate 2, 3
// (twice the windows); 48 MiB leaves room for the decoder and maps.
func TestMarginals100ParseMemory(t *testing.T) {
	for _, sizes := range [][]int{{2}, {2, 3}} {
		marginals100Memory(t, sizes)
	}
}

func marginals100Memory(t *testing.T, sizes []int) {
	var dom []string
	for i := 0; i < 100; i++ {
		dom = append(dom, fmt.Sprintf(`{"name": "a%d", "size": %d}`, i, sizes[i%len(sizes)]))
	}
	src := `{"domain": [` + strings.Join(dom, ", ") + `], "workload": [{"name": "m3", "marginals": {"k": 3}},
	  {"name": "m2", "marginals": {"k": 2}}, {"name": "m1", "marginals": {"k": 1}}]}`
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	k, err := domain.ParseSpec(strings.NewReader(src), "", nil)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("parse allocated %d bytes", alloc)
	assert.Less(t, alloc, uint64(48<<20))
	assert.Len(t, k.Products(), 161700+4950+100)
	if len(sizes) == 1 {
		assert.Equal(t, 161700*8+4950*4+100*2, k.Queries())
	}
}
