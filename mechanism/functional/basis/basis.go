// Package basis is an orthonormal basis of L²(D) on a box D = Π [loᵢ, hiᵢ] ⊂ ℝᵈ
// made of tensor products of normalized Legendre polynomials, ordered by total
// degree, with Gauss–Legendre quadrature for coefficients and exact evaluation
// of a truncated expansion, its gradient and its Hessian.
//
// # The basis
//
// On an interval [a, b] of length L = b − a, with t = (2x − a − b)/L ∈ [−1, 1],
//
//	ψₙ(x) = √((2n+1)/L) · Pₙ(t),
//
// where Pₙ is the Legendre polynomial (Pₙ(1) = 1). Since ∫₋₁¹ PₘPₙ dt = 2/(2n+1)·δₘₙ
// and dx = (L/2)·dt, the ψₙ are orthonormal in L²([a, b]). On the box D, for a
// multi-index α ∈ ℕᵈ, φ_α(x) = Πᵢ ψ_{αᵢ}(xᵢ); these are orthonormal in L²(D) and
// complete (polynomials are dense in L²(D)). The basis is ordered by total degree
// |α| = Σ αᵢ: first |α| = 0, then |α| = 1, and so on; within one total degree the
// multi-indices come in decreasing lexicographic order (in 2-D: (g,0), (g−1,1), …,
// (0,g)). Truncation at total degree K keeps C(K+d, d) functions: (K+1)(K+2)/2 in
// 2-D, so K = 4, 6, 14 give 15, 28, 120 coefficients. The ordering matters to the
// functional Laplace mechanism, whose noise scale decays with the position k in
// this list (k = 1, 2, …).
//
// # Coefficients and evaluation
//
// The coefficient of f on φ_k is ⟨f, φ_k⟩ = ∫_D f φ_k dx, computed with the tensor
// Gauss–Legendre rule with m nodes per axis, which integrates polynomials of degree
// ≤ 2m − 1 in each variable exactly; so for a polynomial f of total degree ≤ K,
// m ≥ K + 1 recovers its coefficients exactly (up to rounding). Values and
// derivatives use the three-term recurrence
// Pₙ₊₁ = ((2n+1) t Pₙ − n Pₙ₋₁)/(n+1) and the exact derivative identities
// P′ₙ₊₁ = P′ₙ₋₁ + (2n+1) Pₙ, P″ₙ₊₁ = P″ₙ₋₁ + (2n+1) P′ₙ.
package basis

import (
	"math"

	"github.com/dpsolve/dpsolve/internal/inputerr"
)

// ErrInput is wrapped by every error caused by invalid arguments.
// It is the one dpsolve-wide sentinel (internal/inputerr), so
// errors.Is(err, ErrInput) holds for every package's bad-input errors.
var ErrInput = inputerr.ErrInput

func inputErrorf(format string, a ...any) error {
	return inputerr.Errorf("basis", format, a...)
}

// Box is the product of closed intervals [Lo[i], Hi[i]], i = 0..d−1.
type Box struct {
	Lo, Hi []float64
}

// NewBox validates and copies the bounds of a box: both slices must have the
// same positive length, be finite, and satisfy Lo[i] < Hi[i] (a degenerate box
// has no L² basis).
func NewBox(lo, hi []float64) (Box, error) {
	if len(lo) == 0 || len(lo) != len(hi) {
		return Box{}, inputErrorf("box bounds must have the same positive length, got %d and %d", len(lo), len(hi))
	}
	for i := range lo {
		if math.IsNaN(lo[i]) || math.IsInf(lo[i], 0) || math.IsNaN(hi[i]) || math.IsInf(hi[i], 0) {
			return Box{}, inputErrorf("box bound %d is not finite: [%v, %v]", i, lo[i], hi[i])
		}
		if !(lo[i] < hi[i]) {
			return Box{}, inputErrorf("degenerate box: axis %d has lo=%v ≥ hi=%v", i, lo[i], hi[i])
		}
	}
	return Box{Lo: append([]float64(nil), lo...), Hi: append([]float64(nil), hi...)}, nil
}

