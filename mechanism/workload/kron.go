package workload

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"sort"
	"strconv"
	"strings"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/inputerr"
)

// A structured workload is a table over several attributes (a domain of
// d₁×…×d_k cells, flattened row-major: the first attribute varies slowest)
// and a union of weighted Kronecker products of small per-attribute query
// matrices,
//
//	W = [w₁·(W₁₁ ⊗ … ⊗ W₁ₖ); w₂·(W₂₁ ⊗ … ⊗ W₂ₖ); …].
//
// Its Gram V = Σⱼ wⱼ²·⊗ᵢ Vᵢⱼ is never formed for large domains: everything a
// planner needs — per-attribute Grams, query counts, and the expected error
// of a Kronecker strategy, Σⱼ wⱼ²·Πᵢ tr(Vᵢⱼ Xᵢ⁺) — is computed factor by
// factor, in O(Σ dᵢ³) work and memory independent of the cell count.

// MaxAttributeSize caps one attribute's size: per-attribute Grams are dense
// dᵢ×dᵢ matrices (8192² float64s = 512 MiB), so larger attributes are refused
// before anything is allocated.
const MaxAttributeSize = 8192

// maxProductEntries caps (number of Kronecker products) × (attributes): the
// structured workload holds one block pointer per pair.
const maxProductEntries = 1 << 24

// Attribute is one dimension of a multi-attribute domain.
type Attribute struct {
	Name string `json:"name"` // unique within the domain
	Size int    `json:"size"` // number of values, 1 … MaxAttributeSize
}

// BlockKind says how a Block was described.
type BlockKind string

const (
	// BlockIdentity is the identity (every value); V = I.
	BlockIdentity BlockKind = "identity"
	// BlockTotal is the sum over the attribute; V = J (all ones).
	BlockTotal BlockKind = "total"
	// BlockIdentityTotal is the identity stacked on the total; V = I + J.
	BlockIdentityTotal BlockKind = "identitytotal"
	// BlockBuiltin is any other 1-D workload Parse knows (prefix, allrange,
	// width:k=K, wrange:m=M, …).
	BlockBuiltin BlockKind = "builtin"
	// BlockMatrix is a user query matrix (m×size).
	BlockMatrix BlockKind = "matrix"
	// BlockRanges is a list of inclusive ranges [lo, hi] of attribute values.
	BlockRanges BlockKind = "ranges"
)

// Block is the 1-D query matrix of one attribute in one Kronecker product.
// Blocks are immutable once built; the Gram they return is shared and must
// not be modified.
type Block struct {
	// Kind says how the block was described.
	Kind BlockKind
	// Spec is the description as given: the built-in name ("prefix",
	// "width:k=4"), or the matrix file as written in the spec.
	Spec string
	// Path is the resolved file of a BlockMatrix read from disk ("" otherwise).
	Path string
	// Ranges are the inclusive, 0-based ranges of a BlockRanges.
	Ranges [][2]int
	// Size is the attribute's size d (the block has d columns).
	Size int

	queries int
	gram    *mat.SymDense // nil while lazy holds it unbuilt
	lazy    *lazyGram
	w       *mat.Dense // explicit W where known
	wl      Workload   // the built-in workload behind a BlockBuiltin
	key     string
}

// Queries returns the block's number of rows m.
func (b *Block) Queries() int { return b.queries }

// Gram returns the block's d×d Gram WᵀW. It is shared: do not modify it.
// Identity and total blocks build it on the first call (safe for
// concurrent callers).
func (b *Block) Gram() *mat.SymDense {
	if b.gram != nil || b.lazy == nil {
		return b.gram
	}
	b.lazy.once.Do(func() { b.lazy.g = b.lazy.build() })
	return b.lazy.g
}

// lazyGram builds a block's Gram once, on demand.
type lazyGram struct {
	once  sync.Once
	build func() *mat.SymDense
	g     *mat.SymDense
}

// Key is a canonical description of the block: two blocks of the same size
// with equal keys have the same query matrix (a matrix block is keyed by its
// resolved file, or by its label for one built in code).
func (b *Block) Key() string { return b.key }

// String returns the block's description, e.g. "prefix" or "ranges[[0,17],[18,64]]".
func (b *Block) String() string { return b.key }

