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
	w := &explicitWorkload{Domain: attrs}
	// Blocks are shared between products; convert each once.
	cache := map[*domain.Block]*mat.Dense{}
	for _, t := range k.Terms() {
		term := explicitTerm{Name: t.Name, Weight: t.Weight}
		for _, p := range t.Products {
			q := explicitProduct{Blocks: make([]*mat.Dense, len(p.Blocks)), Kinds: make([]domain.BlockKind, len(p.Blocks)), Sources: make([]string, len(p.Blocks))}
			marginal := true
			var set []int
			for i, b := range p.Blocks {
				m, ok := cache[b]
				if !ok {
					var err error
					if m, err = b.Matrix(); err != nil {
						return nil, errorf("term %q, attribute %q: %v", t.Name, attrs[i].Name, err)
					}
					cache[b] = m
				}
				q.Blocks[i] = m
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
			term.Products = append(term.Products, q)
		}
		w.Terms = append(w.Terms, term)
	}
	return w, nil
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
