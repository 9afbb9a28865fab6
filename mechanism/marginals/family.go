package marginals

import (
	"fmt"
	"math"

	"github.com/dpsolve/dpsolve/model/domain"
)

// The marginals family for any union of Kronecker products.
//
// A strategy whose Gram is X = Σ_T λ_T Π_T (Π_T the residual projectors of
// the package documentation) answers a product term w·⊗_a W_a, of Gram
// w²·⊗_a V_a, with error
//
//	tr((⊗V_a) X⁺) = Σ_T w² Π_{a∈T} tr(V_a(I − J/d_a)) Π_{a∉T} tr(V_a J/d_a) / λ_T,
//
// because tr((⊗V_a)(⊗P_a)) = Π tr(V_a P_a). Each block enters only through
// t_a = 1ᵀV_a1/d_a (its "total" direction) and r_a = tr V_a − t_a (its
// residual subspace), whatever the block (identity, prefix, ranges, an
// explicit matrix). So every workload projects onto coefficients C_T =
// Σ_p w_p² Π_{a∈T} r_a Π_{a∉T} t_a, and the family's error is Σ_T C_T/λ_T:
//
//   - Gaussian (L2): residual measurements with free variances, λ_T ≥ 0
//     under Σ_T λ_T dim_T/n ≤ 1 (diag(Π_T) = dim_T/n); by Cauchy–Schwarz the
//     optimum is λ_T ∝ √(C_T n/dim_T) with error (Σ_T √(C_T dim_T/n))² —
//     the closed form of the marginal-only plan, now for any blocks.
//   - Pure ε (L1): weighted marginal tables θ_S·M_S over every attribute
//     subset S (the tables the workload names or not, the full table
//     included), Σ_S θ_S = 1 (each column of M_S has one 1), so
//     λ_T = Σ_{S⊇T} θ_S² c_S with c_S = Π_{a∉S} d_a. Not convex in θ; see
//     pureFamily.
//
// Numbers are kept at the scale of one cell: ℓ_T = λ_T/n and C'_T = C_T/n,
// so γ_S = c_S/n = Π_{a∈S} 1/d_a and the error is Σ_T C'_T/ℓ_T.

// MaxFamilyAttributes bounds the attributes the family planner resolves
// (those some query does not only total): its arrays have one entry per
// subset of them, 2^k, so 2²⁰ keeps them at 8 MiB each.
const MaxFamilyAttributes = 20

// family is a workload projected onto the residual structure, over the
// universe U of attributes some product resolves (r_a > 0): bit i of a
// mask is attribute attrs[i]. Attributes outside U are totaled by every
// query and by every strategy of the family.
type family struct {
	sizes []int
	attrs []int
	n     int       // 2^|U|
	c     []float64 // C'_T per mask
	gamma []float64 // γ_S = Π_{i∈S} 1/d
	dim   []float64 // dim_T = Π_{i∈T}(d − 1)
	prods []prodCoef
	terms int
}

// prodCoef is one product's projection: its term, w²·Π_{a∉U} t_a/d_a, and
// per universe attribute (t_a/d_a, r_a/d_a).
type prodCoef struct {
	term     int
	w2       float64
	tot, res []float64
}

// newFamily projects w; an error wraps ErrInput when it resolves more than
// MaxFamilyAttributes attributes.
func newFamily(w *domain.Kron) (*family, error) {
	attrs := w.Attributes()
	f := &family{sizes: make([]int, len(attrs)), terms: len(w.Terms())}
	for i, a := range attrs {
		f.sizes[i] = a.Size
	}
	memo := map[*domain.Block]blockTraces{}
	split := func(b *domain.Block) blockTraces {
		v, ok := memo[b]
		if !ok {
			v = splitBlock(b)
			memo[b] = v
		}
		return v
	}
	inU := make([]bool, len(attrs))
	for _, p := range w.Products() {
		if w.Weight2(p) == 0 {
			continue
		}
		for i, b := range p.Blocks {
			if split(b).r > 0 {
				inU[i] = true
			}
		}
	}
	for i, in := range inU {
		if in {
			f.attrs = append(f.attrs, i)
		}
	}
	if len(f.attrs) > MaxFamilyAttributes {
		return nil, errorf("the marginals family resolves %d attributes; it plans at most %d (2^k subsets)", len(f.attrs), MaxFamilyAttributes)
	}
	f.n = 1 << len(f.attrs)
	for _, p := range w.Products() {
		w2 := w.Weight2(p)
		if w2 == 0 {
			continue
		}
		pc := prodCoef{term: p.Term, w2: w2}
		for i, b := range p.Blocks {
			v := split(b)
			d := float64(f.sizes[i])
			if inU[i] {
				pc.tot, pc.res = append(pc.tot, v.t/d), append(pc.res, v.r/d)
			} else {
				pc.w2 *= v.t / d
			}
		}
		f.prods = append(f.prods, pc)
	}
	f.c = make([]float64, f.n)
	for _, pc := range f.prods {
		pc.forMasks(func(m int, v float64) { f.c[m] += v })
	}
	f.gamma, f.dim = make([]float64, f.n), make([]float64, f.n)
	f.gamma[0], f.dim[0] = 1, 1
	for m := 1; m < f.n; m++ {
		low := m & -m
		d := float64(f.sizes[f.attrs[bitIndex(low)]])
		f.gamma[m] = f.gamma[m^low] / d
		f.dim[m] = f.dim[m^low] * (d - 1)
	}
	return f, nil
}