// Matrix returns the block's explicit query matrix W (m×d), a copy.
func (b *Block) Matrix() (*mat.Dense, error) {
	if b.w != nil {
		return mat.DenseCopyOf(b.w), nil
	}
	if e, ok := b.wl.(Explicit); ok {
		return e.Matrix(), nil
	}
	return nil, inputerr.Errorf("workload", "block %s has no explicit query matrix", b.key)
}

// touches reports whether value v of the attribute is in some query of the block.
func (b *Block) touches(v int) bool {
	if b.Kind == BlockIdentity || b.Kind == BlockTotal {
		return true
	}
	return b.Gram().At(v, v) > 0
}

// NewBlock returns the built-in 1-D block of the given name on an attribute
// of the given size: "identity", "total", "identitytotal", or any name Parse
// accepts for a 1-D workload ("prefix", "allrange", "width:k=K",
// "wrange:m=M,seed=S", …).
func NewBlock(name string, size int) (*Block, error) {
	if size < 1 || size > MaxAttributeSize {
		return nil, inputerr.Errorf("workload", "attribute size must be in 1…%d, got %d", MaxAttributeSize, size)
	}
	clean := strings.ToLower(strings.TrimSpace(name))
	base, _, _ := strings.Cut(clean, ":")
	base = strings.TrimSpace(base)
	switch base {
	case "identitytotal":
		if clean != "identitytotal" {
			return nil, inputerr.Errorf("workload", "block %q takes no parameters", name)
		}
		w := mat.NewDense(size+1, size, nil)
		for i := 0; i < size; i++ {
			w.Set(i, i, 1)
			w.Set(size, i, 1)
		}
		return matrixBlock(BlockIdentityTotal, "identitytotal", "identitytotal", w), nil
	case "marginals", "marginal":
		return nil, inputerr.Errorf("workload", "%q is not a 1-D block: use a marginals term", name)
	}
	if err := checkRandomSize(clean, base, size); err != nil {
		return nil, err
	}
	wl, err := Parse(name, size)
	if err != nil {
		return nil, inputerr.Errorf("workload", "block %q: %v", name, err)
	}
	b := &Block{Kind: BlockBuiltin, Spec: name, Size: size, queries: wl.Queries(), wl: wl, key: clean}
	switch base {
	case "identity":
		b.Kind = BlockIdentity
	case "total":
		b.Kind = BlockTotal
	}
	if b.Kind == BlockBuiltin {
		b.gram = wl.Gram()
	} else {
		// Identity and total blocks are known structurally (they touch
		// every value); their d×d Grams — 128 MiB each at d = 4096, and the
		// parser makes both for every attribute — are built on first use.
		b.lazy = &lazyGram{build: wl.Gram}
	}
	return b, nil
}

// maxRandomEntries caps m·size of a random built-in block (wrange, wdiscrete,
// wrelated), which Parse builds in memory: 2²⁶ entries is 512 MiB.
const maxRandomEntries = 1 << 26

// checkRandomSize refuses random built-in blocks whose query count would not
// fit in memory, before Parse allocates them.
func checkRandomSize(clean, base string, size int) error {
	switch base {
	case "wrange", "wdiscrete", "wrelated":
	default:
		return nil
	}
	_, rest, _ := strings.Cut(clean, ":")
	for _, f := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(f, "=")
		if strings.TrimSpace(k) != "m" {
			continue
		}
		m, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err == nil && m > 0 && m > maxRandomEntries/int64(size) {
			return inputerr.Errorf("workload", "block %q: %d queries over %d values are too many (at most %d entries)", clean, m, size, maxRandomEntries)
		}
	}
	return nil
}

// MatrixBlock returns a block with the user's query matrix W (m×d, finite
// entries); label names it in reports and keys it (blocks with the same
// label are taken to be the same matrix). W is copied.
func MatrixBlock(label string, w *mat.Dense) (*Block, error) {
	if w == nil || w.IsEmpty() {
		return nil, inputerr.Errorf("workload", "matrix block %q is empty", label)
	}
	m, d := w.Dims()
	if d > MaxAttributeSize {
		return nil, inputerr.Errorf("workload", "matrix block %q has %d columns; at most %d are supported", label, d, MaxAttributeSize)
	}
	for i := 0; i < m; i++ {
		for j := 0; j < d; j++ {
			if v := w.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, inputerr.Errorf("workload", "matrix block %q: entry (%d,%d) is %v; entries must be finite", label, i, j, v)
			}
		}
	}
	return matrixBlock(BlockMatrix, label, "matrix:"+label, mat.DenseCopyOf(w)), nil
}

