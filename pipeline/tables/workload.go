// Package tables releases the answers to a multi-attribute workload from
// records with secure noise: it takes a structured workload (a domain.Kron:
// a union of weighted Kronecker terms over a domain of attributes, as a
// spec file describes it), a strategy from a plan (one Kronecker product, a
// weighted union of them, or the residual plan of a marginal workload) and
// a privacy budget, and produces every workload answer with its standard
// error.
//
// # What a release does
//
//	prepare:  sensitivity Δ of the strategy, noise scale from the budget,
//	          every answer's variance — no data touched (a dry run stops here)
//	measure:  y = A·x + z, z exact discrete Gaussian or Laplace noise from
//	          package noise (the only step that reads the data)
//	answer:   least squares through the structure (x̂ = (⊗Aᵢ⁺)y factor by
//	          factor; each union part from its own measurements; marginals
//	          from their residuals) and then W·x̂ per term
//
// A Kronecker or union strategy measures the full histogram x (so the
// domain must fit in memory — package records checks before allocating);
// a marginals plan measures each residual from the marginal tables it
// needs, read directly from the records, so domains of 10¹⁷ cells work.
//
// # Guarantee and error
//
// The privacy unit is one record (one person) added or removed: it changes
// one histogram cell by one, so the sensitivity of x ↦ A x is A's largest
// column norm (L2 for Gaussian noise, L1 for Laplace). The noise is
// calibrated for that sensitivity as package calibrate states for the
// budget, after snapping to the noise grid (package noise). Everything
// after the measurement is post-processing and keeps the guarantee.
//
// Without post-processing every answer is unbiased and its variance is
// v·diag(W(AᵀA)⁺Wᵀ), v the per-measurement noise variance — for a product
// term and a Kronecker strategy the Kronecker product of per-attribute
// diagonals (package kron). Their sum is the expected total squared error,
// which is what the plan promised at this budget. The optional
// publishable-table estimator (PostProcess, reported as an Estimator)
// makes the tables non-negative and integral, mutually consistent and
// summing to the least-squares total, but biased: the reported standard
// errors then describe the least-squares answers only.
package tables

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/mechanism/marginals"
	"github.com/dpsolve/dpsolve/model/domain"
)

// ErrInput is wrapped by every error returned for bad input.
var ErrInput = inputerr.ErrInput

func errorf(format string, a ...any) error { return inputerr.Errorf("tables", format, a...) }

// explicitProduct is one Kronecker product W = ⊗ᵢ Blocks[i] of a term, in
// domain order, with its blocks as explicit matrices.
type explicitProduct struct {
	// Blocks has one mᵢ×dᵢ query matrix per attribute.
	Blocks []*mat.Dense
	// Kinds are the blocks' kinds (same length as Blocks): an identity
	// block has one query per value (its answer column holds the value), a
	// total block one query over all values (the column is empty).
	Kinds []domain.BlockKind
	// Set is the attribute positions of a marginal (increasing), nil for a
	// product that is not a marginal.
	Set []int
	// Sources describes each block as the spec gave it ("prefix",
	// "ranges[[0,17],[18,64]]", a matrix block's file), for naming the
	// queries in answers.csv; nil or "" where unknown.
	Sources []string
	// shared, when not nil, holds the blocks of a marginal made of the
	// workload's shared identity and total blocks: Blocks, Kinds and
	// Sources are then nil (three n-length slices per marginal were 1.3 GB
	// for the 166,751 marginals of 100 attributes) and expanded() builds
	// them from Set.
	shared *sharedBlocks
}

// sharedBlocks are, per attribute, the identity and total blocks that
// marginals share (nil where none was seen), with their explicit matrices
// and descriptions.
type sharedBlocks struct {
	ident, total   []*domain.Block
	identM, totalM []*mat.Dense
	identS, totalS []string
}

// expanded returns p with Blocks, Kinds and Sources filled: p itself, or
// for a shared marginal a new product built from its Set (every other
// attribute summed by its total block).
func (p *explicitProduct) expanded() *explicitProduct {
	return p.expandTo(nil)
}

