package strategy

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/inputerr"
)

// interval is the half-open cell range [lo, hi).
type interval struct{ lo, hi int }

// split divides [lo,hi) into min(b, hi−lo) consecutive parts whose sizes
// differ by at most one, larger parts first.
func split(iv interval, b int) []interval {
	s := iv.hi - iv.lo
	parts := min(b, s)
	out := make([]interval, 0, parts)
	lo := iv.lo
	for k := 0; k < parts; k++ {
		sz := s / parts
		if k < s%parts {
			sz++
		}
		out = append(out, interval{lo, lo + sz})
		lo += sz
	}
	return out
}

// Hierarchical is the b-ary tree of interval sums with unit weights: the root
// measures all n cells, every node of size > 1 is split into b near-equal
// children, down to single cells (Hay et al., VLDB 2010; H2 is b = 2). Each
// cell lies in one node per level, so Δ₁ = depth and Δ₂ = √depth, depth the
// number of nodes on the longest root-to-leaf path (⌈log_b n⌉+1 when n is a
// power of b). X_ij counts the nodes that contain both i and j.
type Hierarchical struct {
	N, B  int
	nodes []interval // preorder
	depth int
}

// NewHierarchical returns the b-ary hierarchical strategy on n cells, b ≥ 2.
func NewHierarchical(n, b int) (*Hierarchical, error) {
	if err := checkN(n); err != nil {
		return nil, err
	}
	if b < 2 {
		return nil, inputerr.Errorf("strategy", "hierarchical branching factor must be at least 2, got %d", b)
	}
	h := &Hierarchical{N: n, B: b}
	var rec func(iv interval, d int)
	rec = func(iv interval, d int) {
		h.nodes = append(h.nodes, iv)
		h.depth = max(h.depth, d)
		if iv.hi-iv.lo > 1 {
			for _, c := range split(iv, b) {
				rec(c, d+1)
			}
		}
	}
	rec(interval{0, n}, 1)
	return h, nil
}

// NewH2 returns the binary hierarchical strategy (H2) on n cells.
func NewH2(n int) (*Hierarchical, error) { return NewHierarchical(n, 2) }

// Name returns e.g. "h2(n=1024)".
func (h *Hierarchical) Name() string { return fmt.Sprintf("h%d(n=%d)", h.B, h.N) }

// Domain returns n.
func (h *Hierarchical) Domain() int { return h.N }

// Rows returns the number of tree nodes.
func (h *Hierarchical) Rows() int { return len(h.nodes) }

// Matrix returns the node-by-cell 0/1 matrix, nodes in preorder.
func (h *Hierarchical) Matrix() *mat.Dense {
	d := mat.NewDense(len(h.nodes), h.N, nil)
	for r, iv := range h.nodes {
		for c := iv.lo; c < iv.hi; c++ {
			d.Set(r, c, 1)
		}
	}
	return d
}

// Gram returns X = AᵀA by adding 1 on the block of every node, O(n²·b/(b−1))
// in all for balanced trees.
func (h *Hierarchical) Gram() *mat.SymDense {
	n := h.N
	data := make([]float64, n*n)
	for _, iv := range h.nodes {
		for i := iv.lo; i < iv.hi; i++ {
			row := data[i*n+iv.lo : i*n+iv.hi]
			for k := range row {
				row[k]++
			}
		}
	}
	return mat.NewSymDense(n, data)
}

// L2Sensitivity returns √depth.
func (h *Hierarchical) L2Sensitivity() float64 { return math.Sqrt(float64(h.depth)) }

// L1Sensitivity returns depth.
func (h *Hierarchical) L1Sensitivity() float64 { return float64(h.depth) }

// Wavelet is the Haar wavelet strategy of Privelet (Xiao et al., ICDE 2010)
// with unit (unweighted) coefficients: one row for the total, and for every
// node of the binary tree of intervals with more than one cell a row that is
// +1 on its left half and −1 on its right half (the left half takes the extra
// cell when the size is odd, which generalizes the transform to any n; it is
// still invertible, since a node's total and difference determine its two
// halves' totals). Each cell meets the total row and one ±1 row per level
// above it, so Δ₁ = Δ₂² = 1 + (number of its ancestors with > 1 cell).
type Wavelet struct {
	N     int
	nodes []interval // internal nodes, preorder; left half [lo, mid)
	mids  []int
	depth int // 1 + max internal nodes on a root-to-leaf path
}

// NewWavelet returns the Haar wavelet strategy on n cells.
func NewWavelet(n int) (*Wavelet, error) {
	if err := checkN(n); err != nil {
		return nil, err
	}
	w := &Wavelet{N: n}
	var rec func(iv interval, d int)
	rec = func(iv interval, d int) {
		w.depth = max(w.depth, d)
		if iv.hi-iv.lo <= 1 {
			return
		}
		parts := split(iv, 2)
		w.nodes = append(w.nodes, iv)
		w.mids = append(w.mids, parts[0].hi)
		rec(parts[0], d+1)
		rec(parts[1], d+1)
	}
	rec(interval{0, n}, 1)
	return w, nil
}

// Name returns e.g. "wavelet(n=1024)".
func (w *Wavelet) Name() string { return fmt.Sprintf("wavelet(n=%d)", w.N) }

// Domain returns n.
func (w *Wavelet) Domain() int { return w.N }

// Rows returns n: the total plus n−1 differences.
func (w *Wavelet) Rows() int { return len(w.nodes) + 1 }

// Matrix returns the n×n Haar matrix: the total row, then the difference rows
// in preorder.
func (w *Wavelet) Matrix() *mat.Dense {
	d := mat.NewDense(w.Rows(), w.N, nil)
	for c := 0; c < w.N; c++ {
		d.Set(0, c, 1)
	}
	for r, iv := range w.nodes {
		for c := iv.lo; c < iv.hi; c++ {
			if c < w.mids[r] {
				d.Set(r+1, c, 1)
			} else {
				d.Set(r+1, c, -1)
			}
		}
	}
	return d
}

// Gram returns X = AᵀA: 1 everywhere from the total row, and for every
// internal node +1 on (left×left) and (right×right), −1 on the cross blocks.
func (w *Wavelet) Gram() *mat.SymDense {
	n := w.N
	data := make([]float64, n*n)
	for i := range data {
		data[i] = 1
	}
	for r, iv := range w.nodes {
		mid := w.mids[r]
		for i := iv.lo; i < iv.hi; i++ {
			row := data[i*n:]
			left := i < mid
			for j := iv.lo; j < iv.hi; j++ {
				if (j < mid) == left {
					row[j]++
				} else {
					row[j]--
				}
			}
		}
	}
	return mat.NewSymDense(n, data)
}

// L2Sensitivity returns √depth.
func (w *Wavelet) L2Sensitivity() float64 { return math.Sqrt(float64(w.depth)) }

// L1Sensitivity returns depth.
func (w *Wavelet) L1Sensitivity() float64 { return float64(w.depth) }
