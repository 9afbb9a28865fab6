package domain

import (
	"sort"
	"strconv"

	"github.com/dpsolve/dpsolve/internal/inputerr"
)

// marginalBlocks are the identity and total block of each attribute that a
// marginals term's products are made of. A Term built by NewMarginalsTerm
// keeps them, so NewKron checks its products from their sets (O(|S|) each)
// rather than walking every block of every product.
type marginalBlocks struct {
	sizes        []int
	ident, total []*Block
}

// sharedMarginalBlocks returns one identity and one total block per
// attribute size: attributes of equal size hold the same two objects (a
// block is its query matrix, whatever the attribute), which lets the
// products of a marginals term share their block storage (layoutBlocks).
func sharedMarginalBlocks(domain []Attribute) (*marginalBlocks, error) {
	type pair struct{ ident, total *Block }
	bySize := map[int]pair{}
	mb := &marginalBlocks{sizes: make([]int, len(domain)), ident: make([]*Block, len(domain)), total: make([]*Block, len(domain))}
	for i, a := range domain {
		p, ok := bySize[a.Size]
		if !ok {
			var err error
			if p.ident, err = NewBlock("identity", a.Size, nil); err == nil {
				p.total, err = NewBlock("total", a.Size, nil)
			}
			if err != nil {
				return nil, inputerr.Errorf("domain", "attribute %q: %v", a.Name, err)
			}
			bySize[a.Size] = p
		}
		mb.sizes[i], mb.ident[i], mb.total[i] = a.Size, p.ident, p.total
	}
	return mb, nil
}

// period returns the smallest p ≥ 1 such that attributes i and i+p hold
// the same identity and total blocks for every i (1 when all attributes
// have one size; the attribute count when no shift repeats them): the
// shifts by a multiple of p keep every position's blocks. It is n minus
// the longest proper border of the sequence of blocks (the prefix
// function of Knuth, Morris and Pratt), O(n).
func (mb *marginalBlocks) period() int {
	n := len(mb.ident)
	if n == 0 {
		return 1
	}
	same := func(i, j int) bool { return mb.ident[i] == mb.ident[j] && mb.total[i] == mb.total[j] }
	border := make([]int, n) // border[i]: longest proper border of 0…i
	for i := 1; i < n; i++ {
		k := border[i-1]
		for k > 0 && !same(i, k) {
			k = border[k-1]
		}
		if same(i, k) {
			k++
		}
		border[i] = k
	}
	return n - border[n-1]
}

// fits reports whether the blocks were made for a domain of these sizes.
func (mb *marginalBlocks) fits(domain []Attribute) bool {
	if len(mb.sizes) != len(domain) {
		return false
	}
	for i, a := range domain {
		if mb.sizes[i] != a.Size {
			return false
		}
	}
	return true
}

// queries returns the query count of a product of the term, Π_{a∈S} d_a,
// after checking that the product is one the term made (not one a caller
// put in its place) and still looks it: n blocks and the attribute's
// identity at each position of its set. ok is false when it is not
// (NewKron then checks the product block by block) or when the count
// overflows.
func (mb *marginalBlocks) queries(p *Product) (q int, ok bool) {
	if p.marg != mb || len(p.Blocks) != len(mb.sizes) {
		return 0, false
	}
	q = 1
	for k, a := range p.Set {
		if a < 0 || a >= len(mb.sizes) || (k > 0 && p.Set[k-1] >= a) || p.Blocks[a] != mb.ident[a] {
			return 0, false
		}
		if q, ok = mulInt(q, mb.ident[a].queries); !ok {
			return 0, false
		}
	}
	return q, true
}

// newMarginalsTerm builds the marginals term on sets (positions in the
// domain) from the blocks mb. sorted says the caller made each set
// increasing and the list free of duplicates (the k and upto forms);
// otherwise each set is sorted (in place) and checked here.
func newMarginalsTerm(name string, weight float64, domain []Attribute, sets [][]int, mb *marginalBlocks, sorted bool) (*Term, error) {
	if len(sets) == 0 {
		return nil, inputerr.Errorf("domain", "term %q: a marginals term needs at least one attribute set", name)
	}
	n := len(domain)
	if !sorted {
		if err := checkSets(name, domain, sets); err != nil {
			return nil, err
		}
	}
	for si, s := range sets {
		if s == nil {
			sets[si] = []int{} // the marginal on the empty set (the total)
		}
	}
	t := &Term{Name: name, Weight: weight, Kind: TermMarginals, Sets: sets, marg: mb}
	// One allocation for the products (a term of 166,751 marginals would
	// otherwise make as many small objects for the collector to track).
	prods := make([]Product, len(sets))
	t.Products = make([]*Product, len(sets))
	for si, s := range sets {
		prods[si].Set, prods[si].marg = s, mb
		t.Products[si] = &prods[si]
	}
	layoutBlocks(prods, n, mb)
	return t, nil
}

// checkSets sorts each set in place and refuses positions outside the
// domain, an attribute twice in one set and a set listed twice.
func checkSets(name string, domain []Attribute, sets [][]int) error {
	n := len(domain)
	seen := make(map[string]struct{}, len(sets))
	var key []byte
	for _, s := range sets {
		sort.Ints(s)
		key = key[:0]
		for k, a := range s {
			if a < 0 || a >= n {
				return inputerr.Errorf("domain", "term %q: attribute position %d is outside the domain of %d attributes", name, a, n)
			}
			if k > 0 && s[k-1] == a {
				return inputerr.Errorf("domain", "term %q: attribute %q appears twice in one marginal", name, domain[a].Name)
			}
			key = strconv.AppendInt(key, int64(a), 10)
			key = append(key, ',')
		}
		if _, dup := seen[string(key)]; dup {
			return inputerr.Errorf("domain", "term %q: the marginal on %s is listed twice", name, setNames(domain, s))
		}
		seen[string(key)] = struct{}{}
	}
	return nil
}

