package synth

import (
	"fmt"
	"math"
	"slices"
)

// DefaultMaxCells is the default cap on the model size Σ_C Π_{a∈C} d_a:
// 10⁷ cells, 80 MB per table of float64 (AIM's default cap). The model holds
// about six such arrays (potentials, log beliefs, probabilities,
// gradients, index maps).
const DefaultMaxCells = 1e7

// Model is a graphical model p(x) ∝ exp(Σ_C θ_C(x_C)) on a junction tree,
// with exact marginals from belief propagation, scaled to Total records.
type Model struct {
	Tree *Tree
	// Total is the number of records the model describes (N̂).
	Total float64

	theta    [][]float64 // log potentials per clique
	logBel   [][]float64 // log p(x_C) per clique, after calibrate
	prob     [][]float64 // p(x_C) per clique, after calibrate (read-only)
	children [][]int
	idx      *indexCache
}

// NewModel returns the uniform model on the tree after checking its size
// against maxCells (DefaultMaxCells when ≤ 0): a tree too large is refused
// with an error wrapping ErrInput before any table is allocated.
func NewModel(t *Tree, total, maxCells float64) (*Model, error) {
	if maxCells <= 0 {
		maxCells = DefaultMaxCells
	}
	if c := t.Cells(); c > maxCells {
		return nil, inputf("the model would have %.4g cells (cliques %v), above the cap of %.4g: measure fewer or smaller marginals, or raise the cap", c, t.Cliques, maxCells)
	}
	if !(total > 0) || math.IsInf(total, 0) {
		return nil, inputf("the model's total must be positive and finite, got %v", total)
	}
	m := &Model{Tree: t, Total: total, idx: newIndexCache(t.Sizes)}
	m.children = make([][]int, len(t.Cliques))
	for i, p := range t.Parent {
		if p >= 0 {
			m.children[p] = append(m.children[p], i)
		}
	}
	m.theta = make([][]float64, len(t.Cliques))
	m.logBel = make([][]float64, len(t.Cliques))
	m.prob = make([][]float64, len(t.Cliques))
	for i, c := range t.Cliques {
		m.theta[i] = make([]float64, cells(t.Sizes, c))
		m.logBel[i] = make([]float64, len(m.theta[i]))
		m.prob[i] = make([]float64, len(m.theta[i]))
	}
	m.calibrate()
	return m, nil
}

// calibrate runs sum-product belief propagation (log domain) and sets logBel
// to every clique's normalized log marginal.
func (m *Model) calibrate() {
	t := m.Tree
	n := len(t.Cliques)
	partial := make([][]float64, n)
	up := make([][]float64, n)
	for k := n - 1; k >= 0; k-- {
		i := t.Order[k]
		p := slices.Clone(m.theta[i])
		for _, c := range m.children[i] {
			addFrom(p, up[c], m.idx.get(t.Cliques[i], t.Sep[c]), 1)
		}
		partial[i] = p
		if t.Parent[i] >= 0 {
			up[i] = make([]float64, cells(t.Sizes, t.Sep[i]))
			logSumInto(up[i], p, m.idx.get(t.Cliques[i], t.Sep[i]))
		}
	}
	// Downward, parents first: a parent's normalized belief is final when
	// its children are reached, and the message to child i is
	// log Σ_{C_par∖S_i} p(C_par) − up_i (the up message is constant over
	// the summed cells), so no exp is needed beyond one per cell to
	// normalize.
	root := t.Order[0]
	copy(m.logBel[root], partial[root])
	m.normalize(root)
	for _, i := range t.Order[1:] {
		par := t.Parent[i]
		down := make([]float64, len(up[i]))
		sumInto(down, m.prob[par], m.idx.get(t.Cliques[par], t.Sep[i]))
		for j, v := range down {
			if v > 0 {
				down[j] = math.Log(v) - up[i][j]
			} else {
				down[j] = math.Inf(-1) // a separator value of probability 0
			}
		}
		b := m.logBel[i]
		copy(b, partial[i])
		addFrom(b, down, m.idx.get(t.Cliques[i], t.Sep[i]), 1)
		m.normalize(i)
	}
}

// normalize makes logBel[i] a normalized log marginal and sets prob[i] to
// its probabilities (one exp per cell).
func (m *Model) normalize(i int) {
	b, p := m.logBel[i], m.prob[i]
	mx := math.Inf(-1)
	for _, v := range b {
		if v > mx { // no NaN here: θ and the messages are finite or −∞
			mx = v
		}
	}
	s := 0.0
	for j, v := range b {
		p[j] = math.Exp(v - mx)
		s += p[j]
	}
	z := mx + math.Log(s)
	for j := range b {
		b[j] -= z
		p[j] /= s
	}
}

// CliqueMarginal returns the probabilities of clique i's cells.
func (m *Model) CliqueMarginal(i int) []float64 {
	return slices.Clone(m.prob[i])
}