func matrixBlock(kind BlockKind, spec, key string, w *mat.Dense) *Block {
	m, d := w.Dims()
	g := mat.NewSymDense(d, nil)
	g.SymOuterK(1, w.T())
	return &Block{Kind: kind, Spec: spec, Size: d, queries: m, gram: g, w: w, key: key}
}

// RangesBlock returns the block of the inclusive, 0-based ranges [lo, hi]
// (0 ≤ lo ≤ hi < size), one query each.
func RangesBlock(size int, ranges [][2]int) (*Block, error) {
	if size < 1 || size > MaxAttributeSize {
		return nil, inputerr.Errorf("workload", "attribute size must be in 1…%d, got %d", MaxAttributeSize, size)
	}
	if len(ranges) == 0 {
		return nil, inputerr.Errorf("workload", "a ranges block needs at least one range")
	}
	w := mat.NewDense(len(ranges), size, nil)
	var sb strings.Builder
	sb.WriteString("ranges[")
	for r, lh := range ranges {
		lo, hi := lh[0], lh[1]
		if lo < 0 || hi >= size || lo > hi {
			return nil, inputerr.Errorf("workload", "range [%d, %d] is outside the domain 0…%d (or empty)", lo, hi, size-1)
		}
		for c := lo; c <= hi; c++ {
			w.Set(r, c, 1)
		}
		if r > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, "[%d,%d]", lo, hi)
	}
	sb.WriteByte(']')
	b := matrixBlock(BlockRanges, sb.String(), sb.String(), w)
	b.Ranges = append([][2]int(nil), ranges...)
	return b, nil
}

// TermKind says how a term was described.
type TermKind string

const (
	// TermProduct is one Kronecker product of per-attribute blocks.
	TermProduct TermKind = "product"
	// TermMarginals is a list of marginals, one Kronecker product of
	// identity and total blocks each.
	TermMarginals TermKind = "marginals"
)

// Product is one Kronecker product ⊗ᵢ Blocks[i] (domain order) of a term.
type Product struct {
	// Term is the index of the term it belongs to.
	Term int
	// Set is, for a marginal, the attribute positions it tabulates
	// (increasing); nil for a product term.
	Set []int
	// Blocks has one block per attribute, in domain order.
	Blocks []*Block
}

// Queries returns the product's number of queries Πᵢ mᵢ.
func (p *Product) Queries() int {
	q := 1
	for _, b := range p.Blocks {
		q *= b.queries // cannot overflow: checked when the workload was built
	}
	return q
}

// Term is one named, weighted term of a structured workload: a single
// product, or the marginals on a list of attribute sets.
type Term struct {
	// Name is unique within the workload.
	Name string
	// Weight w ≥ 0 multiplies the term's queries (its Gram by w²).
	Weight float64
	// Kind is TermProduct or TermMarginals.
	Kind TermKind
	// Sets are, for a marginals term, the attribute positions (increasing)
	// of each marginal, in the order of the term's queries.
	Sets [][]int
	// Products are the term's Kronecker products in query order: one for a
	// product term, one per set for a marginals term.
	Products []*Product
}

// Queries returns the term's number of queries.
func (t *Term) Queries() int {
	q := 0
	for _, p := range t.Products {
		q += p.Queries()
	}
	return q
}

// Kron is a structured workload: a domain of named attributes and a union of
// weighted Kronecker terms. Build it with NewKron, ParseSpec or LoadSpec.
type Kron struct {
	attrs    []Attribute
	terms    []*Term
	products []*Product
	cells    int
	queries  int
}

// NewProductTerm returns a product term over the domain: blocks maps
// attribute names to blocks; an attribute not named is "total".
func NewProductTerm(name string, weight float64, domain []Attribute, blocks map[string]*Block) (*Term, error) {
	pos := map[string]int{}
	for i, a := range domain {
		pos[a.Name] = i
	}
	bs := make([]*Block, len(domain))
	for an, b := range blocks {
		i, ok := pos[an]
		if !ok {
			return nil, inputerr.Errorf("workload", "term %q: unknown attribute %q (domain: %s)", name, an, attrNames(domain))
		}
		if b == nil {
			return nil, inputerr.Errorf("workload", "term %q, attribute %q: missing block", name, an)
		}
		if b.Size != domain[i].Size {
			return nil, inputerr.Errorf("workload", "term %q, attribute %q: block %s has %d columns but the attribute has %d values", name, an, b, b.Size, domain[i].Size)
		}
		bs[i] = b
	}
	for i, a := range domain {
		if bs[i] == nil {
			t, err := NewBlock("total", a.Size)
			if err != nil {
				return nil, inputerr.Errorf("workload", "attribute %q: %v", a.Name, err)
			}
			bs[i] = t
		}
	}
	return &Term{Name: name, Weight: weight, Kind: TermProduct, Products: []*Product{{Blocks: bs}}}, nil
}