// Cube returns the box [lo, hi]ᵈ.
func Cube(d int, lo, hi float64) (Box, error) {
	if d <= 0 {
		return Box{}, inputErrorf("dimension must be positive, got %d", d)
	}
	l := make([]float64, d)
	h := make([]float64, d)
	for i := range l {
		l[i], h[i] = lo, hi
	}
	return NewBox(l, h)
}

// Dim is the dimension d of the box.
func (b Box) Dim() int { return len(b.Lo) }

// Volume is the Lebesgue measure of the box.
func (b Box) Volume() float64 {
	v := 1.0
	for i := range b.Lo {
		v *= b.Hi[i] - b.Lo[i]
	}
	return v
}

// Diameter is the Euclidean length of the box's diagonal.
func (b Box) Diameter() float64 {
	s := 0.0
	for i := range b.Lo {
		w := b.Hi[i] - b.Lo[i]
		s += w * w
	}
	return math.Sqrt(s)
}

// Contains reports whether x lies in the box (boundary included).
func (b Box) Contains(x []float64) bool {
	if len(x) != len(b.Lo) {
		return false
	}
	for i, v := range x {
		if !(v >= b.Lo[i] && v <= b.Hi[i]) {
			return false
		}
	}
	return true
}

// Clamp writes the Euclidean projection of x onto the box into dst (which may be
// x) and returns dst. For a box the projection clamps each coordinate.
func (b Box) Clamp(dst, x []float64) []float64 {
	if dst == nil {
		dst = make([]float64, len(x))
	}
	for i, v := range x {
		dst[i] = math.Min(math.Max(v, b.Lo[i]), b.Hi[i])
	}
	return dst
}

// Size returns C(K+d, d), the number of multi-indices α ∈ ℕᵈ with |α| ≤ K: the
// number of basis functions of total degree at most K.
func Size(d, K int) int {
	if d <= 0 || K < 0 {
		return 0
	}
	// C(K+d, d) computed incrementally: exact in integers for the sizes used here.
	n := 1
	for i := 1; i <= d; i++ {
		n = n * (K + i) / i
	}
	return n
}

// Basis is the tensor-Legendre basis of total degree ≤ K on a box.
type Basis struct {
	box    Box
	degree int
	index  [][]int // multi-indices, ordered by total degree
	scale  []float64
	// for each axis: √((2n+1)/L) for n = 0..K, and 2/L.
	norm [][]float64
	dt   []float64
}

// MaxDegree bounds the total degree accepted by New; beyond it the recurrence is
// still stable but the number of functions (and quadrature cost) explodes.
const MaxDegree = 64

// New returns the basis of total degree ≤ K on box (a box from NewBox or Cube).
func New(box Box, K int) (*Basis, error) {
	if _, err := NewBox(box.Lo, box.Hi); err != nil {
		return nil, err
	}
	if K < 0 || K > MaxDegree {
		return nil, inputErrorf("total degree K must be in [0, %d], got %d", MaxDegree, K)
	}
	d := box.Dim()
	if Size(d, K) > 1<<20 {
		return nil, inputErrorf("basis of degree %d in dimension %d has %d functions; too many", K, d, Size(d, K))
	}
	b := &Basis{box: box, degree: K}
	b.box, _ = NewBox(box.Lo, box.Hi) // private copy
	for g := 0; g <= K; g++ {
		b.index = append(b.index, multiIndices(d, g)...)
	}
	b.norm = make([][]float64, d)
	b.dt = make([]float64, d)
	for i := 0; i < d; i++ {
		L := box.Hi[i] - box.Lo[i]
		b.dt[i] = 2 / L
		b.norm[i] = make([]float64, K+1)
		for n := 0; n <= K; n++ {
			b.norm[i][n] = math.Sqrt(float64(2*n+1) / L)
		}
	}
	return b, nil
}

