package tables

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/kron"
)

// Measurement is what a release measures. The implementations are
// KronStrategy, UnionStrategy and MarginalsStrategy.
type Measurement interface {
	// Template names the plan's template ("kron", "union", "marginals").
	Template() string
	// isStrategy restricts the implementations to this package's.
	isStrategy()
}

// KronStrategy measures y = (⊗ᵢAᵢ)x: one factor per attribute, in domain
// order. A dense strategy over the flattened domain is the case of one
// factor on a one-attribute domain.
type KronStrategy struct {
	A *kron.Product
}

// Template returns "kron".
func (KronStrategy) Template() string { return "kron" }
func (KronStrategy) isStrategy()      {}

// UnionPart is one part of a UnionStrategy: its measurements are
// Weight·(⊗ᵢAᵢ)x + z, and it answers the named terms.
type UnionPart struct {
	Weight float64
	A      *kron.Product
	Terms  []string
}

// UnionStrategy measures a weighted stack of Kronecker products; every term
// is answered from the one part it is assigned to (as the union template
// plans it), by that part's own least squares.
type UnionStrategy struct {
	Parts []UnionPart
}

// Template returns "union".
func (UnionStrategy) Template() string { return "union" }
func (UnionStrategy) isStrategy()      {}

// unitVariances returns, for each term and each of its queries, the
// variance of the least-squares answer per unit noise variance, and the
// part (index) answering each term (0 for a Kronecker strategy). It fails
// when a query is not estimable from the strategy.
func unitVariances(w *explicitWorkload, s Measurement, pinvs pinvCache) ([][]float64, []int, error) {
	switch s := s.(type) {
	case KronStrategy:
		owner := make([]int, len(w.Terms))
		v, err := partVariances(w, s.A, 1, nil, pinvs)
		return v, owner, err
	case UnionStrategy:
		owner, err := unionOwners(w, s)
		if err != nil {
			return nil, nil, err
		}
		out := make([][]float64, len(w.Terms))
		for k, p := range s.Parts {
			mine := make([]bool, len(w.Terms))
			for t, o := range owner {
				mine[t] = o == k
			}
			v, err := partVariances(w, p.A, p.Weight, mine, pinvs)
			if err != nil {
				return nil, nil, fmt.Errorf("union part %d: %w", k+1, err)
			}
			for t := range v {
				if mine[t] {
					out[t] = v[t]
				}
			}
		}
		return out, owner, nil
	}
	return nil, nil, fmt.Errorf("tables: unit variances: unsupported strategy %T", s)
}

// partVariances computes the per-query unit variances of the terms in mine
// (all when nil) answered by (1/weight)·A⁺ from one Kronecker product.
func partVariances(w *explicitWorkload, a *kron.Product, weight float64, mine []bool, pinvs pinvCache) ([][]float64, error) {
	if a == nil {
		return nil, errorf("the strategy has no matrix")
	}
	if a.Len() != len(w.Domain) {
		return nil, errorf("the strategy has %d factors but the domain has %d attributes", a.Len(), len(w.Domain))
	}
	for i, attr := range w.Domain {
		if _, c := a.Factor(i).Dims(); c != attr.Size {
			return nil, errorf("the strategy's factor for %q has %d columns but the attribute has %d values", attr.Name, c, attr.Size)
		}
	}
	pinv, err := pinvs.of(a)
	if err != nil {
		return nil, err
	}
	out := make([][]float64, len(w.Terms))
	for ti := range w.Terms {
		if mine != nil && !mine[ti] {
			continue
		}
		t := &w.Terms[ti]
		for pi := range t.Products {
			p := &t.Products[pi]
			wp, err := productOf(p)
			if err != nil {
				return nil, err
			}
			if err := kron.Estimable(wp, a, pinv); err != nil {
				return nil, errorf("%s cannot be answered without bias from this strategy (%v); plan the strategy for this workload", w.describe(t, p), err)
			}
			fv, err := kron.FactorVariances(wp, pinv)
			if err != nil {
				return nil, err
			}
			v := kron.KronVec(fv)
			if weight != 1 {
				s := 1 / (weight * weight)
				for i := range v {
					v[i] *= s
				}
			}
			out[ti] = append(out[ti], v...)
		}
	}
	return out, nil
}

