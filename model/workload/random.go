package workload

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/inputerr"
)

// The random workload families of the Low-Rank Mechanism paper (Yuan et al.,
// VLDB 2012) and of Yuan et al. (KDD 2016). They are synthetic benchmark
// inputs, not privacy noise: each is drawn from a seeded math/rand/v2 PCG
// generator so that a (parameters, seed) pair always produces the same
// workload on every platform. The generator is deterministic and insecure by
// design; nothing here touches private data.

// newWorkloadRand returns the deterministic generator for a seed; stream
// separates the families so equal seeds do not give correlated workloads.
func newWorkloadRand(seed uint64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream^0x9e3779b97f4a7c15))
}

func checkM(m int) error {
	if m <= 0 {
		return inputerr.Errorf("workload", "number of queries m must be positive, got %d", m)
	}
	return nil
}

// WRange is m random range queries: query r sums x_{Lo[r]}…x_{Hi[r]}, where
// the two endpoints are drawn independently and uniformly from {0,…,n−1} and
// ordered (the WRange workload of the Low-Rank Mechanism paper). Its Gram
// counts the ranges covering both cells; it is built by a two-dimensional
// difference array in O(m + n²) time, never forming W.
type WRange struct {
	N      int
	Seed   uint64
	Lo, Hi []int // endpoints of each range, inclusive, Lo[r] ≤ Hi[r]
	// Redrawn counts the whole-workload redraws Parse made because a draw
	// left a cell that no range covers (0 for NewWRange; see covering.go).
	Redrawn int
}

// NewWRange draws m random ranges on n cells from seed.
func NewWRange(n, m int, seed uint64) (*WRange, error) {
	if err := checkN(n); err != nil {
		return nil, err
	}
	if err := checkM(m); err != nil {
		return nil, err
	}
	rng := newWorkloadRand(seed, 1)
	w := &WRange{N: n, Seed: seed, Lo: make([]int, m), Hi: make([]int, m)}
	for r := 0; r < m; r++ {
		a, b := rng.IntN(n), rng.IntN(n)
		w.Lo[r], w.Hi[r] = min(a, b), max(a, b)
	}
	return w, nil
}

// Name returns e.g. "wrange(n=1024,m=512,seed=1)".
func (w *WRange) Name() string {
	if w.Redrawn > 0 {
		return fmt.Sprintf("wrange(n=%d,m=%d,seed=%d,redrawn=%d)", w.N, len(w.Lo), w.Seed, w.Redrawn)
	}
	return fmt.Sprintf("wrange(n=%d,m=%d,seed=%d)", w.N, len(w.Lo), w.Seed)
}

// Domain returns n.
func (w *WRange) Domain() int { return w.N }

// Queries returns m.
func (w *WRange) Queries() int { return len(w.Lo) }

// Gram returns V = WᵀW: each range [a,b] adds 1 on the square [a,b]², recorded
// as four corner increments and summed by 2-D prefix sums.
func (w *WRange) Gram() *mat.SymDense {
	n := w.N
	s := n + 1
	diff := make([]float64, s*s)
	for r := range w.Lo {
		a, b := w.Lo[r], w.Hi[r]+1
		diff[a*s+a]++
		diff[a*s+b]--
		diff[b*s+a]--
		diff[b*s+b]++
	}
	data := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			v := diff[i*s+j]
			if i > 0 {
				v += data[(i-1)*n+j]
			}
			if j > 0 {
				v += data[i*n+j-1]
			}
			if i > 0 && j > 0 {
				v -= data[(i-1)*n+j-1]
			}
			data[i*n+j] = v
		}
	}
	return mat.NewSymDense(n, data)
}

// Matrix returns the m×n range matrix.
func (w *WRange) Matrix() *mat.Dense {
	d := mat.NewDense(len(w.Lo), w.N, nil)
	for r := range w.Lo {
		for c := w.Lo[r]; c <= w.Hi[r]; c++ {
			d.Set(r, c, 1)
		}
	}
	return d
}

// WDiscrete is m queries whose weights are independent draws from {−1, 0, +1}:
// each entry is −1 with probability PNeg, +1 with probability PPos and 0
// otherwise (the WDiscrete workload of the Low-Rank Mechanism paper, whose
// queries are sparse signed combinations of cells; the probabilities are
// parameters because the source text we build from does not fix them, and
// Parse's defaults PNeg = PPos = 0.01 are our choice). The queries are stored
// sparsely and the Gram is accumulated from them in O(Σ nnz(row)²).
type WDiscrete struct {
	N          int
	PNeg, PPos float64
	Seed       uint64
	// Cols[r] and Signs[r] list the nonzero columns of query r (increasing)
	// and their signs ±1.
	Cols  [][]int
	Signs [][]int8
	// Redrawn counts the columns (cells) Parse redrew because no query
	// touched them (0 for NewWDiscrete; see covering.go).
	Redrawn int
}

