package tables

import (
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/model/domain"
)

// explicitOf returns the terms of k as explicit matrices: every product's
// blocks, in domain order. A product whose blocks are all identity or total blocks is
// a marginal (its Set lists the identity attributes), whichever way the
// spec wrote it, so the marginals template and the per-attribute answer
// columns apply to it.
func explicitOf(k *domain.Kron) (*explicitWorkload, error) {
	if k == nil {
		return nil, errorf("no workload")
	}
	attrs := k.Attributes()
	n := len(attrs)
	w := &explicitWorkload{Domain: attrs}
	c := &blockConverter{attrs: attrs, cache: map[*domain.Block]*mat.Dense{},
		sh: &sharedBlocks{ident: make([]*domain.Block, n), total: make([]*domain.Block, n),
			identM: make([]*mat.Dense, n), totalM: make([]*mat.Dense, n), identS: make([]string, n), totalS: make([]string, n)}}
	for _, t := range k.Terms() {
		term := explicitTerm{Name: t.Name, Weight: t.Weight, Products: make([]explicitProduct, 0, len(t.Products))}
		for _, p := range t.Products {
			q, err := c.product(t, p)
			if err != nil {
				return nil, err
			}
			term.Products = append(term.Products, q)
		}
		w.Terms = append(w.Terms, term)
	}
	return w, nil
}

// blockConverter turns a workload's blocks into matrices for explicitOf:
// blocks are shared between products, so each is converted once (cache),
// and a marginal whose identity and total blocks are the ones every
// marginal so far used (the domain's shared blocks, as a marginals term
// builds them) holds only its set and sh.
type blockConverter struct {
	attrs []domain.Attribute
	cache map[*domain.Block]*mat.Dense
	sh    *sharedBlocks
}

// convert returns b as a matrix, converting it on its first use.
func (c *blockConverter) convert(t *domain.Term, i int, b *domain.Block) (*mat.Dense, error) {
	m, ok := c.cache[b]
	if !ok {
		var err error
		if m, err = b.Matrix(); err != nil {
			return nil, errorf("term %q, attribute %q: %v", t.Name, c.attrs[i].Name, err)
		}
		c.cache[b] = m
	}
	return m, nil
}

// share reports whether p's blocks are all the shared identity and total
// blocks (recording each attribute's on its first sight).
func (c *blockConverter) share(t *domain.Term, p *domain.Product) (bool, error) {
	sh := c.sh
	for i, b := range p.Blocks {
		var own *domain.Block
		var m **mat.Dense
		var src *string
		switch b.Kind {
		case domain.BlockIdentity:
			own, m, src = sh.ident[i], &sh.identM[i], &sh.identS[i]
			if own == nil {
				sh.ident[i] = b
			}
		case domain.BlockTotal:
			own, m, src = sh.total[i], &sh.totalM[i], &sh.totalS[i]
			if own == nil {
				sh.total[i] = b
			}
		default:
			return false, nil
		}
		if own == nil {
			var err error
			if *m, err = c.convert(t, i, b); err != nil {
				return false, err
			}
			*src, own = blockSource(b), b
		}
		if own != b {
			return false, nil
		}
	}
	return true, nil
}

// product returns p explicitly: a shared marginal by its set, any other
// product by its blocks (with its set when it is a marginal).
func (c *blockConverter) product(t *domain.Term, p *domain.Product) (explicitProduct, error) {
	shared, err := c.share(t, p)
	if err != nil {
		return explicitProduct{}, err
	}
	if shared {
		q := explicitProduct{Set: []int{}, shared: c.sh}
		for i, b := range p.Blocks {
			if b.Kind == domain.BlockIdentity {
				q.Set = append(q.Set, i)
			}
		}
		return q, nil
	}
	n := len(p.Blocks)
	q := explicitProduct{Blocks: make([]*mat.Dense, n), Kinds: make([]domain.BlockKind, n), Sources: make([]string, n)}
	marginal := true
	var set []int
	for i, b := range p.Blocks {
		if q.Blocks[i], err = c.convert(t, i, b); err != nil {
			return explicitProduct{}, err
		}
		q.Sources[i], q.Kinds[i] = blockSource(b), b.Kind
		switch b.Kind {
		case domain.BlockIdentity:
			set = append(set, i)
		case domain.BlockTotal:
		default:
			marginal = false
		}
	}
	if marginal {
		q.Set = set
		if q.Set == nil {
			q.Set = []int{} // the total: the marginal on the empty set
		}
	}
	return q, nil
}

// blockSource describes a block for the answers' query names: a matrix
// block by its file as the spec wrote it (its resolved path when that is
// all there is), every other block by its description.
func blockSource(b *domain.Block) string {
	if b.Kind == domain.BlockMatrix {
		if b.Spec != "" {
			return b.Spec
		}
		return b.Path
	}
	return b.String()
}