// NewMarginalsTerm returns the marginals term on the given attribute sets
// (positions in the domain; each set is sorted, duplicates are errors). The
// marginal on S has one query per cell of S's table.
func NewMarginalsTerm(name string, weight float64, domain []Attribute, sets [][]int) (*Term, error) {
	if len(sets) == 0 {
		return nil, inputerr.Errorf("workload", "term %q: a marginals term needs at least one attribute set", name)
	}
	ident := make([]*Block, len(domain))
	total := make([]*Block, len(domain))
	for i, a := range domain {
		var err error
		if ident[i], err = NewBlock("identity", a.Size); err == nil {
			total[i], err = NewBlock("total", a.Size)
		}
		if err != nil {
			return nil, inputerr.Errorf("workload", "attribute %q: %v", a.Name, err)
		}
	}
	t := &Term{Name: name, Weight: weight, Kind: TermMarginals}
	seen := map[string]bool{}
	for _, s := range sets {
		ss := append([]int{}, s...)
		sort.Ints(ss)
		for k, a := range ss {
			if a < 0 || a >= len(domain) {
				return nil, inputerr.Errorf("workload", "term %q: attribute position %d is outside the domain of %d attributes", name, a, len(domain))
			}
			if k > 0 && ss[k-1] == a {
				return nil, inputerr.Errorf("workload", "term %q: attribute %q appears twice in one marginal", name, domain[a].Name)
			}
		}
		key := fmt.Sprint(ss)
		if seen[key] {
			return nil, inputerr.Errorf("workload", "term %q: the marginal on %s is listed twice", name, setNames(domain, ss))
		}
		seen[key] = true
		bs := make([]*Block, len(domain))
		copy(bs, total)
		for _, a := range ss {
			bs[a] = ident[a]
		}
		t.Sets = append(t.Sets, ss)
		t.Products = append(t.Products, &Product{Set: ss, Blocks: bs})
	}
	return t, nil
}