// productOf returns a product's blocks as a kron.Product.
func productOf(p *explicitProduct) (*kron.Product, error) {
	p = p.expanded()
	bs := make([]mat.Matrix, len(p.Blocks))
	for i, b := range p.Blocks {
		bs[i] = b
	}
	return kron.New(bs...)
}

// pinvCache keeps the pseudo-inverse of each strategy part, computed once
// when the release is prepared (the variances need it) and reused when it
// runs (the reconstruction): a factor's SVD is O(n³), 9 of the 21 CPU s of
// a dense release over 1024 values, each time.
type pinvCache map[*kron.Product]*kron.Product

// of returns a's pseudo-inverse, computing and keeping it when c (not nil)
// does not hold it yet.
func (c pinvCache) of(a *kron.Product) (*kron.Product, error) {
	if p, ok := c[a]; ok {
		return p, nil
	}
	p, err := pseudoInverseOf(a)
	if err == nil && c != nil {
		c[a] = p
	}
	return p, err
}

// unionOwners maps every term to the one part that answers it.
func unionOwners(w *explicitWorkload, s UnionStrategy) ([]int, error) {
	if len(s.Parts) == 0 {
		return nil, errorf("the union strategy has no parts")
	}
	index := map[string]int{}
	for i, t := range w.Terms {
		index[t.Name] = i
	}
	owner := make([]int, len(w.Terms))
	for i := range owner {
		owner[i] = -1
	}
	sumw2 := 0.0
	for k, p := range s.Parts {
		if math.IsNaN(p.Weight) || math.IsInf(p.Weight, 0) || p.Weight <= 0 {
			return nil, errorf("union part %d has weight %v; weights must be positive and finite", k+1, p.Weight)
		}
		sumw2 += p.Weight * p.Weight
		for _, name := range p.Terms {
			t, ok := index[name]
			if !ok {
				return nil, errorf("union part %d names term %q, which is not in the workload", k+1, name)
			}
			if owner[t] >= 0 {
				return nil, errorf("term %q is assigned to union parts %d and %d", name, owner[t]+1, k+1)
			}
			owner[t] = k
		}
	}
	for t, o := range owner {
		if o < 0 {
			return nil, errorf("term %q is in no part of the union strategy", w.Terms[t].Name)
		}
	}
	return owner, nil
}

// sensitivity returns the strategy's L2 (or L1) sensitivity: the largest
// column norm of the measured matrix. For a union it is the bound
// √(Σₖwₖ²Δₖ²) (L2) or Σₖwₖ·Δₖ (L1), exact when each part's columns have
// equal norms, as the plans' unit-column-norm factors do, and an upper bound
// (so the noise is never too small) otherwise.
func sensitivity(s Measurement, l1 bool) (float64, error) {
	q := 2
	if l1 {
		q = 1
	}
	switch s := s.(type) {
	case KronStrategy:
		return s.A.ColumnNorm(q), nil
	case UnionStrategy:
		var t float64
		for _, p := range s.Parts {
			c := p.A.ColumnNorm(q)
			if l1 {
				t += p.Weight * c
			} else {
				t += p.Weight * p.Weight * c * c
			}
		}
		if !l1 {
			t = math.Sqrt(t)
		}
		return t, nil
	}
	return 0, fmt.Errorf("tables: sensitivity: unsupported strategy %T", s)
}

// rows returns the number of noisy measurements.
func rows(s Measurement) int {
	switch s := s.(type) {
	case KronStrategy:
		r, _ := s.A.Dims()
		return r
	case UnionStrategy:
		t := 0
		for _, p := range s.Parts {
			r, _ := p.A.Dims()
			t += r
		}
		return t
	}
	return 0
}
