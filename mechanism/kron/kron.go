// Package kron applies Kronecker products of small per-attribute matrices to
// long vectors, factor by factor, without ever forming the product.
//
// A strategy or workload over a domain of k attributes with sizes d₁…d_k is
// often a Kronecker product A = A₁ ⊗ … ⊗ A_k of small mᵢ×dᵢ factors, acting
// on histograms of n = Πdᵢ cells stored row-major in domain order (first
// attribute slowest). Forming A would take Πmᵢ·Πdᵢ entries; applying it
// factor by factor takes O(n·Σmᵢ) work and two vectors of memory.
//
// # How one factor is applied
//
// View the current vector as a dᵢ × R row-major matrix X (R = size/dᵢ; the
// attribute being processed varies slowest). One GEMM computes
// Z = Xᵀ·Aᵢᵀ (R × mᵢ): its rows run over the remaining attributes and its
// last index over Aᵢ's rows, so Z, read row-major, is the tensor with
// attribute i transformed and rotated to the fastest position. After k such
// steps every attribute has been transformed once and the rotations have
// come full circle: the result is (⊗Aᵢ)x, row-major in domain order, in k
// GEMM calls through package blas (OpenBLAS or pure Go), each streaming the
// vector once.
//
// # Least squares and variances
//
// The pseudo-inverse of a Kronecker product is the product of the factors'
// pseudo-inverses, (⊗Aᵢ)⁺ = ⊗Aᵢ⁺, so the least-squares (minimum-norm)
// solution of A x ≈ y is x̂ = (⊗Aᵢ⁺)y, applied the same way. With
// y = A x + z, z ~ (0, σ²I), the covariance of x̂ is σ²(AᵀA)⁺ = σ²⊗(AᵢᵀAᵢ)⁺,
// and for a product workload W = ⊗Wᵢ the per-query variances are
// σ²·diag(W(AᵀA)⁺Wᵀ) = σ²·⊗ᵢ diag(Wᵢ(AᵢᵀAᵢ)⁺Wᵢᵀ): a Kronecker product of
// per-factor diagonals, each the squared row norms of WᵢAᵢ⁺. Those answers
// are unbiased exactly when every Wᵢ lies in the row space of Aᵢ (Estimable).
package kron

import (
	"fmt"
	"math"
	"math/bits"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/internal/inputerr"
)

// ErrInput is wrapped by every error returned for bad input.
var ErrInput = inputerr.ErrInput

func errorf(format string, a ...any) error { return inputerr.Errorf("kron", format, a...) }

// Product is the Kronecker product A₁ ⊗ … ⊗ A_k of dense factors. It is
// immutable and safe for concurrent use.
type Product struct {
	factors    []blas.General // row-major copies
	rows, cols int
}

// New returns the Kronecker product of the given factors (copied), in
// domain order. Every factor must be non-empty with finite entries, and the
// product's dimensions must fit in an int.
func New(factors ...mat.Matrix) (*Product, error) {
	if len(factors) == 0 {
		return nil, errorf("a Kronecker product needs at least one factor")
	}
	p := &Product{factors: make([]blas.General, len(factors)), rows: 1, cols: 1}
	for i, f := range factors {
		if f == nil {
			return nil, errorf("factor %d is nil", i+1)
		}
		r, c := f.Dims()
		if r == 0 || c == 0 {
			return nil, errorf("factor %d is empty (%d×%d)", i+1, r, c)
		}
		g := blas.NewGeneral(r, c)
		for a := 0; a < r; a++ {
			for b := 0; b < c; b++ {
				v := f.At(a, b)
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return nil, errorf("factor %d entry (%d,%d) is %v", i+1, a, b, v)
				}
				g.Data[a*c+b] = v
			}
		}
		p.factors[i] = g
		var ok1, ok2 bool
		p.rows, ok1 = mulInt(p.rows, r)
		p.cols, ok2 = mulInt(p.cols, c)
		if !ok1 || !ok2 {
			return nil, errorf("the product of %d factors has more rows or columns than fit in an int", i+1)
		}
	}
	return p, nil
}

// mulInt returns a·b and whether it fits in an int.
func mulInt(a, b int) (int, bool) {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	return int(lo), hi == 0 && lo <= math.MaxInt
}

// Dims returns the product's dimensions Πmᵢ × Πdᵢ.
func (p *Product) Dims() (rows, cols int) { return p.rows, p.cols }

// Len returns the number of factors.
func (p *Product) Len() int { return len(p.factors) }

// Factor returns a copy of factor i.
func (p *Product) Factor(i int) *mat.Dense {
	g := p.factors[i]
	return mat.NewDense(g.Rows, g.Cols, append([]float64(nil), g.Data...))
}

// MulVec returns (⊗Aᵢ)x for x of length Πdᵢ, in two buffers of at most
// the largest intermediate length (max over i of Πⱼ<ᵢmⱼ·Πⱼ≥ᵢdⱼ). x is not
// modified.
func (p *Product) MulVec(x []float64) ([]float64, error) {
	return p.apply(x, false)
}

