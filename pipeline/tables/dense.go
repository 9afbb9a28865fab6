package tables

import (
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/kron"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/pipeline/records"
)

// DenseStrategy is an explicit p×n strategy over the flattened domain
// (cells row-major in domain order), as the dense template plans for small
// domains.
type DenseStrategy struct {
	A *mat.Dense
}

// Template returns "dense".
func (DenseStrategy) Template() string { return "dense" }
func (DenseStrategy) isStrategy()      {}

// maxFlatEntries caps the explicit workload matrices a dense strategy's
// variances need (Σ over products of queries × cells): 2²⁶ doubles, 512 MiB.
const maxFlatEntries = 1 << 26

// flatten returns the dense strategy as a one-factor Kronecker strategy and
// the workload over a single attribute of n cells, each product's blocks
// multiplied out, for the variance computation. The products' row order is
// unchanged (kron of the blocks is exactly the row-major order).
func flatten(w *explicitWorkload, s DenseStrategy) (*explicitWorkload, KronStrategy, error) {
	n, err := records.Cells(w.Domain)
	if err != nil {
		return nil, KronStrategy{}, err
	}
	if s.A == nil {
		return nil, KronStrategy{}, errorf("the dense strategy has no matrix")
	}
	if _, c := s.A.Dims(); c != n {
		return nil, KronStrategy{}, errorf("the dense strategy has %d columns but the domain has %d cells", c, n)
	}
	a, err := kron.New(s.A)
	if err != nil {
		return nil, KronStrategy{}, err
	}
	flat := &explicitWorkload{Domain: []domain.Attribute{{Name: "cell", Size: n}}}
	entries := 0.0
	for _, t := range w.Terms {
		ft := explicitTerm{Name: t.Name, Weight: t.Weight}
		for _, p := range t.Products {
			entries += float64(p.Queries()) * float64(n)
			if entries > maxFlatEntries {
				return nil, KronStrategy{}, errorf("the workload's explicit matrices over %d cells would hold more than %d entries; use a kron or union plan", n, maxFlatEntries)
			}
			ft.Products = append(ft.Products, explicitProduct{Blocks: []*mat.Dense{denseKron(p.expanded().Blocks)}, Kinds: []domain.BlockKind{domain.BlockMatrix}})
		}
		flat.Terms = append(flat.Terms, ft)
	}
	return flat, KronStrategy{A: a}, nil
}

// denseKron multiplies out ⊗ blocks.
func denseKron(bs []*mat.Dense) *mat.Dense {
	out := mat.DenseCopyOf(bs[0])
	for _, b := range bs[1:] {
		var k mat.Dense
		k.Kronecker(out, b)
		out = &k
	}
	return out
}