// multiIndices lists α ∈ ℕᵈ with |α| = g in decreasing lexicographic order.
func multiIndices(d, g int) [][]int {
	if d == 1 {
		return [][]int{{g}}
	}
	var out [][]int
	for first := g; first >= 0; first-- {
		for _, rest := range multiIndices(d-1, g-first) {
			out = append(out, append([]int{first}, rest...))
		}
	}
	return out
}

// Len is the number of basis functions.
func (b *Basis) Len() int { return len(b.index) }

// Degree is the total degree K of the truncation.
func (b *Basis) Degree() int { return b.degree }

// Dim is the dimension d of the domain.
func (b *Basis) Dim() int { return b.box.Dim() }

// Box returns (a copy of) the domain.
func (b *Basis) Box() Box {
	bx, _ := NewBox(b.box.Lo, b.box.Hi)
	return bx
}

// MultiIndex returns (a copy of) the multi-index of the k-th basis function,
// k = 0..Len()−1 (0-based; the mechanism's 1-based index is k+1).
func (b *Basis) MultiIndex(k int) []int {
	return append([]int(nil), b.index[k]...)
}

// TotalDegree returns |α| for the k-th basis function (0-based).
func (b *Basis) TotalDegree(k int) int {
	s := 0
	for _, a := range b.index[k] {
		s += a
	}
	return s
}

// legendre fills p[n], dp[n], ddp[n] = Pₙ(t), P′ₙ(t), P″ₙ(t) for n = 0..len(p)−1;
// dp and ddp may be nil.
func legendre(t float64, p, dp, ddp []float64) {
	N := len(p)
	if N == 0 {
		return
	}
	p[0] = 1
	if dp != nil {
		dp[0] = 0
	}
	if ddp != nil {
		ddp[0] = 0
	}
	if N == 1 {
		return
	}
	p[1] = t
	if dp != nil {
		dp[1] = 1
	}
	if ddp != nil {
		ddp[1] = 0
	}
	for n := 1; n+1 < N; n++ {
		fn := float64(n)
		p[n+1] = ((2*fn+1)*t*p[n] - fn*p[n-1]) / (fn + 1)
		if dp != nil {
			dp[n+1] = dp[n-1] + (2*fn+1)*p[n]
		}
		if ddp != nil {
			ddp[n+1] = ddp[n-1] + (2*fn+1)*dp[n]
		}
	}
}

// Workspace holds the per-axis tables of one evaluation point. It lets hot loops
// evaluate without allocating; a Workspace must not be shared between goroutines.
type Workspace struct {
	v, dv, ddv [][]float64
}

// NewWorkspace allocates a workspace for b.
func (b *Basis) NewWorkspace() *Workspace {
	d := b.Dim()
	w := &Workspace{v: make([][]float64, d), dv: make([][]float64, d), ddv: make([][]float64, d)}
	for i := 0; i < d; i++ {
		w.v[i] = make([]float64, b.degree+1)
		w.dv[i] = make([]float64, b.degree+1)
		w.ddv[i] = make([]float64, b.degree+1)
	}
	return w
}

// fill computes the normalized 1-D values (and derivatives up to order) at x.
func (b *Basis) fill(w *Workspace, x []float64, order int) {
	for i := range x {
		t := (2*x[i] - b.box.Lo[i] - b.box.Hi[i]) / (b.box.Hi[i] - b.box.Lo[i])
		var dp, ddp []float64
		if order >= 1 {
			dp = w.dv[i]
		}
		if order >= 2 {
			ddp = w.ddv[i]
		}
		legendre(t, w.v[i], dp, ddp)
		for n := 0; n <= b.degree; n++ {
			c := b.norm[i][n]
			w.v[i][n] *= c
			if order >= 1 {
				w.dv[i][n] *= c * b.dt[i]
			}
			if order >= 2 {
				w.ddv[i][n] *= c * b.dt[i] * b.dt[i]
			}
		}
	}
}

func (b *Basis) checkPoint(x []float64) error {
	if len(x) != b.Dim() {
		return inputErrorf("point has length %d, basis dimension is %d", len(x), b.Dim())
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return inputErrorf("point coordinate %d is not finite: %v", i, v)
		}
	}
	return nil
}

