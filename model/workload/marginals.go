package workload

import (
	"fmt"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/inputerr"
)

// Marginals is the workload of all K-way marginals of a multi-dimensional
// histogram with attribute sizes Dims = (d₀,…,d_{k−1}). The n = Πdᵢ cells are
// flattened in row-major order (attribute 0 varies slowest), matching the
// Kronecker product convention kron(F₀,…,F_{k−1}).
//
// The marginal on an attribute set S (|S| = K) has Π_{a∈S} d_a queries, one
// per joint value of the attributes in S; its query matrix is
// W_S = ⊗_a (I_{d_a} if a ∈ S else 1ᵀ_{d_a}), so its Gram is the Kronecker
// product W_SᵀW_S = ⊗_a (I_{d_a} if a ∈ S else J_{d_a}), J the all-ones matrix.
// Summing over the C(k,K) sets gives V = Σ_S ⊗_a F_a^S, which is also, in
// closed form, V_ij = C(agree(i,j), K) where agree(i,j) counts the attributes
// on which cells i and j take the same value. K = 0 is the single total query.
type Marginals struct {
	Dims []int
	K    int
}

// NewMarginals returns all k-way marginals over a domain with the given
// attribute sizes; every size must be positive and 0 ≤ k ≤ len(dims).
func NewMarginals(dims []int, k int) (*Marginals, error) {
	if len(dims) == 0 {
		return nil, inputerr.Errorf("workload", "marginals need at least one attribute")
	}
	n := 1
	for a, d := range dims {
		if d <= 0 {
			return nil, inputerr.Errorf("workload", "marginals: attribute %d has size %d; every attribute size must be positive", a, d)
		}
		if n > (1<<31)/d {
			return nil, inputerr.Errorf("workload", "marginals: domain %v is too large", dims)
		}
		n *= d
	}
	if k < 0 || k > len(dims) {
		return nil, inputerr.Errorf("workload", "marginals: k must be in [0, %d], got %d", len(dims), k)
	}
	return &Marginals{Dims: append([]int(nil), dims...), K: k}, nil
}

// ParseDims parses an attribute-size list such as "8x8x16" (also accepting
// ',' as separator).
func ParseDims(s string) ([]int, error) {
	// Split on every separator, not on runs of them: "8xx8" and "8x" have
	// an empty attribute size, which is an error, not a typo to guess at.
	var f []string
	if t := strings.TrimSpace(s); t != "" {
		f = strings.Split(strings.Map(func(r rune) rune {
			if r == 'X' || r == ',' || r == '*' {
				return 'x'
			}
			return r
		}, t), "x")
	}
	if len(f) == 0 {
		return nil, inputerr.Errorf("workload", "empty domain %q (want e.g. 8x8x16)", s)
	}
	dims := make([]int, len(f))
	for i, t := range f {
		if strings.TrimSpace(t) == "" {
			return nil, inputerr.Errorf("workload", "empty attribute size (position %d) in domain %q (want e.g. 8x8x16)", i+1, s)
		}
		d, err := strconv.Atoi(strings.TrimSpace(t))
		if err != nil {
			return nil, inputerr.Errorf("workload", "bad attribute size %q in domain %q", t, s)
		}
		dims[i] = d
	}
	return dims, nil
}

// Name returns e.g. "marginals(8x8x16,k=2)".
func (w *Marginals) Name() string {
	s := make([]string, len(w.Dims))
	for i, d := range w.Dims {
		s[i] = strconv.Itoa(d)
	}
	return fmt.Sprintf("marginals(%s,k=%d)", strings.Join(s, "x"), w.K)
}

// Domain returns n = Π dᵢ.
func (w *Marginals) Domain() int {
	n := 1
	for _, d := range w.Dims {
		n *= d
	}
	return n
}

// Subsets returns the attribute sets of the marginals, each increasing, in
// lexicographic order (the order of Matrix's row blocks).
func (w *Marginals) Subsets() [][]int {
	var out [][]int
	cur := make([]int, 0, w.K)
	var rec func(start int)
	rec = func(start int) {
		if len(cur) == w.K {
			out = append(out, append([]int(nil), cur...))
			return
		}
		for a := start; a < len(w.Dims); a++ {
			cur = append(cur, a)
			rec(a + 1)
			cur = cur[:len(cur)-1]
		}
	}
	rec(0)
	return out
}

// Queries returns m = Σ_S Π_{a∈S} d_a.
func (w *Marginals) Queries() int {
	m := 0
	for _, s := range w.Subsets() {
		p := 1
		for _, a := range s {
			p *= w.Dims[a]
		}
		m += p
	}
	return m
}