// NewKron validates the domain and terms and returns the structured
// workload. It checks: at least one attribute and one term; unique,
// non-empty attribute and term names; attribute sizes in 1…MaxAttributeSize;
// every block sized to its attribute; finite, non-negative weights; a cell
// count and a query count that fit an int; and that every cell is in some
// query of positive weight (else the error names one such cell by its
// attribute values).
func NewKron(domain []Attribute, terms []*Term) (*Kron, error) {
	if len(domain) == 0 {
		return nil, inputerr.Errorf("workload", "the domain has no attributes")
	}
	names := map[string]bool{}
	cells := 1
	for _, a := range domain {
		if a.Name == "" {
			return nil, inputerr.Errorf("workload", "an attribute has an empty name")
		}
		if names[a.Name] {
			return nil, inputerr.Errorf("workload", "attribute %q is listed twice in the domain", a.Name)
		}
		names[a.Name] = true
		if a.Size < 1 || a.Size > MaxAttributeSize {
			return nil, inputerr.Errorf("workload", "attribute %q: size must be in 1…%d, got %d", a.Name, MaxAttributeSize, a.Size)
		}
		cells = satMul(cells, a.Size)
	}
	if len(terms) == 0 {
		return nil, inputerr.Errorf("workload", "the workload has no terms")
	}
	k := &Kron{attrs: append([]Attribute(nil), domain...), cells: cells}
	tnames := map[string]bool{}
	for j, t := range terms {
		if t == nil || len(t.Products) == 0 {
			return nil, inputerr.Errorf("workload", "term %d is empty", j+1)
		}
		if t.Name == "" {
			return nil, inputerr.Errorf("workload", "term %d has an empty name", j+1)
		}
		if tnames[t.Name] {
			return nil, inputerr.Errorf("workload", "term name %q is used twice", t.Name)
		}
		tnames[t.Name] = true
		if math.IsNaN(t.Weight) || math.IsInf(t.Weight, 0) || t.Weight < 0 {
			return nil, inputerr.Errorf("workload", "term %q: weight must be a finite number ≥ 0, got %v", t.Name, t.Weight)
		}
		tq := 0
		for _, p := range t.Products {
			if len(p.Blocks) != len(domain) {
				return nil, inputerr.Errorf("workload", "term %q: a product has %d blocks for %d attributes", t.Name, len(p.Blocks), len(domain))
			}
			q := 1
			for i, b := range p.Blocks {
				if b == nil || b.Size != domain[i].Size {
					return nil, inputerr.Errorf("workload", "term %q, attribute %q: block size does not match the attribute's %d values", t.Name, domain[i].Name, domain[i].Size)
				}
				var ok bool
				if q, ok = mulInt(q, b.queries); !ok {
					return nil, inputerr.Errorf("workload", "term %q: its query count overflows", t.Name)
				}
			}
			var ok bool
			if tq, ok = addInt(tq, q); !ok {
				return nil, inputerr.Errorf("workload", "term %q: its query count overflows", t.Name)
			}
			p.Term = j
			k.products = append(k.products, p)
			if len(k.products) > maxProductEntries/len(domain) {
				return nil, inputerr.Errorf("workload", "the workload has more than %d Kronecker products", maxProductEntries/len(domain))
			}
		}
		var ok bool
		if k.queries, ok = addInt(k.queries, tq); !ok {
			return nil, inputerr.Errorf("workload", "the workload's query count overflows")
		}
		k.terms = append(k.terms, t)
	}
	if cell, found := k.uncoveredCell(); found {
		var sb strings.Builder
		for i, v := range cell {
			if i > 0 {
				sb.WriteString(", ")
			}
			fmt.Fprintf(&sb, "%s = %d", domain[i].Name, v)
		}
		return nil, inputerr.Errorf("workload", "the cell (%s) is in no query of positive weight: every cell must be queried (drop the value from the domain or add a query)", sb.String())
	}
	return k, nil
}

// uncoveredCell finds a cell no product of positive weight touches. A cell
// c is covered iff some product touches cᵢ on every attribute i, so the
// covered set is a union of boxes; the search walks the attributes in
// order, splitting the values of each by the set of products still alive,
// and memoizes (attribute, alive set), so its cost is bounded by the
// number of distinct alive sets, not by the cell count.
func (k *Kron) uncoveredCell() ([]int, bool) {
	var alive []int
	for pi, p := range k.products {
		if k.terms[p.Term].Weight > 0 {
			alive = append(alive, pi)
		}
	}
	dead := map[string]bool{}
	cell := make([]int, len(k.attrs))
	var rec func(i int, alive []int) bool
	rec = func(i int, alive []int) bool {
		if len(alive) == 0 {
			for l := i; l < len(k.attrs); l++ {
				cell[l] = 0
			}
			return true
		}
		if i == len(k.attrs) {
			return false
		}
		key := fmt.Sprint(i, alive)
		if dead[key] {
			return false
		}
		groups := map[string]bool{}
		next := make([]int, 0, len(alive))
		for v := 0; v < k.attrs[i].Size; v++ {
			next = next[:0]
			for _, pi := range alive {
				if k.products[pi].Blocks[i].touches(v) {
					next = append(next, pi)
				}
			}
			gk := fmt.Sprint(next)
			if groups[gk] {
				continue
			}
			groups[gk] = true
			cell[i] = v
			if rec(i+1, append([]int(nil), next...)) {
				return true
			}
		}
		dead[key] = true
		return false
	}
	if rec(0, alive) {
		return cell, true
	}
	return nil, false
}

// Attributes returns the domain, in order.
func (k *Kron) Attributes() []Attribute { return append([]Attribute(nil), k.attrs...) }

// Cells returns n = Πᵢ dᵢ.
//
// A domain of more than math.MaxInt cells is valid (the marginals template
// never needs the count): Cells then returns math.MaxInt, which every
// template that needs the cells refuses; CellCount is the exact count.
func (k *Kron) Cells() int { return k.cells }

// CellCount returns the exact number of cells, ∏ dᵢ, in arbitrary
// precision.
func (k *Kron) CellCount() *big.Int {
	n := big.NewInt(1)
	for _, a := range k.attrs {
		n.Mul(n, big.NewInt(int64(a.Size)))
	}
	return n
}