// layoutBlocks sets each product's block list from its set: the identity
// at the set's positions, the total elsewhere (n blocks, capacity n; the
// lists are read-only).
//
// When the attributes' blocks repeat with period p < n (mb.period; p = 1
// when all attributes have one size), the lists of the sets of one shape
// (their gaps) whose first positions agree modulo p are the windows of
// one backing array: with lo…hi the first positions of those sets, the
// array holds the blocks of attributes hi−…, so that the set starting at
// a is the window starting at hi−a, and its identities sit at hi + the
// shape's offsets. The array has n+hi−lo entries, never more than the
// sets' n each, and the 166,751 marginals of all ≤3-way sets over 100
// binary attributes take 4,952 arrays of at most 199 pointers instead of
// 16.7 million. The arrays are about p·k/n of the sets' n entries each for
// k-way sets, so when 1 < p and p > n/8 (sizes that hardly repeat) each
// set gets its own n entries of one shared allocation instead.
func layoutBlocks(prods []Product, n int, mb *marginalBlocks) {
	if p := mb.period(); p > 1 && 8*p > n {
		flat := make([]*Block, len(prods)*n)
		for pi := range prods {
			bs := flat[pi*n : (pi+1)*n : (pi+1)*n]
			copy(bs, mb.total)
			for _, a := range prods[pi].Set {
				bs[a] = mb.ident[a]
			}
			prods[pi].Blocks = bs
		}
		return
	}
	p := mb.period()
	type shape struct {
		lo, hi int // the first positions of the shape's sets
		at     int // the offset of its backing array in flat
		set    []int
	}
	var shapes []shape
	// A shape is keyed by its sets' first position mod p, size and gaps:
	// packed into a uint64 when they fit (sets of up to 4 attributes over
	// fewer than 2¹⁵), else spelled out.
	small := map[uint64]int32{}
	index := map[string]int32{}
	of := make([]int32, len(prods)) // each product's shape
	var key []byte
	for pi := range prods {
		s := prods[pi].Set
		first := firstOf(s)
		var x int32
		var ok bool
		if k, fits := packShape(s, first%p, n); fits {
			if x, ok = small[k]; !ok {
				x = int32(len(shapes))
				small[k] = x
			}
		} else {
			key = strconv.AppendInt(key[:0], int64(first%p), 10)
			key = append(key, ':')
			key = strconv.AppendInt(key, int64(len(s)), 10)
			for k := 1; k < len(s); k++ {
				key = append(key, ',')
				key = strconv.AppendInt(key, int64(s[k]-s[k-1]), 10)
			}
			if x, ok = index[string(key)]; !ok {
				x = int32(len(shapes))
				index[string(key)] = x
			}
		}
		if !ok {
			shapes = append(shapes, shape{lo: first, hi: first, set: s})
		}
		sh := &shapes[x]
		sh.lo, sh.hi = min(sh.lo, first), max(sh.hi, first)
		of[pi] = x
	}
	size := 0
	for x := range shapes {
		shapes[x].at = size
		size += n + shapes[x].hi - shapes[x].lo
	}
	flat := make([]*Block, size)
	for _, sh := range shapes {
		// Entry at+x is attribute x of the window of the set starting at
		// hi (x < n), or attribute x−(hi−lo) of the one starting at lo.
		span := sh.hi - sh.lo
		copy(flat[sh.at:sh.at+n], mb.total)
		copy(flat[sh.at+n:sh.at+n+span], mb.total[n-span:])
		f := firstOf(sh.set)
		for _, a := range sh.set {
			flat[sh.at+sh.hi+a-f] = mb.ident[sh.hi+a-f]
		}
	}
	for pi := range prods {
		sh := &shapes[of[pi]]
		start := sh.at + sh.hi - firstOf(prods[pi].Set)
		prods[pi].Blocks = flat[start : start+n : start+n]
	}
}

// packShape packs a set's shape key (residue r, size, gaps) into 64 bits:
// 16 for r, 3 for the size and 15 for each of up to 3 gaps; fits is false
// when the set is larger or the domain has 2¹⁵ attributes or more.
func packShape(s []int, r, n int) (key uint64, fits bool) {
	if len(s) > 4 || n >= 1<<15 {
		return 0, false
	}
	key = uint64(r)<<48 | uint64(len(s))<<45
	for k := 1; k < len(s); k++ {
		key |= uint64(s[k]-s[k-1]) << (15 * (k - 1))
	}
	return key, true
}

// firstOf returns a set's first position, 0 for the empty set.
func firstOf(s []int) int {
	if len(s) == 0 {
		return 0
	}
	return s[0]
}

// marginalSetsOf lists all s-subsets of 0…n−1 for s = lo…hi, in
// lexicographic order, smaller sets first, in one backing array.
func marginalSetsOf(n, lo, hi int) [][]int {
	count, width := 0, 0
	for s := lo; s <= hi; s++ {
		c := int(binomial(n, s))
		count += c
		width += c * s
	}
	sets := make([][]int, 0, count)
	ints := make([]int, 0, width)
	cur := make([]int, 0, hi)
	var rec func(start, s int)
	rec = func(start, s int) {
		if len(cur) == s {
			at := len(ints)
			ints = append(ints, cur...)
			sets = append(sets, ints[at:len(ints):len(ints)])
			return
		}
		for a := start; a <= n-(s-len(cur)); a++ {
			cur = append(cur, a)
			rec(a+1, s)
			cur = cur[:len(cur)-1]
		}
	}
	for s := lo; s <= hi; s++ {
		rec(0, s)
	}
	return sets
}