// blockTraces are a block's t = 1ᵀV1/d and r = tr V − t.
type blockTraces struct{ t, r float64 }

// splitBlock returns a block's traces, a part below 1e-13 of tr V (the
// rounding of the sums, e.g. r of a total block) set to 0.
func splitBlock(b *domain.Block) blockTraces {
	g := b.Gram()
	d := g.SymmetricDim()
	trace, sum := 0.0, 0.0
	for i := 0; i < d; i++ {
		trace += g.At(i, i)
		for j := 0; j < d; j++ {
			sum += g.At(i, j)
		}
	}
	v := blockTraces{t: sum / float64(d), r: trace - sum/float64(d)}
	if v.r <= 1e-13*trace {
		v.r = 0
	}
	if v.t <= 1e-13*trace {
		v.t = 0
	}
	return v
}

func bitIndex(b int) int {
	i := 0
	for b > 1 {
		b >>= 1
		i++
	}
	return i
}

// forMasks calls fn for every residual T the product touches with its
// coefficient w²·Π_{i∈T} r_i Π_{i∉T} t_i (cell scale).
func (pc prodCoef) forMasks(fn func(m int, v float64)) {
	var rec func(i, m int, v float64)
	rec = func(i, m int, v float64) {
		if v == 0 {
			return
		}
		if i == len(pc.tot) {
			fn(m, v)
			return
		}
		if pc.tot[i] > 0 {
			rec(i+1, m, v*pc.tot[i])
		}
		if pc.res[i] > 0 {
			rec(i+1, m|1<<i, v*pc.res[i])
		}
	}
	rec(0, 0, pc.w2)
}

// supersetSum sets a[T] = Σ_{S⊇T} a[S] in place (the zeta transform over
// supersets, O(k·2^k)).
func supersetSum(a []float64, k int) {
	for i := 0; i < k; i++ {
		bit := 1 << i
		for base := 0; base < len(a); base += 2 * bit {
			lo, hi := a[base:base+bit], a[base+bit:base+2*bit]
			for j := range lo {
				lo[j] += hi[j]
			}
		}
	}
}

// subsetSum sets a[S] = Σ_{T⊆S} a[T] in place.
func subsetSum(a []float64, k int) {
	for i := 0; i < k; i++ {
		bit := 1 << i
		for base := 0; base < len(a); base += 2 * bit {
			lo, hi := a[base:base+bit], a[base+bit:base+2*bit]
			for j := range hi {
				hi[j] += lo[j]
			}
		}
	}
}

// residualOptimum returns the Gaussian residual plan's ℓ_T (cell scale) and
// its error (Σ_T √(C'_T dim_T))², the exact optimum over the residual family.
func (f *family) residualOptimum() (ell []float64, value float64) {
	k := 0.0
	for m, c := range f.c {
		if c > 0 && f.dim[m] > 0 {
			k += math.Sqrt(c * f.dim[m])
		}
	}
	ell = make([]float64, f.n)
	for m, c := range f.c {
		if c > 0 && f.dim[m] > 0 {
			ell[m] = math.Sqrt(c/f.dim[m]) / k
		}
	}
	return ell, k * k
}

// errorOf returns Σ_T C'_T/ℓ_T (+Inf when some needed ℓ_T is 0).
func (f *family) errorOf(ell []float64) float64 {
	s := 0.0
	for m, c := range f.c {
		if c > 0 {
			if !(ell[m] > 0) {
				return math.Inf(1)
			}
			s += c / ell[m]
		}
	}
	return s
}

// termErrors returns each term's error under ℓ.
func (f *family) termErrors(ell []float64) []float64 {
	out := make([]float64, f.terms)
	for _, pc := range f.prods {
		e := 0.0
		pc.forMasks(func(m int, v float64) { e += v / ell[m] })
		out[pc.term] += e
	}
	return out
}

// identityError is the error of the family's largest table, the marginal
// on the whole universe (θ_U = 1: ℓ_T = γ_U for every T), which is at most
// that of answering every cell (Identity, ℓ_T = 1/n ≤ γ_U).
func (f *family) identityError() float64 {
	full := f.gamma[f.n-1]
	s := 0.0
	for _, c := range f.c {
		s += c / full
	}
	return s
}

// attrsOf returns the attribute positions of a mask.
func (f *family) attrsOf(m int) []int {
	var out []int
	for i, a := range f.attrs {
		if m&(1<<i) != 0 {
			out = append(out, a)
		}
	}
	if out == nil {
		out = []int{}
	}
	return out
}

// maskOf returns the mask of an attribute set, or ok = false when it uses
// an attribute outside the universe.
func (f *family) maskOf(attrs []int) (int, bool) {
	m := 0
	for _, a := range attrs {
		found := false
		for i, u := range f.attrs {
			if u == a {
				m |= 1 << i
				found = true
			}
		}
		if !found {
			return 0, false
		}
	}
	return m, true
}

func (f *family) String() string {
	return fmt.Sprintf("family(%d attributes resolved, %d products)", len(f.attrs), len(f.prods))
}