// Queries returns the total number of queries.
func (k *Kron) Queries() int { return k.queries }

// Terms returns the terms, in spec order. They are shared: do not modify them.
func (k *Kron) Terms() []*Term { return k.terms }

// Products returns every term's Kronecker products, flattened in term
// order. They are shared: do not modify them.
func (k *Kron) Products() []*Product { return k.products }

// Name returns a short description, e.g. "kron(2x115x64, 31 terms)".
func (k *Kron) Name() string {
	ds := make([]string, len(k.attrs))
	for i, a := range k.attrs {
		ds[i] = fmt.Sprint(a.Size)
	}
	return fmt.Sprintf("kron(%s, %d terms)", strings.Join(ds, "x"), len(k.terms))
}

// Weight2 returns the squared weight wⱼ² of product p's term.
func (k *Kron) Weight2(p *Product) float64 {
	w := k.terms[p.Term].Weight
	return w * w
}

// DenseGram returns the explicit Gram V = Σⱼ wⱼ²·⊗ᵢ Vᵢⱼ (n×n), refusing
// domains of more than maxCells cells. It is the reference for small
// domains: the 1-attribute workload of one product term with weight 1 is
// exactly the dense workload of that name.
func (k *Kron) DenseGram(maxCells int) (*mat.SymDense, error) {
	if k.cells > maxCells {
		return nil, inputerr.Errorf("workload", "the domain has %d cells; the explicit Gram is limited to %d", k.cells, maxCells)
	}
	v := mat.NewSymDense(k.cells, nil)
	for _, p := range k.products {
		w2 := k.Weight2(p)
		if w2 == 0 {
			continue
		}
		fs := make([]*mat.SymDense, len(p.Blocks))
		for i, b := range p.Blocks {
			fs[i] = b.Gram()
		}
		g := KronSym(fs...)
		v.AddSym(v, scaledSym(g, w2))
	}
	return v, nil
}

// DenseMatrix returns the explicit query matrix W (queries × cells) with
// the weights applied, rows in term and product order, for domains of at
// most maxCells cells and maxCells² entries (tests and small examples).
func (k *Kron) DenseMatrix(maxCells int) (*mat.Dense, error) {
	if k.cells > maxCells || k.queries > maxCells*maxCells/k.cells {
		return nil, inputerr.Errorf("workload", "the workload has %d queries over %d cells; the explicit matrix is limited to %d cells", k.queries, k.cells, maxCells)
	}
	return k.denseMatrix()
}

// denseMatrix is DenseMatrix without the size limit.
func (k *Kron) denseMatrix() (*mat.Dense, error) {
	w := mat.NewDense(k.queries, k.cells, nil)
	row := 0
	for _, p := range k.products {
		cur := mat.NewDense(1, 1, []float64{k.terms[p.Term].Weight})
		for _, b := range p.Blocks {
			bw, err := b.Matrix()
			if err != nil {
				return nil, err
			}
			var next mat.Dense
			next.Kronecker(cur, bw)
			cur = &next
		}
		r, _ := cur.Dims()
		w.Slice(row, row+r, 0, k.cells).(*mat.Dense).Copy(cur)
		row += r
	}
	return w, nil
}

func scaledSym(a *mat.SymDense, s float64) *mat.SymDense {
	n := a.SymmetricDim()
	out := mat.NewSymDense(n, nil)
	out.ScaleSym(s, a)
	return out
}

// satMul returns a·b for positive a, b, or math.MaxInt when it overflows.
func satMul(a, b int) int {
	if p, ok := mulInt(a, b); ok {
		return p
	}
	return math.MaxInt
}

func mulInt(a, b int) (int, bool) {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > math.MaxInt {
		return 0, false
	}
	return int(lo), true
}

func addInt(a, b int) (int, bool) {
	s := a + b
	if s < a {
		return 0, false
	}
	return s, true
}

func attrNames(domain []Attribute) string {
	ns := make([]string, len(domain))
	for i, a := range domain {
		ns[i] = a.Name
	}
	return strings.Join(ns, ", ")
}

func setNames(domain []Attribute, set []int) string {
	ns := make([]string, len(set))
	for i, a := range set {
		ns[i] = domain[a].Name
	}
	return "{" + strings.Join(ns, ", ") + "}"
}