// MulVecOverwrite is MulVec that may use x's storage as one of its two
// buffers (destroying x), so the only allocation is one buffer: for square
// factors the peak memory is two vectors, x and the result. The result may
// alias x.
func (p *Product) MulVecOverwrite(x []float64) ([]float64, error) {
	return p.apply(x, true)
}

// apply runs the k rotated GEMMs, ping-ponging between two buffers of
// the largest intermediate length (x's array may be one when overwrite).
func (p *Product) apply(x []float64, overwrite bool) ([]float64, error) {
	if len(x) != p.cols {
		return nil, errorf("vector has length %d but the product has %d columns", len(x), p.cols)
	}
	size, maxSize := p.cols, p.cols
	for _, f := range p.factors {
		size = size / f.Cols * f.Rows
		maxSize = max(maxSize, size)
	}
	var bufs [2][]float64
	if overwrite && cap(x) >= maxSize {
		bufs[0] = x[:cap(x)]
	}
	cur, size := x, p.cols
	for _, f := range p.factors {
		d, m := f.Cols, f.Rows
		r := size / d
		out := r * m
		var dst []float64
		for b := range bufs { // a buffer that does not hold cur; allocate lazily
			if bufs[b] == nil {
				bufs[b] = make([]float64, maxSize)
			}
			if !sameArray(bufs[b], cur) {
				dst = bufs[b][:out]
				break
			}
		}
		xm := blas.General{Rows: d, Cols: r, Stride: r, Data: cur[:size]}
		zm := blas.General{Rows: r, Cols: m, Stride: m, Data: dst}
		blas.Gemm(gblas.Trans, gblas.Trans, 1, xm, f, 0, zm)
		cur, size = dst, out
	}
	return cur[:size], nil
}

// sameArray reports whether two non-empty slices share their first element's array.
func sameArray(a, b []float64) bool {
	return cap(a) > 0 && cap(b) > 0 && &a[:cap(a)][cap(a)-1] == &b[:cap(b)][cap(b)-1]
}

// PseudoInverse returns ⊗Aᵢ⁺, the pseudo-inverse of the product, from the
// factors' thin SVDs. Singular values at or below max(mᵢ,dᵢ)·ε·σ_max (the
// cut-off numpy.linalg.pinv and MATLAB's pinv use) count as zero, so a
// rank-deficient factor (a row of totals) gets its minimum-norm inverse.
func (p *Product) PseudoInverse() (*Product, error) {
	inv := make([]mat.Matrix, len(p.factors))
	for i := range p.factors {
		pi, err := pinv(p.Factor(i))
		if err != nil {
			return nil, fmt.Errorf("kron: factor %d: %w", i+1, err)
		}
		inv[i] = pi
	}
	return New(inv...)
}

// pinv returns the Moore–Penrose pseudo-inverse of a.
func pinv(a *mat.Dense) (*mat.Dense, error) {
	m, n := a.Dims()
	var svd mat.SVD
	if !svd.Factorize(a, mat.SVDThin) {
		return nil, fmt.Errorf("SVD did not converge")
	}
	s := svd.Values(nil)
	var u, v mat.Dense
	svd.UTo(&u)
	svd.VTo(&v)
	tol := float64(max(m, n)) * 0x1p-52 * s[0]
	// A⁺ = V Σ⁺ Uᵀ: scale V's columns, then multiply by Uᵀ.
	k := len(s)
	vs := mat.NewDense(n, k, nil)
	for j := 0; j < k; j++ {
		if s[j] <= tol {
			continue
		}
		for i := 0; i < n; i++ {
			vs.Set(i, j, v.At(i, j)/s[j])
		}
	}
	out := mat.NewDense(n, m, nil)
	out.Mul(vs, u.T())
	return out, nil
}

// Transpose returns ⊗Aᵢᵀ.
func (p *Product) Transpose() *Product {
	t := make([]mat.Matrix, len(p.factors))
	for i := range p.factors {
		t[i] = mat.DenseCopyOf(p.Factor(i).T())
	}
	q, _ := New(t...) // same entries and sizes: cannot fail
	return q
}

// Gram returns ⊗(AᵢᵀAᵢ) = AᵀA.
func (p *Product) Gram() *Product {
	g := make([]mat.Matrix, len(p.factors))
	for i := range p.factors {
		f := p.Factor(i)
		var x mat.Dense
		x.Mul(f.T(), f)
		g[i] = &x
	}
	q, _ := New(g...)
	return q
}

// ColumnNorm returns the largest column q-norm (q = 1 or 2) of the product,
// Πᵢ (largest column q-norm of Aᵢ): the L1 or L2 sensitivity of x ↦ A x
// when one record changes one cell by one.
func (p *Product) ColumnNorm(q int) float64 {
	out := 1.0
	for _, f := range p.factors {
		best := 0.0
		for j := 0; j < f.Cols; j++ {
			s := 0.0
			for i := 0; i < f.Rows; i++ {
				v := f.Data[i*f.Stride+j]
				if q == 1 {
					s += math.Abs(v)
				} else {
					s += v * v
				}
			}
			if q != 1 {
				s = math.Sqrt(s)
			}
			best = math.Max(best, s)
		}
		out *= best
	}
	return out
}