// clique returns a clique containing attrs, or −1.
func (m *Model) clique(attrs []int) int {
	best := -1
	for i, c := range m.Tree.Cliques {
		if subset(attrs, c) && (best < 0 || len(c) < len(m.Tree.Cliques[best])) {
			best = i
		}
	}
	return best
}

// Marginal returns the model's probabilities over attrs (increasing
// positions), row-major. A set inside a clique is summed from it; any other
// set is computed exactly by eliminating along the smallest subtree that
// covers it, refused (ErrInput) when an intermediate table would exceed
// maxCells.
func (m *Model) Marginal(attrs []int, maxCells float64) ([]float64, error) {
	t := m.Tree
	if c := m.clique(attrs); c >= 0 {
		return productSum(t.Sizes, t.Cliques[c], attrs, [][]int{t.Cliques[c]}, [][]float64{m.prob[c]}), nil
	}
	n := len(t.Cliques)
	top, count, err := m.steinerTop(attrs)
	if err != nil {
		return nil, err
	}
	in := func(i int) bool {
		for j := i; j >= 0; j = t.Parent[j] {
			if j == top {
				return count[i] > 0
			}
		}
		return false
	}
	// Post-order over the Steiner subtree: msgs[i] over doms[i], each step
	// one productSum (no table over dom is built).
	msgs := make([][]float64, n)
	doms := make([][]int, n)
	for k := n - 1; k >= 0; k-- {
		i := t.Order[k]
		if !in(i) {
			continue
		}
		dom := slices.Clone(t.Cliques[i])
		for _, c := range m.children[i] {
			if in(c) {
				for _, a := range doms[c] {
					if !slices.Contains(dom, a) {
						dom = append(dom, a)
					}
				}
			}
		}
		slices.Sort(dom)
		if sz := cellsFloat(t.Sizes, dom); sz > maxCells {
			return nil, inputf("the marginal on %v needs an intermediate table of %.4g cells, above %.4g", attrs, sz, maxCells)
		}
		// p(C_i) / p(S_i) (the conditional; the joint at the top) times
		// the children's messages, summed onto the separator and the
		// queried attributes.
		fa, fv := m.messageFactors(i, top, in, doms, msgs)
		var keep []int
		for _, a := range dom {
			if slices.Contains(attrs, a) || (i != top && slices.Contains(t.Sep[i], a)) {
				keep = append(keep, a)
			}
		}
		msg := productSum(t.Sizes, dom, keep, fa, fv)
		msgs[i], doms[i] = msg, keep
		if i == top {
			return msg, nil
		}
	}
	return nil, fmt.Errorf("synth: internal error: no top clique for %v", attrs)
}

// steinerTop finds the smallest subtree of the junction tree that covers
// attrs: count[i] is the number of cliques holding a queried attribute
// (each attribute's own clique, marked once) in i's subtree, and top is the
// lowest clique whose subtree holds them all, where the elimination ends.
func (m *Model) steinerTop(attrs []int) (int, []int, error) {
	t := m.Tree
	n := len(t.Cliques)
	marked := make([]bool, n)
	for _, a := range attrs {
		c := m.clique([]int{a})
		if c < 0 {
			return 0, nil, fmt.Errorf("synth: attribute %d is in no clique", a)
		}
		marked[c] = true
	}
	count := make([]int, n)
	total := 0
	for _, v := range marked {
		if v {
			total++
		}
	}
	for k := n - 1; k >= 0; k-- {
		i := t.Order[k]
		if marked[i] {
			count[i]++
		}
		if p := t.Parent[i]; p >= 0 {
			count[p] += count[i]
		}
	}
	top := t.Order[0]
	for !marked[top] {
		next := -1
		for _, c := range m.children[top] {
			if count[c] == total {
				next = c
			}
		}
		if next < 0 {
			break
		}
		top = next
	}
	return top, count, nil
}

// messageFactors returns the factors whose product clique i sends up in
// Marginal's elimination: p(C_i) / p(S_i) (the conditional; the joint at
// the top) times the messages of its children inside the subtree.
func (m *Model) messageFactors(i, top int, in func(int) bool, doms [][]int, msgs [][]float64) ([][]int, [][]float64) {
	t := m.Tree
	fa := [][]int{t.Cliques[i]}
	fv := [][]float64{m.prob[i]}
	if i != top {
		ps := make([]float64, cells(t.Sizes, t.Sep[i]))
		sumInto(ps, m.prob[i], m.idx.get(t.Cliques[i], t.Sep[i]))
		for j, s := range ps {
			if s > 0 {
				ps[j] = 1 / s
			}
		}
		fa, fv = append(fa, t.Sep[i]), append(fv, ps)
	}
	for _, c := range m.children[i] {
		if in(c) {
			fa, fv = append(fa, doms[c]), append(fv, msgs[c])
		}
	}
	return fa, fv
}
