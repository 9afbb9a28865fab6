package marginals

import (
	"cmp"
	"encoding/binary"
	"slices"
)

// MaxPairs bounds Σ_S 2^|S|, the number of (marginal, subset) pairs a plan
// enumerates and stores (12 bytes each); requests above it are refused with
// the count before the lattice is built.
const MaxPairs = 1 << 25

// lattice is the down-closure of a workload's positive-weight marginals:
// every residual subset T with dim_T > 0 contained in one of them, sorted by
// size and then lexicographically, and for every marginal S (weight 0
// included) the residuals T ⊆ S with their coefficients p_{S,T} in var_S.
type lattice struct {
	sizes []int
	res   [][]int // residual subsets, sorted by (size, lexicographic)
	// Rows, one per marginal: res indices idx[lo[i]:hi[i]] and p_{S,T}.
	lo, hi []int32
	idx    []int32
	coef   []float64
	// estimable[i] is false when some T ⊆ S_i with dim_T > 0 is not measured
	// (possible only for marginals of weight 0).
	estimable []bool
	// lookup returns the index in res of a residual subset.
	lookup func(t []int) (int, bool)
}

// pairCount returns Σ_S 2^|S| capped at MaxPairs+1.
func pairCount(sets []Set) int64 {
	var n int64
	for _, s := range sets {
		if len(s.Attrs) > 25 {
			return MaxPairs + 1
		}
		n += int64(1) << len(s.Attrs)
		if n > MaxPairs {
			return MaxPairs + 1
		}
	}
	return n
}

// keyer maps an attribute set to a map key. The packed form (one uint64,
// 16 bits per attribute) is used when every set has at most 4 attributes and
// the domain fewer than 2¹⁶ − 1 attributes; otherwise a byte string.
type keyer[K comparable] func(buf []byte, t []int) K

func packedKey(_ []byte, t []int) uint64 {
	var k uint64
	for _, a := range t {
		k = k<<16 | uint64(a+1)
	}
	return k
}

func stringKey(buf []byte, t []int) string {
	buf = buf[:0]
	for _, a := range t {
		buf = binary.AppendUvarint(buf, uint64(a))
	}
	return string(buf)
}

func buildLattice(sizes []int, sets []Set) (*lattice, error) {
	if p := pairCount(sets); p > MaxPairs {
		return nil, errorf("the marginals have more than %d (marginal, subset) pairs (Σ 2^|S|); the limit is %d", MaxPairs, MaxPairs)
	}
	small := len(sizes) < 1<<16-1
	for _, s := range sets {
		if len(s.Attrs) > 4 {
			small = false
		}
	}
	if small {
		return buildLatticeKeyed(sizes, sets, packedKey)
	}
	return buildLatticeKeyed(sizes, sets, stringKey)
}

// forSubsets calls f with every subset T of s (in a reused buffer) whose
// residual is non-empty (no attribute of size 1 in T), and the mask of T.
func forSubsets(sizes, s []int, buf []int, f func(t []int, mask uint64) bool) bool {
	live := uint64(0) // attributes of s that may enter T
	for j, a := range s {
		if sizes[a] > 1 {
			live |= 1 << j
		}
	}
	// Enumerate the submasks of live in increasing order.
	for m := uint64(0); ; m = (m - live) & live {
		t := buf[:0]
		for j := range s {
			if m&(1<<j) != 0 {
				t = append(t, s[j])
			}
		}
		if !f(t, m) {
			return false
		}
		if m == live {
			return true
		}
	}
}

