package synth

import (
	"fmt"
	"slices"
	"sort"
)

// Tree is a junction tree over a domain: maximal cliques of a triangulation,
// a parent for each (−1 for the root), the separators and a root-first order.
type Tree struct {
	// Sizes are the attribute sizes.
	Sizes []int
	// Cliques are increasing attribute positions.
	Cliques [][]int
	// Parent[i] is clique i's parent, −1 for the root.
	Parent []int
	// Sep[i] is Cliques[i] ∩ Cliques[Parent[i]] (empty for the root).
	Sep [][]int
	// Order lists the cliques root first, every parent before its children.
	Order []int
}

// Cells is the model size: Σ over cliques of their cell counts.
func (t *Tree) Cells() float64 {
	s := 0.0
	for _, c := range t.Cliques {
		s += cellsFloat(t.Sizes, c)
	}
	return s
}

// TreeCells returns the model size (Σ clique cells) of the junction tree
// BuildTree would build for sets, without allocating any table.
func TreeCells(sizes []int, sets [][]int) (float64, error) {
	cl, err := triangulate(sizes, sets)
	if err != nil {
		return 0, err
	}
	s := 0.0
	for _, c := range cl {
		s += cellsFloat(sizes, c)
	}
	return s, nil
}

// BuildTree triangulates the graph in which two attributes are adjacent when
// a set holds both (every attribute gets a clique, measured or not), by
// greedy elimination (the vertex whose clique has fewest cells first), keeps
// the maximal cliques and joins them by a maximum spanning tree on separator
// sizes, which has the running-intersection property for the cliques of a
// chordal graph.
func BuildTree(sizes []int, sets [][]int) (*Tree, error) {
	cl, err := triangulate(sizes, sets)
	if err != nil {
		return nil, err
	}
	n := len(cl)
	type edge struct{ w, i, j int }
	var edges []edge
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			edges = append(edges, edge{len(intersect(cl[i], cl[j])), i, j})
		}
	}
	sort.SliceStable(edges, func(a, b int) bool { return edges[a].w > edges[b].w })
	comp := make([]int, n)
	for i := range comp {
		comp[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for comp[i] != i {
			comp[i] = comp[comp[i]]
			i = comp[i]
		}
		return i
	}
	adj := make([][]int, n)
	for _, e := range edges {
		a, b := find(e.i), find(e.j)
		if a == b {
			continue
		}
		comp[a] = b
		adj[e.i] = append(adj[e.i], e.j)
		adj[e.j] = append(adj[e.j], e.i)
	}
	t := &Tree{Sizes: slices.Clone(sizes), Cliques: cl, Parent: make([]int, n), Sep: make([][]int, n)}
	// Root: the largest clique (messages into it are the cheapest).
	root := 0
	for i := range cl {
		if cellsFloat(sizes, cl[i]) > cellsFloat(sizes, cl[root]) {
			root = i
		}
	}
	seen := make([]bool, n)
	t.Parent[root] = -1
	queue := []int{root}
	seen[root] = true
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		t.Order = append(t.Order, c)
		for _, d := range adj[c] {
			if !seen[d] {
				seen[d] = true
				t.Parent[d] = c
				t.Sep[d] = intersect(cl[c], cl[d])
				queue = append(queue, d)
			}
		}
	}
	if len(t.Order) != n {
		return nil, fmt.Errorf("synth: internal error: junction tree not connected")
	}
	return t, nil
}

func intersect(a, b []int) []int {
	var out []int
	for _, v := range a {
		if slices.Contains(b, v) {
			out = append(out, v)
		}
	}
	return out
}

func subset(a, b []int) bool {
	for _, v := range a {
		if !slices.Contains(b, v) {
			return false
		}
	}
	return true
}

// triangulate returns the maximal cliques of a greedy triangulation.
func triangulate(sizes []int, sets [][]int) ([][]int, error) {
	k := len(sizes)
	adj := make([]map[int]bool, k)
	for i := range adj {
		adj[i] = map[int]bool{}
	}
	for _, s := range sets {
		for _, a := range s {
			if a < 0 || a >= k {
				return nil, inputf("attribute position %d out of range [0, %d)", a, k)
			}
			for _, b := range s {
				if a != b {
					adj[a][b] = true
				}
			}
		}
	}
	alive := make([]bool, k)
	for i := range alive {
		alive[i] = true
	}
	var cliques [][]int
	for step := 0; step < k; step++ {
		best, bestCells, bestFill := -1, 0.0, 0
		for v := 0; v < k; v++ {
			if !alive[v] {
				continue
			}
			c := float64(sizes[v])
			for u := range adj[v] {
				c *= float64(sizes[u])
			}
			fill := 0
			for u := range adj[v] {
				for w := range adj[v] {
					if u < w && !adj[u][w] {
						fill++
					}
				}
			}
			if best < 0 || c < bestCells || (c == bestCells && fill < bestFill) {
				best, bestCells, bestFill = v, c, fill
			}
		}
		cl := []int{best}
		for u := range adj[best] {
			cl = append(cl, u)
		}
		slices.Sort(cl)
		cliques = append(cliques, cl)
		for u := range adj[best] {
			for w := range adj[best] {
				if u != w {
					adj[u][w] = true
				}
			}
			delete(adj[u], best)
		}
		alive[best] = false
	}
	// Keep the maximal ones.
	var out [][]int
	for i, c := range cliques {
		maximal := true
		for j, d := range cliques {
			if i != j && len(d) >= len(c) && subset(c, d) && (len(d) > len(c) || j < i) {
				maximal = false
				break
			}
		}
		if maximal {
			out = append(out, c)
		}
	}
	return out, nil
}