// KronTerm is one Kronecker-product summand of a structured Gram:
// ⊗_a Factors[a].
type KronTerm struct {
	// Attrs is the attribute set S of the marginal.
	Attrs []int
	// Factors[a] is I_{d_a} when a ∈ S and J_{d_a} (all ones) otherwise.
	Factors []*mat.SymDense
}

// KronTerms returns the Gram as the sum of Kronecker products Σ_S ⊗_a F_a^S.
func (w *Marginals) KronTerms() []KronTerm {
	ident := make([]*mat.SymDense, len(w.Dims))
	ones := make([]*mat.SymDense, len(w.Dims))
	for a, d := range w.Dims {
		ident[a] = mat.NewSymDense(d, nil)
		j := make([]float64, d*d)
		for i := 0; i < d; i++ {
			ident[a].SetSym(i, i, 1)
		}
		for i := range j {
			j[i] = 1
		}
		ones[a] = mat.NewSymDense(d, j)
	}
	var terms []KronTerm
	for _, s := range w.Subsets() {
		f := make([]*mat.SymDense, len(w.Dims))
		copy(f, ones)
		for _, a := range s {
			f[a] = ident[a]
		}
		terms = append(terms, KronTerm{Attrs: s, Factors: f})
	}
	return terms
}

// digits returns, for every cell, its value on every attribute.
func (w *Marginals) digits() [][]int32 {
	n, k := w.Domain(), len(w.Dims)
	out := make([][]int32, n)
	for i := 0; i < n; i++ {
		d := make([]int32, k)
		r := i
		for a := k - 1; a >= 0; a-- {
			d[a] = int32(r % w.Dims[a])
			r /= w.Dims[a]
		}
		out[i] = d
	}
	return out
}

// binomial returns C(a, b) as a float64 for small a.
func binomial(a, b int) float64 {
	if b < 0 || b > a {
		return 0
	}
	c := 1.0
	for i := 0; i < b; i++ {
		c = c * float64(a-i) / float64(i+1)
	}
	return c
}

// Gram returns V in closed form, V_ij = C(agree(i,j), K), in O(n²·k).
func (w *Marginals) Gram() *mat.SymDense {
	n, k := w.Domain(), len(w.Dims)
	dig := w.digits()
	table := make([]float64, k+1)
	for a := range table {
		table[a] = binomial(a, w.K)
	}
	data := make([]float64, n*n)
	for i := 0; i < n; i++ {
		di := dig[i]
		for j := i; j < n; j++ {
			dj := dig[j]
			agree := 0
			for a := 0; a < k; a++ {
				if di[a] == dj[a] {
					agree++
				}
			}
			data[i*n+j] = table[agree]
			data[j*n+i] = table[agree]
		}
	}
	return mat.NewSymDense(n, data)
}

// MulVecTo computes dst = V·x from the Kronecker structure without forming V:
// each term applies J along the attributes outside S (a sum over that axis,
// broadcast back) in O(n) per attribute, O(C(k,K)·k·n) in all. dst must have
// length n and may not alias x.
func (w *Marginals) MulVecTo(dst, x []float64) error {
	n := w.Domain()
	if len(x) != n || len(dst) != n {
		return inputerr.Errorf("workload", "marginals MulVecTo: want vectors of length %d, got %d and %d", n, len(dst), len(x))
	}
	for i := range dst {
		dst[i] = 0
	}
	t := make([]float64, n)
	for _, s := range w.Subsets() {
		in := make([]bool, len(w.Dims))
		for _, a := range s {
			in[a] = true
		}
		copy(t, x)
		stride := n
		for a, d := range w.Dims {
			stride /= d // product of sizes after a
			if in[a] {
				continue
			}
			block := d * stride
			for o := 0; o < n; o += block {
				for inner := 0; inner < stride; inner++ {
					sum := 0.0
					for c := 0; c < d; c++ {
						sum += t[o+c*stride+inner]
					}
					for c := 0; c < d; c++ {
						t[o+c*stride+inner] = sum
					}
				}
			}
		}
		for i, v := range t {
			dst[i] += v
		}
	}
	return nil
}

// Matrix returns the m×n marginal query matrix: for each attribute set S (in
// Subsets order) one row per joint value of S (row-major over S), with a 1 in
// every cell having that value.
func (w *Marginals) Matrix() *mat.Dense {
	n := w.Domain()
	dig := w.digits()
	d := mat.NewDense(w.Queries(), n, nil)
	row0 := 0
	for _, s := range w.Subsets() {
		size := 1
		for _, a := range s {
			size *= w.Dims[a]
		}
		for i := 0; i < n; i++ {
			r := 0
			for _, a := range s {
				r = r*w.Dims[a] + int(dig[i][a])
			}
			d.Set(row0+r, i, 1)
		}
		row0 += size
	}
	return d
}
