package workload

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/inputerr"
)

// WidthKRange asks for every range of exactly K consecutive cells,
// x_r+…+x_{r+K−1} for r = 0…n−K: m = n−K+1 queries. Its Gram counts the
// windows that cover both cells, in closed form (0-based, lo = min(i,j),
// hi = max(i,j)):
//
//	V_ij = max(0, min(lo, n−K) − max(0, hi−K+1) + 1).
type WidthKRange struct{ N, K int }

// NewWidthKRange returns the width-k range workload on n cells; 1 ≤ k ≤ n.
func NewWidthKRange(n, k int) (*WidthKRange, error) {
	if err := checkN(n); err != nil {
		return nil, err
	}
	if k < 1 || k > n {
		return nil, inputerr.Errorf("workload", "range width k must be in [1, n=%d], got %d", n, k)
	}
	return &WidthKRange{N: n, K: k}, nil
}

// Name returns e.g. "width32range(n=1024)".
func (w *WidthKRange) Name() string { return fmt.Sprintf("width%drange(n=%d)", w.K, w.N) }

// Domain returns n.
func (w *WidthKRange) Domain() int { return w.N }

// Queries returns n−K+1.
func (w *WidthKRange) Queries() int { return w.N - w.K + 1 }

// Gram returns V in closed form without forming W.
func (w *WidthKRange) Gram() *mat.SymDense {
	n, k := w.N, w.K
	data := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			c := min(i, n-k) - max(0, j-k+1) + 1
			if c > 0 {
				data[i*n+j] = float64(c)
				data[j*n+i] = float64(c)
			}
		}
	}
	return mat.NewSymDense(n, data)
}

// Matrix returns the (n−K+1)×n window matrix, windows ordered by start.
func (w *WidthKRange) Matrix() *mat.Dense {
	d := mat.NewDense(w.Queries(), w.N, nil)
	for r := 0; r < w.Queries(); r++ {
		for c := r; c < r+w.K; c++ {
			d.Set(r, c, 1)
		}
	}
	return d
}
