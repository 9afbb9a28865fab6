package tables

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/kron"
	"github.com/dpsolve/dpsolve/mechanism/marginals"
	"github.com/dpsolve/dpsolve/model/domain"
)

// restricted returns the attributes a product does not sum over (the
// positions whose block is not a total block), increasing.
func restricted(p *explicitProduct) []int {
	p = p.expanded()
	var s []int
	for i, k := range p.Kinds {
		if k != domain.BlockTotal {
			s = append(s, i)
		}
	}
	return s
}

// integerAnswers answers the terms part k owns from the histogram x
// (Σx = total) with integer tables that keep the rounded total and the
// consistency. When every product restricts at most two attributes, the
// marginals of x on the products' attribute sets are rounded together by
// controlled rounding (marginals.RoundTables: common rounded one-way
// margins, every cell moved by less than 1, or less than 2 where the
// margins leave no closer rounding, so the tables agree exactly on every
// attribute and the total) and each product is answered from its rounded
// marginal (its blocks applied to it: integral when they are). Otherwise —
// a product on three or more attributes, or a table with no controlled
// rounding — x itself is rounded by its running sums (cumulativeRound;
// every table is then exactly consistent, but a cell of a table over late
// attributes can move by more). It returns which was done and the largest
// inconsistency left.
func (r *Release) integerAnswers(answers [][]float64, k int, x []float64, nonneg bool) (string, float64, error) {
	return r.integerAnswersOf(answers, func(t int) bool { return r.owner[t] == k }, x, nonneg)
}

// integerAnswersOf is integerAnswers for the terms mine selects.
func (r *Release) integerAnswersOf(answers [][]float64, mine func(t int) bool, x []float64, nonneg bool) (string, float64, error) {
	tabs, index, small, err := r.productMarginals(mine, x)
	if err != nil {
		return "", 0, err
	}
	total := 0.0
	for _, v := range x {
		total += v
	}
	if !small {
		cumulativeRound(x)
		return "histogram", 0, r.answerTerms(answers, mine, x)
	}
	sizes := make([]int, len(r.w.Domain))
	for i, a := range r.w.Domain {
		sizes[i] = a.Size
	}
	n := math.Round(total)
	if nonneg {
		n = math.Max(n, 0)
	}
	_, _, inc, err := marginals.RoundTables(sizes, tabs, n, nonneg)
	if err != nil {
		return "", 0, err
	}
	if inc > 0 {
		// A table had no controlled rounding to the common margins: round
		// the histogram instead, which keeps every table consistent.
		cumulativeRound(x)
		return "histogram", 0, r.answerTerms(answers, mine, x)
	}
	return "tables", inc, r.answerFromTables(answers, mine, tabs, index)
}

// productMarginals returns the marginals of x on the distinct attribute
// sets the selected terms' products restrict, indexed by fmt.Sprint(set),
// and whether every set has at most two attributes (nothing is computed
// otherwise).
func (r *Release) productMarginals(mine func(t int) bool, x []float64) ([]marginals.Table, map[string]int, bool, error) {
	index := map[string]int{}
	var tabs []marginals.Table
	for t := range r.w.Terms {
		if !mine(t) {
			continue
		}
		for pi := range r.w.Terms[t].Products {
			s := restricted(&r.w.Terms[t].Products[pi])
			if len(s) > 2 {
				return nil, nil, false, nil
			}
			key := fmt.Sprint(s)
			if _, ok := index[key]; ok {
				continue
			}
			mp := marginalProduct(r.w.Domain, s)
			m, err := productOf(&mp)
			if err != nil {
				return nil, nil, false, err
			}
			v, err := m.MulVec(x)
			if err != nil {
				return nil, nil, false, err
			}
			index[key] = len(tabs)
			tabs = append(tabs, marginals.Table{Attrs: s, Values: v})
		}
	}
	return tabs, index, true, nil
}

// answerFromTables answers every selected product by applying its blocks
// on the attributes it restricts to its (rounded) marginal.
func (r *Release) answerFromTables(answers [][]float64, mine func(t int) bool, tabs []marginals.Table, index map[string]int) error {
	for t := range r.w.Terms {
		if !mine(t) {
			continue
		}
		answers[t] = answers[t][:0]
		for pi := range r.w.Terms[t].Products {
			p := r.w.Terms[t].Products[pi].expanded()
			s := restricted(p)
			tab := tabs[index[fmt.Sprint(s)]].Values
			if len(s) == 0 {
				answers[t] = append(answers[t], tab[0])
				continue
			}
			bs := make([]mat.Matrix, len(s))
			for j, a := range s {
				bs[j] = p.Blocks[a]
			}
			b, err := kron.New(bs...)
			if err != nil {
				return err
			}
			ans, err := b.MulVec(tab)
			if err != nil {
				return err
			}
			answers[t] = append(answers[t], ans...)
		}
	}
	return nil
}
