package domain_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/model/domain"
)

// randomCoverBlock draws a block that touches a random subset of the
// attribute's values (a 0/1 matrix, possibly with zero columns) or, half of
// the time, an identity or total block, which touch every value.
func randomCoverBlock(t *testing.T, r *rand.Rand, d, label int) *domain.Block {
	switch r.IntN(4) {
	case 0:
		b, err := domain.NewBlock("identity", d, nil)
		require.NoError(t, err)
		return b
	case 1:
		b, err := domain.NewBlock("total", d, nil)
		require.NoError(t, err)
		return b
	}
	w := mat.NewDense(2, d, nil)
	for i := 0; i < 2; i++ {
		for j := 0; j < d; j++ {
			if r.Float64() < 0.4 {
				w.Set(i, j, 1)
			}
		}
	}
	w.Set(r.IntN(2), r.IntN(d), 1) // never the zero matrix
	b, err := domain.MatrixBlock(fmt.Sprint("m", label), w)
	require.NoError(t, err)
	return b
}

// firstUncovered is the reference: the first cell, in row-major order, that
// no product of positive weight touches on every attribute (value v of a
// block is touched iff its Gram has V_vv > 0), by enumerating every cell.
func firstUncovered(attrs []domain.Attribute, terms []*domain.Term) ([]int, bool) {
	n := 1
	for _, a := range attrs {
		n *= a.Size
	}
	cell := make([]int, len(attrs))
	for c := 0; c < n; c++ {
		rem := c
		for i := len(attrs) - 1; i >= 0; i-- {
			cell[i] = rem % attrs[i].Size
			rem /= attrs[i].Size
		}
		covered := false
		for _, t := range terms {
			for _, p := range t.Products {
				all := t.Weight > 0
				for i, b := range p.Blocks {
					all = all && b.Gram().At(cell[i], cell[i]) > 0
				}
				covered = covered || all
			}
		}
		if !covered {
			return cell, true
		}
	}
	return nil, false
}

// NewKron's coverage check (a memoized search over attributes that stops
// at products of identities and totals) names exactly the first uncovered
// cell that enumerating every cell finds, on 300 random domains of 1–4
// attributes with product terms of identity, total and sparse 0/1 blocks,
// some of weight 0; and accepts the domain when enumeration finds none.
func TestCoverageMatchesEnumeration(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	found, ok := 0, 0
	for trial := 0; trial < 300; trial++ {
		attrs := make([]domain.Attribute, 1+r.IntN(4))
		for i := range attrs {
			attrs[i] = domain.Attribute{Name: fmt.Sprint("a", i), Size: 1 + r.IntN(4)}
		}
		var terms []*domain.Term
		for j := 0; j < 1+r.IntN(4); j++ {
			blocks := map[string]*domain.Block{}
			for i, a := range attrs {
				if r.IntN(3) > 0 { // an attribute left out is a total
					blocks[a.Name] = randomCoverBlock(t, r, a.Size, 100*trial+10*j+i)
				}
			}
			term, err := domain.NewProductTerm(fmt.Sprint("t", j), float64(r.IntN(3)), attrs, blocks)
			require.NoError(t, err)
			terms = append(terms, term)
		}
		_, err := domain.NewKron(attrs, terms)
		cell, uncovered := firstUncovered(attrs, terms)
		if !uncovered {
			require.NoError(t, err, "trial %d", trial)
			ok++
			continue
		}
		require.Error(t, err, "trial %d: cell %v is uncovered", trial, cell)
		var sb strings.Builder
		for i, v := range cell {
			if i > 0 {
				sb.WriteString(", ")
			}
			fmt.Fprintf(&sb, "%s = %d", attrs[i].Name, v)
		}
		require.Contains(t, err.Error(), "the cell ("+sb.String()+") is in no query", "trial %d", trial)
		found++
	}
	// Both outcomes occur often enough for the comparison to mean something.
	require.Greater(t, found, 30)
	require.Greater(t, ok, 30)
}
