// Package kronwork builds structured workloads of the kind HDMM's paper
// benchmarks (McKenna et al., "Optimizing error of high-dimensional
// statistical queries under differential privacy", VLDB 2018): unions of
// weighted Kronecker products of per-attribute blocks — identity, total,
// prefix, identity-plus-total, ranges, explicit predicate matrices — and
// marginals, over domains of 5–14 attributes. It is for tests and
// benchmarks: every random choice comes from a seeded generator, so a
// workload is reproducible from its name and seed (never use it for noise).
package kronwork

import (
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
)

// Kinds are the block kinds Random draws from.
var Kinds = []string{"identity", "total", "prefix", "identitytotal", "ranges", "matrix"}

// Block returns a block of the given kind for an attribute of size d;
// "ranges" draws a random cover of 0…d−1 by ranges (a partition plus a
// few random ranges), "matrix" a random 0/1 predicate matrix of 2–4 rows
// whose every column has a 1 (so every value is queried).
func Block(kind string, d int, r *rand.Rand) (*domain.Block, error) {
	switch kind {
	case "ranges":
		var rs [][2]int
		lo := 0
		for lo < d {
			hi := min(d-1, lo+r.IntN(max(1, d/3)+1))
			rs = append(rs, [2]int{lo, hi})
			lo = hi + 1
		}
		for i := 0; i < 2; i++ {
			a, b := r.IntN(d), r.IntN(d)
			rs = append(rs, [2]int{min(a, b), max(a, b)})
		}
		return domain.RangesBlock(d, rs)
	case "matrix":
		m := 2 + r.IntN(3)
		w := mat.NewDense(m, d, nil)
		for j := 0; j < d; j++ {
			w.Set(r.IntN(m), j, 1)
			for i := 0; i < m; i++ {
				if r.Float64() < 0.3 {
					w.Set(i, j, 1)
				}
			}
		}
		return domain.MatrixBlock(fmt.Sprintf("random%d-%d", d, r.Uint32()), w)
	}
	return domain.NewBlock(kind, d, workload.Blocks)
}

// Domain returns attributes a0, a1, … of the given sizes.
func Domain(sizes []int) []domain.Attribute {
	dom := make([]domain.Attribute, len(sizes))
	for i, d := range sizes {
		dom[i] = domain.Attribute{Name: fmt.Sprintf("a%d", i), Size: d}
	}
	return dom
}

// Random returns a union of terms product terms over a domain of the given
// sizes: each resolves 1…maxResolved attributes (the others total) with
// blocks drawn from kinds, weight 1 or 2. Blocks are shared across terms
// per (attribute, kind), as in real workloads, where many terms use the
// same per-attribute query sets.
func Random(sizes []int, terms, maxResolved int, kinds []string, seed uint64) (*domain.Kron, error) {
	r := rand.New(rand.NewPCG(seed, 0x6b726f6e))
	dom := Domain(sizes)
	shared := map[string]*domain.Block{}
	var ts []*domain.Term
	for t := 0; t < terms; t++ {
		k := 1 + r.IntN(min(maxResolved, len(sizes)))
		blocks := map[string]*domain.Block{}
		for _, a := range r.Perm(len(sizes))[:k] {
			kind := kinds[r.IntN(len(kinds))]
			key := fmt.Sprint(a, kind)
			b, ok := shared[key]
			if !ok {
				var err error
				if b, err = Block(kind, sizes[a], r); err != nil {
					return nil, err
				}
				shared[key] = b
			}
			blocks[dom[a].Name] = b
		}
		term, err := domain.NewProductTerm(fmt.Sprintf("t%d", t), float64(1+r.IntN(2)), dom, blocks)
		if err != nil {
			return nil, err
		}
		ts = append(ts, term)
	}
	return domain.NewKron(dom, ts)
}

// Product returns the one-term workload ⊗ᵢ kinds[i] (an empty kind is total).
func Product(sizes []int, kinds []string, seed uint64) (*domain.Kron, error) {
	r := rand.New(rand.NewPCG(seed, 0x70726f64))
	dom := Domain(sizes)
	blocks := map[string]*domain.Block{}
	for i, kind := range kinds {
		if kind == "" {
			continue
		}
		b, err := Block(kind, sizes[i], r)
		if err != nil {
			return nil, err
		}
		blocks[dom[i].Name] = b
	}
	t, err := domain.NewProductTerm("p", 1, dom, blocks)
	if err != nil {
		return nil, err
	}
	return domain.NewKron(dom, []*domain.Term{t})
}

// Pairs returns one product term per pair of attributes: prefix on the
// attributes flagged ordinal, identity on the others — the 2-way range
// and marginal queries of a survey table (C(k,2) terms).
func Pairs(sizes []int, ordinal []bool) (*domain.Kron, error) {
	dom := Domain(sizes)
	var ts []*domain.Term
	for a := range sizes {
		for b := a + 1; b < len(sizes); b++ {
			blocks := map[string]*domain.Block{}
			for _, i := range []int{a, b} {
				kind := "identity"
				if ordinal[i] {
					kind = "prefix"
				}
				blk, err := domain.NewBlock(kind, sizes[i], workload.Blocks)
				if err != nil {
					return nil, err
				}
				blocks[dom[i].Name] = blk
			}
			t, err := domain.NewProductTerm(fmt.Sprintf("%s-%s", dom[a].Name, dom[b].Name), 1, dom, blocks)
			if err != nil {
				return nil, err
			}
			ts = append(ts, t)
		}
	}
	return domain.NewKron(dom, ts)
}

// KWay returns the marginals term of every k-way marginal.
func KWay(sizes []int, k int) (*domain.Kron, error) {
	dom := Domain(sizes)
	var sets [][]int
	var rec func(start int, cur []int)
	rec = func(start int, cur []int) {
		if len(cur) == k {
			sets = append(sets, append([]int(nil), cur...))
			return
		}
		for a := start; a < len(sizes); a++ {
			rec(a+1, append(cur, a))
		}
	}
	rec(0, nil)
	t, err := domain.NewMarginalsTerm("kway", 1, dom, sets)
	if err != nil {
		return nil, err
	}
	return domain.NewKron(dom, []*domain.Term{t})
}

// AdultSizes are the attribute sizes of the UCI Adult table as coded in
// the Adult records (examples/adult/data/coded; 14 attributes, 6.4·10¹⁷ cells); AdultOrdinal flags
// the numeric ones (age, fnlwgt, education-num, capital-gain, capital-loss,
// hours-per-week).
var (
	AdultSizes   = []int{85, 9, 100, 16, 7, 15, 6, 5, 2, 100, 100, 99, 42, 2}
	AdultOrdinal = []bool{true, false, true, true, false, false, false, false, false, true, true, true, false, false}
)
