package domain

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/inputerr"
)

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
	// Codebook, when non-nil, says how the records' values map to the codes
	// 0 … Size−1 (a list of labels or the edges of numeric bins); nil means
	// the records hold the codes themselves. ParseSpec sets it from the
	// spec's "values" or "edges"; plan files do not carry it.
	Codebook *Codebook `json:"-"`
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

	queries int             // Πᵢ mᵢ as NewKron counted it; 0 before
	marg    *marginalBlocks // the blocks of the marginals term that made it, else nil
}

// Queries returns the product's number of queries Πᵢ mᵢ.
func (p *Product) Queries() int {
	if p.queries > 0 {
		return p.queries // a marginal of 100 attributes is counted once, from its set
	}
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

	marg *marginalBlocks // a marginals term's blocks (NewMarginalsTerm), else nil
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
			return nil, inputerr.Errorf("domain", "term %q: unknown attribute %q (domain: %s)", name, an, attrNames(domain))
		}
		if b == nil {
			return nil, inputerr.Errorf("domain", "term %q, attribute %q: missing block", name, an)
		}
		if b.Size != domain[i].Size {
			return nil, inputerr.Errorf("domain", "term %q, attribute %q: block %s has %d columns but the attribute has %d values", name, an, b, b.Size, domain[i].Size)
		}
		bs[i] = b
	}
	for i, a := range domain {
		if bs[i] == nil {
			t, err := NewBlock("total", a.Size, nil)
			if err != nil {
				return nil, inputerr.Errorf("domain", "attribute %q: %v", a.Name, err)
			}
			bs[i] = t
		}
	}
	return &Term{Name: name, Weight: weight, Kind: TermProduct, Products: []*Product{{Blocks: bs}}}, nil
}

// NewMarginalsTerm returns the marginals term on the given attribute sets
// (positions in the domain; each set is sorted, duplicates are errors). The
// marginal on S has one query per cell of S's table. Its products hold one
// identity and one total block per attribute size and share their block
// lists' storage: the lists must not be modified.
func NewMarginalsTerm(name string, weight float64, domain []Attribute, sets [][]int) (*Term, error) {
	mb, err := sharedMarginalBlocks(domain)
	if err != nil {
		return nil, err
	}
	// The sets are copied (they are sorted in place), into one allocation.
	width := 0
	for _, s := range sets {
		width += len(s)
	}
	ints := make([]int, 0, width)
	own := make([][]int, len(sets))
	for si, s := range sets {
		at := len(ints)
		ints = append(ints, s...)
		own[si] = ints[at:len(ints):len(ints)]
	}
	return newMarginalsTerm(name, weight, domain, own, mb, false)
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
		return nil, inputerr.Errorf("domain", "the domain has no attributes")
	}
	names := map[string]bool{}
	cells := 1
	for _, a := range domain {
		if a.Name == "" {
			return nil, inputerr.Errorf("domain", "an attribute has an empty name")
		}
		if names[a.Name] {
			return nil, inputerr.Errorf("domain", "attribute %q is listed twice in the domain", a.Name)
		}
		names[a.Name] = true
		if a.Size < 1 || a.Size > MaxAttributeSize {
			return nil, inputerr.Errorf("domain", "attribute %q: size must be in 1…%d, got %d", a.Name, MaxAttributeSize, a.Size)
		}
		cells = satMul(cells, a.Size)
	}
	if len(terms) == 0 {
		return nil, inputerr.Errorf("domain", "the workload has no terms")
	}
	k := &Kron{attrs: append([]Attribute(nil), domain...), cells: cells}
	np := 0
	for _, t := range terms {
		if t != nil {
			np += len(t.Products)
		}
	}
	k.products = make([]*Product, 0, min(np, maxProductEntries/len(domain)+1))
	tnames := map[string]bool{}
	for j, t := range terms {
		if t == nil || len(t.Products) == 0 {
			return nil, inputerr.Errorf("domain", "term %d is empty", j+1)
		}
		if t.Name == "" {
			return nil, inputerr.Errorf("domain", "term %d has an empty name", j+1)
		}
		if tnames[t.Name] {
			return nil, inputerr.Errorf("domain", "term name %q is used twice", t.Name)
		}
		tnames[t.Name] = true
		if math.IsNaN(t.Weight) || math.IsInf(t.Weight, 0) || t.Weight < 0 {
			return nil, inputerr.Errorf("domain", "term %q: weight must be a finite number ≥ 0, got %v", t.Name, t.Weight)
		}
		tq := 0
		// A marginals term's products are checked from their sets.
		marg := t.marg != nil && t.marg.fits(domain)
		for _, p := range t.Products {
			if q, ok := 0, false; marg {
				if q, ok = t.marg.queries(p); ok {
					if tq, ok = addInt(tq, q); !ok {
						return nil, inputerr.Errorf("domain", "term %q: its query count overflows", t.Name)
					}
					if err := k.addProduct(p, j, q); err != nil {
						return nil, err
					}
					continue
				}
			}
			if len(p.Blocks) != len(domain) {
				return nil, inputerr.Errorf("domain", "term %q: a product has %d blocks for %d attributes", t.Name, len(p.Blocks), len(domain))
			}
			q := 1
			for i, b := range p.Blocks {
				if b == nil || b.Size != domain[i].Size {
					return nil, inputerr.Errorf("domain", "term %q, attribute %q: block size does not match the attribute's %d values", t.Name, domain[i].Name, domain[i].Size)
				}
				var ok bool
				if q, ok = mulInt(q, b.queries); !ok {
					return nil, inputerr.Errorf("domain", "term %q: its query count overflows", t.Name)
				}
			}
			var ok bool
			if tq, ok = addInt(tq, q); !ok {
				return nil, inputerr.Errorf("domain", "term %q: its query count overflows", t.Name)
			}
			if err := k.addProduct(p, j, q); err != nil {
				return nil, err
			}
		}
		var ok bool
		if k.queries, ok = addInt(k.queries, tq); !ok {
			return nil, inputerr.Errorf("domain", "the workload's query count overflows")
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
		return nil, inputerr.Errorf("domain", "the cell (%s) is in no query of positive weight: every cell must be queried (drop the value from the domain or add a query)", sb.String())
	}
	return k, nil
}