func buildLatticeKeyed[K comparable](sizes []int, sets []Set, key keyer[K]) (*lattice, error) {
	tbuf := make([]int, 0, 64)
	// Per attribute, (d−1)/d and 1/d²: the factors of p_{S,T}.
	shrink, inv2 := make([]float64, len(sizes)), make([]float64, len(sizes))
	for a, d := range sizes {
		fd := float64(d)
		shrink[a], inv2[a] = (fd-1)/fd, 1/(fd*fd)
	}
	pairs := pairCount(sets)
	tab := newSubsetTable(len(sizes), int(pairs/8+16), key)
	var res [][]int
	var arena []int
	l := &lattice{sizes: sizes, lo: make([]int32, len(sets)), hi: make([]int32, len(sets)), estimable: make([]bool, len(sets)),
		idx: make([]int32, 0, pairs), coef: make([]float64, 0, pairs)}
	// row appends set i's subsets that are (or, when insert, become)
	// residuals, with their coefficients p_{S,T}, and reports whether all
	// were found. Indices refer to res until renumbered below.
	row := func(i int, insert bool) (ok, overflow bool) {
		s := sets[i]
		ok = true
		l.lo[i] = int32(len(l.idx))
		forSubsets(sizes, s.Attrs, tbuf, func(t []int, mask uint64) bool {
			j, found := tab.find(t)
			if !found {
				if !insert {
					ok = false
					return true
				}
				if len(res) >= MaxSubsets {
					overflow = true
					return false
				}
				j = int32(len(res))
				tab.insert(t, j)
				if len(arena)+len(t) > cap(arena) { // one allocation per 64k attributes, not per residual
					arena = make([]int, 0, max(1<<16, len(t)))
				}
				arena = append(arena, t...)
				res = append(res, arena[len(arena)-len(t):len(arena):len(arena)])
			}
			p := 1.0
			for b, a := range s.Attrs {
				if mask&(1<<b) != 0 {
					p *= shrink[a]
				} else {
					p *= inv2[a]
				}
			}
			l.idx = append(l.idx, j)
			l.coef = append(l.coef, p)
			return true
		})
		l.hi[i] = int32(len(l.idx))
		return ok, overflow
	}
	for i, s := range sets {
		if s.Weight == 0 {
			continue
		}
		if _, overflow := row(i, true); overflow {
			return nil, errorf("the marginals have more than %d residual subsets; the limit is %d", MaxSubsets, MaxSubsets)
		}
		l.estimable[i] = true
	}
	for i, s := range sets { // weight 0: estimable only from measured residuals
		if s.Weight == 0 {
			l.estimable[i], _ = row(i, false)
		}
	}
	// Sort the residuals and renumber.
	order := make([]int32, len(res))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(x, y int32) int {
		a, b := res[x], res[y]
		if c := cmp.Compare(len(a), len(b)); c != 0 {
			return c
		}
		return slices.Compare(a, b)
	})
	renum := make([]int32, len(res))
	l.res = make([][]int, len(res))
	for newI, oldI := range order {
		renum[oldI] = int32(newI)
		l.res[newI] = res[oldI]
	}
	for q, j := range l.idx {
		l.idx[q] = renum[j]
	}
	l.lookup = func(t []int) (int, bool) {
		j, ok := tab.find(t)
		if !ok {
			return 0, false
		}
		return int(renum[j]), true
	}
	return l, nil
}

// subsetTable maps residual subsets to indices: the empty set, singletons
// and (for at most pairTableMax attributes) pairs through direct arrays —
// in a workload of all ≤3-way marginals seven of every eight lookups — and
// larger sets through a hash map.
type subsetTable[K comparable] struct {
	n      int
	empty  int32
	single []int32
	pair   []int32 // n×n, upper triangle used; nil when n > pairTableMax
	index  map[K]int32
	key    keyer[K]
	kbuf   []byte
}

// pairTableMax bounds the attributes for the direct pair array (4 MiB).
const pairTableMax = 1024

func newSubsetTable[K comparable](n, hint int, key keyer[K]) *subsetTable[K] {
	t := &subsetTable[K]{n: n, empty: -1, single: make([]int32, n), index: make(map[K]int32, hint), key: key}
	for i := range t.single {
		t.single[i] = -1
	}
	if n <= pairTableMax {
		t.pair = make([]int32, n*n)
		for i := range t.pair {
			t.pair[i] = -1
		}
	}
	return t
}

// slot returns the direct-array cell of t, or nil when t goes to the map.
func (s *subsetTable[K]) slot(t []int) *int32 {
	switch {
	case len(t) == 0:
		return &s.empty
	case len(t) == 1:
		return &s.single[t[0]]
	case len(t) == 2 && s.pair != nil:
		return &s.pair[t[0]*s.n+t[1]]
	}
	return nil
}

func (s *subsetTable[K]) find(t []int) (int32, bool) {
	if p := s.slot(t); p != nil {
		return *p, *p >= 0
	}
	j, ok := s.index[s.key(s.kbuf, t)]
	return j, ok
}

func (s *subsetTable[K]) insert(t []int, j int32) {
	if p := s.slot(t); p != nil {
		*p = j
		return
	}
	s.index[s.key(s.kbuf, t)] = j
}