// expandTo is expanded reusing q's slices (q may be nil): for a loop over
// many shared marginals.
func (p *explicitProduct) expandTo(q *explicitProduct) *explicitProduct {
	sh := p.shared
	if sh == nil {
		return p
	}
	n := len(sh.ident)
	if q == nil {
		q = &explicitProduct{}
	}
	q.Blocks, q.Kinds, q.Sources, q.Set = resize(q.Blocks, n), resize(q.Kinds, n), resize(q.Sources, n), p.Set
	for i := 0; i < n; i++ {
		q.Blocks[i], q.Kinds[i], q.Sources[i] = sh.totalM[i], domain.BlockTotal, sh.totalS[i]
	}
	for _, a := range p.Set {
		q.Blocks[a], q.Kinds[a], q.Sources[a] = sh.identM[a], domain.BlockIdentity, sh.identS[a]
	}
	return q
}

// resize returns s with length n, reusing its array when large enough
// (its entries are then stale).
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// Queries returns Πᵢ mᵢ.
func (p *explicitProduct) Queries() int {
	if sh := p.shared; sh != nil {
		q := 1
		for _, a := range p.Set {
			r, _ := sh.identM[a].Dims()
			q *= r
		}
		return q
	}
	q := 1
	for _, b := range p.Blocks {
		r, _ := b.Dims()
		q *= r
	}
	return q
}

// explicitTerm is one named, weighted term of the workload: its queries are
// its products' rows, concatenated in order.
type explicitTerm struct {
	Name     string
	Weight   float64
	Products []explicitProduct
}

// Queries returns the term's number of queries.
func (t *explicitTerm) Queries() int {
	q := 0
	for i := range t.Products {
		q += t.Products[i].Queries()
	}
	return q
}

// explicitWorkload is a release's workload as the computations read it: a
// domain.Kron's terms (explicitOf) with every block as an explicit matrix
// (shared between products as the Kron's blocks are), its kind and its
// description, and the marginal each product of identities and totals is.
// A dense strategy's variances read the same terms over one attribute of n
// cells, each product multiplied out (flatten), which no Kron holds:
// attributes have at most domain.MaxAttributeSize values.
type explicitWorkload struct {
	Domain []domain.Attribute
	Terms  []explicitTerm
	// plans keeps the Gaussian residual plan of each objective once made
	// (prepareMarginals): reading a plan file re-plans to check it and the
	// release then prepares the same plan (0.1 s each on 166,751 sets).
	// A Plan is not changed after NewPlan.
	plans map[marginals.Objective]*marginals.Plan
}

// Queries returns the total number of queries.
func (w *explicitWorkload) Queries() int {
	q := 0
	for i := range w.Terms {
		q += w.Terms[i].Queries()
	}
	return q
}

// validate checks the workload's shapes: a valid domain, at least one term,
// every product with one block per attribute of the attribute's size, finite
// entries and weights, a query count that fits an int.
func (w *explicitWorkload) validate() error {
	if w == nil {
		return errorf("no workload")
	}
	if len(w.Domain) == 0 {
		return errorf("the domain has no attributes")
	}
	for _, a := range w.Domain {
		if a.Size < 1 || a.Name == "" {
			return errorf("attribute %q has size %d", a.Name, a.Size)
		}
	}
	if len(w.Terms) == 0 {
		return errorf("the workload has no terms")
	}
	total := 0.0
	for ti := range w.Terms {
		t := &w.Terms[ti]
		if math.IsNaN(t.Weight) || math.IsInf(t.Weight, 0) || t.Weight < 0 {
			return errorf("term %q has weight %v; weights must be finite and non-negative", t.Name, t.Weight)
		}
		if len(t.Products) == 0 {
			return errorf("term %q has no queries", t.Name)
		}
		for pi := range t.Products {
			p := &t.Products[pi]
			if p.shared != nil {
				// Its blocks are the shared ones, checked once below.
				total += float64(p.Queries())
				continue
			}
			if err := w.validateBlocks(t, p.Blocks, p.Kinds); err != nil {
				return err
			}
			q := 1.0
			for _, b := range p.Blocks {
				r, _ := b.Dims()
				q *= float64(r)
			}
			total += q
		}
	}
	if err := w.validateShared(); err != nil {
		return err
	}
	if total > math.MaxInt32 {
		return errorf("the workload has %.3g queries; answers are written one row each, so at most %d are supported", total, math.MaxInt32)
	}
	return nil
}

