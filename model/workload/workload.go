// Package workload describes batches of linear counting queries over a
// histogram. A Workload knows its domain size n, its number of queries m and
// its Gram matrix V = WᵀW, which is all the strategy optimizer needs; the m×n
// query matrix W is formed only on request (Matrix) and only for workloads
// where that is sensible.
package workload

import (
	"fmt"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/inputerr"
)

// Workload is a batch of m linear queries W (m×n) over a histogram of n cells.
type Workload interface {
	// Name is a short human-readable description, e.g. "prefix(n=256)".
	Name() string
	// Domain is n, the number of histogram cells.
	Domain() int
	// Queries is m, the number of queries.
	Queries() int
	// Gram returns V = WᵀW (n×n), in closed form where one exists.
	Gram() *mat.SymDense
}

// Explicit is a Workload that can also form its query matrix W (m×n).
type Explicit interface {
	Workload
	// Matrix returns W. It may be large: m×n float64s.
	Matrix() *mat.Dense
}

// MaxDomain is the largest domain size any workload accepts: n² float64s
// must be addressable (8n² < 2^63), which 2^30 keeps with room for the
// solvers' index arithmetic. Real limits are far lower and depend on the
// machine; commands check those before building anything.
const MaxDomain = 1 << 30

// checkN validates a domain size.
func checkN(n int) error {
	if n <= 0 {
		return inputerr.Errorf("workload", "domain size n must be positive, got %d", n)
	}
	if n > MaxDomain {
		return inputerr.Errorf("workload", "domain size n = %d is too large (at most %d: the Gram matrix alone has n² entries)", n, MaxDomain)
	}
	return nil
}

// Identity asks for every cell: W = I, V = I.
type Identity struct{ N int }

// NewIdentity returns the identity workload on n cells.
func NewIdentity(n int) (*Identity, error) {
	if err := checkN(n); err != nil {
		return nil, err // nil on error: no invalid workload escapes
	}
	return &Identity{N: n}, nil
}

func (w *Identity) Name() string { return fmt.Sprintf("identity(n=%d)", w.N) }
func (w *Identity) Domain() int  { return w.N }
func (w *Identity) Queries() int { return w.N }
func (w *Identity) Gram() *mat.SymDense {
	v := mat.NewSymDense(w.N, nil)
	for i := 0; i < w.N; i++ {
		v.SetSym(i, i, 1)
	}
	return v
}
func (w *Identity) Matrix() *mat.Dense {
	d := mat.NewDense(w.N, w.N, nil)
	for i := 0; i < w.N; i++ {
		d.Set(i, i, 1)
	}
	return d
}

// Total asks for the sum of all cells: W = 1ᵀ, V = 11ᵀ (rank one).
type Total struct{ N int }

// NewTotal returns the single-query total workload on n cells.
func NewTotal(n int) (*Total, error) {
	if err := checkN(n); err != nil {
		return nil, err // nil on error: no invalid workload escapes
	}
	return &Total{N: n}, nil
}

func (w *Total) Name() string { return fmt.Sprintf("total(n=%d)", w.N) }
func (w *Total) Domain() int  { return w.N }
func (w *Total) Queries() int { return 1 }
func (w *Total) Gram() *mat.SymDense {
	data := make([]float64, w.N*w.N)
	for i := range data {
		data[i] = 1
	}
	return mat.NewSymDense(w.N, data)
}
func (w *Total) Matrix() *mat.Dense {
	data := make([]float64, w.N)
	for i := range data {
		data[i] = 1
	}
	return mat.NewDense(1, w.N, data)
}

// Prefix asks for every prefix sum x₀+…+x_i (i = 0…n−1): W is lower-triangular
// ones and V_ij = n − max(i,j) (0-based).
type Prefix struct{ N int }

// NewPrefix returns the prefix-sum workload on n cells.
func NewPrefix(n int) (*Prefix, error) {
	if err := checkN(n); err != nil {
		return nil, err // nil on error: no invalid workload escapes
	}
	return &Prefix{N: n}, nil
}

func (w *Prefix) Name() string { return fmt.Sprintf("prefix(n=%d)", w.N) }
func (w *Prefix) Domain() int  { return w.N }
func (w *Prefix) Queries() int { return w.N }
func (w *Prefix) Gram() *mat.SymDense {
	n := w.N
	data := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			data[i*n+j] = float64(n - max(i, j))
		}
	}
	return mat.NewSymDense(n, data)
}
func (w *Prefix) Matrix() *mat.Dense {
	d := mat.NewDense(w.N, w.N, nil)
	for i := 0; i < w.N; i++ {
		for j := 0; j <= i; j++ {
			d.Set(i, j, 1)
		}
	}
	return d
}

// AllRange asks for every range sum x_i+…+x_j, 0 ≤ i ≤ j < n: m = n(n+1)/2
// queries and V_ij = (min(i,j)+1)(n − max(i,j)) (0-based).
type AllRange struct{ N int }

// NewAllRange returns the all-ranges workload on n cells.
func NewAllRange(n int) (*AllRange, error) {
	if err := checkN(n); err != nil {
		return nil, err // nil on error: no invalid workload escapes
	}
	return &AllRange{N: n}, nil
}

func (w *AllRange) Name() string { return fmt.Sprintf("allrange(n=%d)", w.N) }
func (w *AllRange) Domain() int  { return w.N }
func (w *AllRange) Queries() int { return w.N * (w.N + 1) / 2 }
func (w *AllRange) Gram() *mat.SymDense {
	n := w.N
	data := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			data[i*n+j] = float64((min(i, j) + 1) * (n - max(i, j)))
		}
	}
	return mat.NewSymDense(n, data)
}

// Matrix returns the n(n+1)/2 × n range matrix, ranges ordered by start then end.
func (w *AllRange) Matrix() *mat.Dense {
	n := w.N
	d := mat.NewDense(w.Queries(), n, nil)
	r := 0
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			for k := i; k <= j; k++ {
				d.Set(r, k, 1)
			}
			r++
		}
	}
	return d
}

// Builtin returns the named closed-form workload: identity, total, prefix or
// allrange (case-insensitive).
func Builtin(name string, n int) (Workload, error) {
	if err := checkN(n); err != nil {
		return nil, err
	}
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "identity":
		return &Identity{N: n}, nil
	case "total":
		return &Total{N: n}, nil
	case "prefix":
		return &Prefix{N: n}, nil
	case "allrange":
		return &AllRange{N: n}, nil
	}
	return nil, inputerr.Errorf("workload", "unknown built-in workload %q (want identity, total, prefix or allrange)", name)
}