// addProduct appends product p of term j, of q queries, to k's products.
func (k *Kron) addProduct(p *Product, j, q int) error {
	p.Term, p.queries = j, q
	k.products = append(k.products, p)
	if len(k.products) > maxProductEntries/len(k.attrs) {
		return inputerr.Errorf("domain", "the workload has more than %d Kronecker products", maxProductEntries/len(k.attrs))
	}
	return nil
}

// uncoveredCell finds a cell no product of positive weight touches. A cell
// c is covered iff some product touches cᵢ on every attribute i, so the
// covered set is a union of boxes; the search walks the attributes in
// order, splitting the values of each by the set of products still alive,
// and memoizes (attribute, alive set), so its cost is bounded by the
// number of distinct alive sets, not by the cell count. A subtree is
// covered as soon as an alive product has only identity and total blocks
// from the current attribute on (they touch every value): every marginal
// covers the whole domain at the root, so a spec of 166,751 marginals over
// 100 attributes is checked without walking them.
func (k *Kron) uncoveredCell() ([]int, bool) {
	// A product of positive weight whose blocks are all identity or total
	// touches every cell (a marginal, the total among them): then no cell
	// is uncovered, and a workload of marginals is decided at its first
	// product instead of after a pass over all of them.
	for _, p := range k.products {
		if k.terms[p.Term].Weight <= 0 {
			continue
		}
		all := true
		for _, b := range p.Blocks {
			if b.Kind != BlockIdentity && b.Kind != BlockTotal {
				all = false
				break
			}
		}
		if all {
			return nil, false
		}
	}
	var alive []int
	for pi, p := range k.products {
		if k.terms[p.Term].Weight > 0 {
			alive = append(alive, pi)
		}
	}
	// full[pi]: the first attribute from which product pi's blocks all
	// touch every value.
	full := make([]int, len(k.products))
	for pi, p := range k.products {
		f := len(k.attrs)
		for f > 0 && (p.Blocks[f-1].Kind == BlockIdentity || p.Blocks[f-1].Kind == BlockTotal) {
			f--
		}
		full[pi] = f
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
		for _, pi := range alive {
			if full[pi] <= i { // covers every completion of this prefix
				return false
			}
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

// Part returns the workload of the listed terms of k (indices into Terms,
// each at most once, in the order given) on k's domain: the part of a
// union strategy, or the one term of a split release, that is answered on
// its own. Terms and products are copied, so k is unchanged; blocks are
// shared. Unlike NewKron it does not require every cell to be queried: a
// part's strategy answers only its own terms.
func (k *Kron) Part(terms []int) (*Kron, error) {
	if len(terms) == 0 {
		return nil, inputerr.Errorf("domain", "a part needs at least one term")
	}
	p := &Kron{attrs: k.attrs, cells: k.cells}
	seen := make([]bool, len(k.terms))
	for j, t := range terms {
		if t < 0 || t >= len(k.terms) {
			return nil, inputerr.Errorf("domain", "term index %d is outside the workload's %d terms", t, len(k.terms))
		}
		if seen[t] {
			return nil, inputerr.Errorf("domain", "term %q is listed twice in the part", k.terms[t].Name)
		}
		seen[t] = true
		nt := *k.terms[t]
		nt.Products = make([]*Product, len(k.terms[t].Products))
		for i, pr := range k.terms[t].Products {
			np := *pr
			np.Term = j
			nt.Products[i] = &np
			p.products = append(p.products, &np)
		}
		p.terms = append(p.terms, &nt)
		p.queries += nt.Queries() // at most k's count, which fits an int
	}
	return p, nil
}

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
		return nil, inputerr.Errorf("domain", "the domain has %d cells; the explicit Gram is limited to %d", k.cells, maxCells)
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
	if k.cells > maxCells || exceeds(k.queries, k.cells, maxCells) {
		return nil, inputerr.Errorf("domain", "the workload has %d queries over %d cells; the explicit matrix is limited to %d cells", k.queries, k.cells, maxCells)
	}
	return k.denseMatrix()
}

// exceeds reports whether q·c > m·m for non-negative q, c, m, in 128 bits
// (DenseMatrix's entry limit, exact for every int).
func exceeds(q, c, m int) bool {
	qh, ql := bits.Mul64(uint64(q), uint64(c))
	mh, ml := bits.Mul64(uint64(m), uint64(m))
	return qh > mh || (qh == mh && ql > ml)
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

// KronSym expands the Kronecker product F₀ ⊗ F₁ ⊗ … of symmetric factors
// into a dense symmetric matrix. It is meant for small products (tests,
// explicit inspection); structured code should keep the factors.
func KronSym(factors ...*mat.SymDense) *mat.SymDense {
	cur := mat.NewSymDense(1, []float64{1})
	for _, f := range factors {
		p, q := cur.SymmetricDim(), f.SymmetricDim()
		next := mat.NewSymDense(p*q, nil)
		for a := 0; a < p; a++ {
			for b := a; b < p; b++ {
				cab := cur.At(a, b)
				for c := 0; c < q; c++ {
					for e := 0; e < q; e++ {
						i, j := a*q+c, b*q+e
						if i <= j {
							next.SetSym(i, j, cab*f.At(c, e))
						}
					}
				}
			}
		}
		cur = next
	}
	return cur
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