// NewWDiscrete draws m signed queries on n cells from seed. pNeg and pPos
// must be finite, non-negative, with 0 < pNeg+pPos ≤ 1.
func NewWDiscrete(n, m int, pNeg, pPos float64, seed uint64) (*WDiscrete, error) {
	if err := checkN(n); err != nil {
		return nil, err
	}
	if err := checkM(m); err != nil {
		return nil, err
	}
	for _, p := range []float64{pNeg, pPos} {
		if math.IsNaN(p) || p < 0 || p > 1 {
			return nil, inputerr.Errorf("workload", "WDiscrete probabilities must lie in [0, 1], got pneg=%g, ppos=%g", pNeg, pPos)
		}
	}
	if !(pNeg+pPos > 0) || pNeg+pPos > 1 {
		return nil, inputerr.Errorf("workload", "WDiscrete needs 0 < pneg+ppos ≤ 1, got pneg=%g, ppos=%g", pNeg, pPos)
	}
	rng := newWorkloadRand(seed, 2)
	w := &WDiscrete{N: n, PNeg: pNeg, PPos: pPos, Seed: seed, Cols: make([][]int, m), Signs: make([][]int8, m)}
	for r := 0; r < m; r++ {
		for c := 0; c < n; c++ {
			u := rng.Float64()
			switch {
			case u < pNeg:
				w.Cols[r] = append(w.Cols[r], c)
				w.Signs[r] = append(w.Signs[r], -1)
			case u < pNeg+pPos:
				w.Cols[r] = append(w.Cols[r], c)
				w.Signs[r] = append(w.Signs[r], 1)
			}
		}
	}
	return w, nil
}

// Name returns e.g. "wdiscrete(n=1024,m=512,pneg=0.01,ppos=0.01,seed=1)".
func (w *WDiscrete) Name() string {
	if w.Redrawn > 0 {
		return fmt.Sprintf("wdiscrete(n=%d,m=%d,pneg=%g,ppos=%g,seed=%d,redrawn=%d)", w.N, len(w.Cols), w.PNeg, w.PPos, w.Seed, w.Redrawn)
	}
	return fmt.Sprintf("wdiscrete(n=%d,m=%d,pneg=%g,ppos=%g,seed=%d)", w.N, len(w.Cols), w.PNeg, w.PPos, w.Seed)
}

// Domain returns n.
func (w *WDiscrete) Domain() int { return w.N }

// Queries returns m.
func (w *WDiscrete) Queries() int { return len(w.Cols) }

// Gram returns V = WᵀW, summing the sparse outer product of every query.
func (w *WDiscrete) Gram() *mat.SymDense {
	n := w.N
	data := make([]float64, n*n)
	for r, cols := range w.Cols {
		sg := w.Signs[r]
		for a, ca := range cols {
			row := data[ca*n:]
			for b := a; b < len(cols); b++ {
				row[cols[b]] += float64(sg[a]) * float64(sg[b])
			}
		}
	}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			data[j*n+i] = data[i*n+j]
		}
	}
	return mat.NewSymDense(n, data)
}

// Matrix returns the m×n signed query matrix.
func (w *WDiscrete) Matrix() *mat.Dense {
	d := mat.NewDense(len(w.Cols), w.N, nil)
	for r, cols := range w.Cols {
		for a, c := range cols {
			d.Set(r, c, float64(w.Signs[r][a]))
		}
	}
	return d
}

// WRelated is the low-rank workload W = C·B with C (m×s) and B (s×n) having
// independent standard normal entries, so rank(W) = min(m, s, n) with
// probability one (the WRelated workload of the Low-Rank Mechanism paper:
// m queries that are linear combinations of s base queries; Parse's default
// s = min(m,n)/2 is our choice). Its Gram
// V = Bᵀ(CᵀC)B is formed in O(ms² + s²n + sn²) without forming W.
type WRelated struct {
	N, M, S int
	Seed    uint64
	C, B    *mat.Dense
}

// NewWRelated draws a rank-s workload of m queries on n cells from seed.
func NewWRelated(n, m, s int, seed uint64) (*WRelated, error) {
	if err := checkN(n); err != nil {
		return nil, err
	}
	if err := checkM(m); err != nil {
		return nil, err
	}
	if s <= 0 {
		return nil, inputerr.Errorf("workload", "WRelated rank s must be positive, got %d", s)
	}
	rng := newWorkloadRand(seed, 3)
	c := make([]float64, m*s)
	for i := range c {
		c[i] = rng.NormFloat64()
	}
	b := make([]float64, s*n)
	for i := range b {
		b[i] = rng.NormFloat64()
	}
	return &WRelated{N: n, M: m, S: s, Seed: seed, C: mat.NewDense(m, s, c), B: mat.NewDense(s, n, b)}, nil
}

// Name returns e.g. "wrelated(n=1024,m=512,s=256,seed=1)".
func (w *WRelated) Name() string {
	return fmt.Sprintf("wrelated(n=%d,m=%d,s=%d,seed=%d)", w.N, w.M, w.S, w.Seed)
}

// Domain returns n.
func (w *WRelated) Domain() int { return w.N }

// Queries returns m.
func (w *WRelated) Queries() int { return w.M }

// Gram returns V = Bᵀ(CᵀC)B.
func (w *WRelated) Gram() *mat.SymDense {
	var g mat.SymDense
	g.SymOuterK(1, w.C.T()) // CᵀC, s×s
	var gb mat.Dense
	gb.Mul(&g, w.B) // s×n
	var v mat.Dense
	v.Mul(w.B.T(), &gb)
	return symmetrize(&v)
}

// Matrix returns W = C·B (m×n).
func (w *WRelated) Matrix() *mat.Dense {
	var d mat.Dense
	d.Mul(w.C, w.B)
	return &d
}

// symmetrize returns (A+Aᵀ)/2 of a square dense matrix as a SymDense, with
// both triangles of the backing data filled.
func symmetrize(a *mat.Dense) *mat.SymDense {
	n, _ := a.Dims()
	data := make([]float64, n*n)
	for i := 0; i < n; i++ {
		data[i*n+i] = a.At(i, i)
		for j := i + 1; j < n; j++ {
			v := (a.At(i, j) + a.At(j, i)) / 2
			data[i*n+j] = v
			data[j*n+i] = v
		}
	}
	return mat.NewSymDense(n, data)
}