// Values writes φ_k(x) for all k into phi (length Len()) using workspace w
// (nil allocates one).
func (b *Basis) Values(w *Workspace, x, phi []float64) error {
	if err := b.checkPoint(x); err != nil {
		return err
	}
	if len(phi) != b.Len() {
		return inputErrorf("phi has length %d, want %d", len(phi), b.Len())
	}
	if w == nil {
		w = b.NewWorkspace()
	}
	b.fill(w, x, 0)
	for k, a := range b.index {
		p := 1.0
		for i, ai := range a {
			p *= w.v[i][ai]
		}
		phi[k] = p
	}
	return nil
}

// Derivatives writes, for every basis function k, its value phi[k], its gradient
// grad[k*d+i] = ∂ᵢφ_k(x) and its Hessian hess[(k*d+i)*d+j] = ∂ᵢ∂ⱼφ_k(x) at x.
// Any of phi, grad, hess may be nil to skip it; otherwise they must have lengths
// Len(), Len()·d, Len()·d².
func (b *Basis) Derivatives(w *Workspace, x, phi, grad, hess []float64) error {
	if err := b.checkPoint(x); err != nil {
		return err
	}
	d, K := b.Dim(), b.Len()
	if phi != nil && len(phi) != K {
		return inputErrorf("phi has length %d, want %d", len(phi), K)
	}
	if grad != nil && len(grad) != K*d {
		return inputErrorf("grad has length %d, want %d", len(grad), K*d)
	}
	if hess != nil && len(hess) != K*d*d {
		return inputErrorf("hess has length %d, want %d", len(hess), K*d*d)
	}
	if w == nil {
		w = b.NewWorkspace()
	}
	order := 0
	if grad != nil {
		order = 1
	}
	if hess != nil {
		order = 2
	}
	b.fill(w, x, order)
	for k, a := range b.index {
		if phi != nil {
			p := 1.0
			for i, ai := range a {
				p *= w.v[i][ai]
			}
			phi[k] = p
		}
		if grad != nil {
			for i := 0; i < d; i++ {
				p := w.dv[i][a[i]]
				for j := 0; j < d; j++ {
					if j != i {
						p *= w.v[j][a[j]]
					}
				}
				grad[k*d+i] = p
			}
		}
		if hess != nil {
			for i := 0; i < d; i++ {
				for j := i; j < d; j++ {
					var p float64
					if i == j {
						p = w.ddv[i][a[i]]
					} else {
						p = w.dv[i][a[i]] * w.dv[j][a[j]]
					}
					for l := 0; l < d; l++ {
						if l != i && l != j {
							p *= w.v[l][a[l]]
						}
					}
					hess[(k*d+i)*d+j] = p
					hess[(k*d+j)*d+i] = p
				}
			}
		}
	}
	return nil
}

// GradientBound returns M = (sup_{x∈D} Σ_k |∇φ_k(x)|²)^{1/2}, an upper bound on
// the operator norm of the linear map c ↦ ∇(Σ_k c_k φ_k)(x) at every x ∈ D, so
// that sup_x |∇h(x)| ≤ M·‖c‖₂ for every expansion h with coefficients c.
//
// It is exact, not estimated: |Pₙ(t)| ≤ 1 = Pₙ(1) and |P′ₙ(t)| ≤ P′ₙ(1) =
// n(n+1)/2 on [−1, 1], so every factor of every term of Σ_k |∇φ_k|² is maximal
// in absolute value at the corner t = (1, …, 1), where the sum is attained.
func (b *Basis) GradientBound() float64 {
	x := append([]float64(nil), b.box.Hi...)
	d := b.Dim()
	grad := make([]float64, b.Len()*d)
	if err := b.Derivatives(nil, x, nil, grad, nil); err != nil {
		return math.NaN() // unreachable: x is the box's corner
	}
	s := 0.0
	for _, g := range grad {
		s += g * g
	}
	return math.Sqrt(s)
}