// validateBlocks checks one product's blocks against the domain.
func (w *explicitWorkload) validateBlocks(t *explicitTerm, blocks []*mat.Dense, kinds []domain.BlockKind) error {
	if len(blocks) != len(w.Domain) || len(kinds) != len(w.Domain) {
		return errorf("term %q: a product has %d blocks for %d attributes", t.Name, len(blocks), len(w.Domain))
	}
	for i, b := range blocks {
		if err := w.validateBlock(t, i, b); err != nil {
			return err
		}
	}
	return nil
}

// validateBlock checks the block of attribute i: present, one column per
// value, finite.
func (w *explicitWorkload) validateBlock(t *explicitTerm, i int, b *mat.Dense) error {
	if b == nil {
		return errorf("term %q: attribute %q has no block", t.Name, w.Domain[i].Name)
	}
	_, c := b.Dims()
	if c != w.Domain[i].Size {
		return errorf("term %q, attribute %q: the block has %d columns but the attribute has %d values", t.Name, w.Domain[i].Name, c, w.Domain[i].Size)
	}
	for _, v := range b.RawMatrix().Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return errorf("term %q, attribute %q: the block has a non-finite entry", t.Name, w.Domain[i].Name)
		}
	}
	return nil
}

// validateShared checks the shared marginals' blocks once each: every
// product using them is checked with them (explicitOf only shares an
// attribute's block once a product used it, so every block a shared
// product expands to is there).
func (w *explicitWorkload) validateShared() error {
	seen := map[*sharedBlocks]bool{}
	for ti := range w.Terms {
		t := &w.Terms[ti]
		for pi := range t.Products {
			sh := t.Products[pi].shared
			if sh == nil || seen[sh] {
				continue
			}
			seen[sh] = true
			if len(sh.identM) != len(w.Domain) || len(sh.totalM) != len(w.Domain) {
				return errorf("term %q: a product has %d blocks for %d attributes", t.Name, len(sh.identM), len(w.Domain))
			}
			for i := range w.Domain {
				for _, m := range []*mat.Dense{sh.identM[i], sh.totalM[i]} {
					if m == nil {
						continue
					}
					if err := w.validateBlock(t, i, m); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// marginalProduct returns the marginal on the attribute positions set
// (increasing) as a product of identity and total blocks.
func marginalProduct(dom []domain.Attribute, set []int) explicitProduct {
	p := explicitProduct{Blocks: make([]*mat.Dense, len(dom)), Kinds: make([]domain.BlockKind, len(dom)), Set: append([]int{}, set...)}
	in := map[int]bool{}
	for _, a := range set {
		in[a] = true
	}
	for i, a := range dom {
		if in[i] {
			p.Blocks[i], p.Kinds[i] = identity(a.Size), domain.BlockIdentity
		} else {
			p.Blocks[i], p.Kinds[i] = ones(a.Size), domain.BlockTotal
		}
	}
	return p
}

func identity(d int) *mat.Dense {
	m := mat.NewDense(d, d, nil)
	for i := 0; i < d; i++ {
		m.Set(i, i, 1)
	}
	return m
}

func ones(d int) *mat.Dense {
	m := mat.NewDense(1, d, nil)
	for i := 0; i < d; i++ {
		m.Set(0, i, 1)
	}
	return m
}

// describe names a product for messages.
func (w *explicitWorkload) describe(t *explicitTerm, p *explicitProduct) string {
	if p.Set == nil {
		return fmt.Sprintf("term %q", t.Name)
	}
	names := ""
	for k, a := range p.Set {
		if k > 0 {
			names += ","
		}
		names += w.Domain[a].Name
	}
	return fmt.Sprintf("term %q, marginal {%s}", t.Name, names)
}
