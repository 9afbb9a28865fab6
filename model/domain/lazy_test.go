package domain_test

import (
	"runtime"
	"strings"
	"sync"
	"testing"

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
