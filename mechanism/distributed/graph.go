package distributed

import (
	"math/rand/v2"
	"sort"

	"github.com/dpsolve/dpsolve/internal/inputerr"
)

// ErrInput is wrapped by every error caused by invalid arguments.
// It is the one dpsolve-wide sentinel (internal/inputerr), so
// errors.Is(err, ErrInput) holds for every package's bad-input errors.
var ErrInput = inputerr.ErrInput

func inputErrorf(format string, a ...any) error {
	return inputerr.Errorf("distributed", format, a...)
}

// Graph is an undirected communication graph on agents 0..N−1.
type Graph struct {
	// Adj[i] lists the neighbours of i (sorted, no self-loops, no duplicates).
	Adj [][]int
}

// NewGraph builds a graph from an edge list, validating it and requiring
// connectivity (the algorithms only converge on connected graphs).
func NewGraph(n int, edges [][2]int) (*Graph, error) {
	if n <= 0 {
		return nil, inputErrorf("graph needs at least one agent, got %d", n)
	}
	set := make([]map[int]bool, n)
	for i := range set {
		set[i] = map[int]bool{}
	}
	for _, e := range edges {
		a, b := e[0], e[1]
		if a < 0 || b < 0 || a >= n || b >= n {
			return nil, inputErrorf("edge %v out of range for %d agents", e, n)
		}
		if a == b {
			return nil, inputErrorf("self-loop at %d", a)
		}
		set[a][b], set[b][a] = true, true
	}
	g := &Graph{Adj: make([][]int, n)}
	for i, s := range set {
		for j := range s {
			g.Adj[i] = append(g.Adj[i], j)
		}
		sort.Ints(g.Adj[i])
	}
	if !g.Connected() {
		return nil, inputErrorf("graph is not connected")
	}
	return g, nil
}

// Ring returns the cycle 0–1–…–(n−1)–0 (a path for n = 2, a single node for n = 1).
func Ring(n int) (*Graph, error) {
	var edges [][2]int
	for i := 0; i < n && n > 1; i++ {
		if n == 2 && i == 1 {
			break
		}
		edges = append(edges, [2]int{i, (i + 1) % n})
	}
	return NewGraph(n, edges)
}

// RandomConnected returns a random connected graph: a uniformly random
// spanning tree (random attachment order) plus every other edge independently
// with probability p. Deterministic in seed.
func RandomConnected(n int, p float64, seed uint64) (*Graph, error) {
	if !(p >= 0 && p <= 1) {
		return nil, inputErrorf("edge probability must be in [0, 1], got %v", p)
	}
	if n <= 0 {
		return nil, inputErrorf("graph needs at least one agent, got %d", n)
	}
	rng := rand.New(rand.NewPCG(seed, 0x6a09e667f3bcc908))
	perm := rng.Perm(n)
	var edges [][2]int
	inTree := map[[2]int]bool{}
	for i := 1; i < n; i++ {
		a, b := perm[i], perm[rng.IntN(i)]
		edges = append(edges, [2]int{a, b})
		inTree[[2]int{min(a, b), max(a, b)}] = true
	}
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			if !inTree[[2]int{a, b}] && rng.Float64() < p {
				edges = append(edges, [2]int{a, b})
			}
		}
	}
	return NewGraph(n, edges)
}

// N is the number of agents.
func (g *Graph) N() int { return len(g.Adj) }

// Connected reports whether every agent is reachable from agent 0.
func (g *Graph) Connected() bool {
	n := len(g.Adj)
	if n == 0 {
		return false
	}
	seen := make([]bool, n)
	stack := []int{0}
	seen[0] = true
	count := 1
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, j := range g.Adj[i] {
			if !seen[j] {
				seen[j] = true
				count++
				stack = append(stack, j)
			}
		}
	}
	return count == n
}

// MetropolisWeights returns the doubly stochastic Metropolis–Hastings weights
// W[i][j] = 1/(1 + max(deg i, deg j)) for neighbours, W[i][i] = 1 − Σ_{j≠i} W[i][j];
// they are symmetric, non-negative with positive diagonal, so on a connected
// graph W^k → 11ᵀ/N.
func (g *Graph) MetropolisWeights() [][]float64 {
	n := len(g.Adj)
	w := make([][]float64, n)
	for i := range w {
		w[i] = make([]float64, n)
	}
	for i, nb := range g.Adj {
		s := 0.0
		for _, j := range nb {
			v := 1 / float64(1+max(len(g.Adj[i]), len(g.Adj[j])))
			w[i][j] = v
			s += v
		}
		w[i][i] = 1 - s
	}
	return w
}
