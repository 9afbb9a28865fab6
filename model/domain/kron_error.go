package domain

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/internal/pinv"
)

// rangeTol: V is taken to lie in range(X) when tr((I−P)V) ≤ rangeTol·tr(V),
// P the projector on range(X). For V outside the range the strategy cannot
// answer the queries and the error is +Inf. Rounding in P is ~1e-15·d; a
// query the strategy misses contributes at least its own squared norm, a
// fraction ≳ 1/(m·d) of tr(V) — far above 1e-9 for every size allowed here.
const rangeTol = 1e-9

// Pinv is a factor's strategy Gram X = AᵀA (d×d, positive semidefinite)
// prepared for error evaluation: it holds X⁺ and the projector on range(X).
type Pinv struct {
	d    int
	pinv *mat.SymDense
	proj *mat.SymDense
}

// NewPinv eigendecomposes X (symmetric positive semidefinite, finite) with
// pinv.NewSym, dpsolve's one pseudo-inverse: eigenvalues at or below
// d·ε·λ_max (rank.Cutoff) count as zero. Strategy Grams come from Cholesky
// factors with unit diagonal (eigenvalues ≥ ~1e-9 even for regularized
// solves of singular workloads) or are exactly singular (a total's 1×d
// strategy, X = J, whose zero eigenvalues come out at rounding level, far
// below d·ε·λ_max = d²·ε); TestPinvCutoffAgreesWithOld shows the rule
// decides as the former fixed 1e-12·λ_max did on such Grams.
func NewPinv(x *mat.SymDense) (*Pinv, error) {
	if x == nil || x.SymmetricDim() == 0 {
		return nil, inputerr.Errorf("domain", "empty strategy factor")
	}
	d := x.SymmetricDim()
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			if v := x.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, inputerr.Errorf("domain", "strategy factor entry (%d,%d) is %v", i, j, v)
			}
		}
	}
	e, err := pinv.NewSym(x)
	if err != nil {
		return nil, inputerr.Errorf("domain", "strategy factor: eigendecomposition failed")
	}
	vals, q := e.Values, e.Vectors
	lmax := 0.0
	for _, l := range vals {
		lmax = math.Max(lmax, l)
	}
	if lmax <= 0 {
		return nil, inputerr.Errorf("domain", "strategy factor is zero")
	}
	for _, l := range vals {
		if l < -1e-9*lmax {
			return nil, inputerr.Errorf("domain", "strategy factor is not positive semidefinite (eigenvalue %g)", l)
		}
	}
	p := &Pinv{d: d, pinv: mat.NewSymDense(d, nil), proj: mat.NewSymDense(d, nil)}
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			var s, t float64
			for k, l := range vals {
				if !e.Kept(k) {
					continue
				}
				qq := q.At(i, k) * q.At(j, k)
				s += qq / l
				t += qq
			}
			p.pinv.SetSym(i, j, s)
			p.proj.SetSym(i, j, t)
		}
	}
	return p, nil
}

// Trace returns tr(V X⁺) for a d×d positive semidefinite V, or +Inf when V
// is not in range(X) (the strategy does not determine every query).
func (p *Pinv) Trace(v *mat.SymDense) float64 {
	var tr, trV, trP float64
	d := p.d
	for i := 0; i < d; i++ {
		trV += v.At(i, i)
		for j := 0; j < d; j++ {
			vij := v.At(i, j)
			tr += vij * p.pinv.At(i, j)
			trP += vij * p.proj.At(i, j)
		}
	}
	if trV-trP > rangeTol*trV {
		return math.Inf(1)
	}
	return tr
}

// UnionPart is one Kronecker part of a union-of-Kronecker strategy: the
// stacked strategy is [w₁·(⊗ᵢA₁ᵢ); w₂·(⊗ᵢA₂ᵢ); …] with Σ w² = 1 (so its L2
// sensitivity is 1 when every factor has unit column norms), and each term is
// answered from the one part it is assigned to.
type UnionPart struct {
	// Weight w > 0 scales the part's measurements.
	Weight float64
	// X holds the per-attribute strategy Grams Xᵢ = AᵢᵀAᵢ, in domain order.
	X []*mat.SymDense
	// Terms are the indices of the terms this part answers.
	Terms []int
}

// KronError returns the expected total squared error per unit noise of the
// Kronecker strategy ⊗ᵢAᵢ with factor Grams X[i] = AᵢᵀAᵢ (domain order),
// Σⱼ wⱼ²·Πᵢ tr(Vᵢⱼ Xᵢ⁺), in total and per term. Its sensitivity is
// Πᵢ (max column norm of Aᵢ), so the figure is the error at sensitivity 1
// when every factor has unit max column norm (diag Xᵢ ≤ 1 with max 1). A
// term the strategy cannot answer has error +Inf.
func (k *Kron) KronError(x []*mat.SymDense) (total float64, perTerm []float64, err error) {
	return k.UnionError([]UnionPart{{Weight: 1, X: x, Terms: seq(len(k.terms))}})
}

// UnionError returns the expected total squared error per unit noise of a
// union-of-Kronecker strategy, in total and per term: term j answered from
// part p costs wⱼ²·Σ_{products}Πᵢ tr(Vᵢⱼ Xₚᵢ⁺)/wₚ². Every term must be in
// exactly one part.
func (k *Kron) UnionError(parts []UnionPart) (total float64, perTerm []float64, err error) {
	owner := make([]int, len(k.terms))
	for j := range owner {
		owner[j] = -1
	}
	pinvs := make([][]*Pinv, len(parts))
	for pi, part := range parts {
		if !(part.Weight > 0) || math.IsInf(part.Weight, 0) {
			return 0, nil, inputerr.Errorf("domain", "part %d: weight must be a positive number, got %v", pi+1, part.Weight)
		}
		if len(part.X) != len(k.attrs) {
			return 0, nil, inputerr.Errorf("domain", "part %d has %d factors for %d attributes", pi+1, len(part.X), len(k.attrs))
		}
		for _, j := range part.Terms {
			if j < 0 || j >= len(k.terms) {
				return 0, nil, inputerr.Errorf("domain", "part %d: term index %d out of range", pi+1, j)
			}
			if owner[j] >= 0 {
				return 0, nil, inputerr.Errorf("domain", "term %q is assigned to two parts", k.terms[j].Name)
			}
			owner[j] = pi
		}
		pinvs[pi] = make([]*Pinv, len(k.attrs))
		for i, x := range part.X {
			if x == nil || x.SymmetricDim() != k.attrs[i].Size {
				return 0, nil, inputerr.Errorf("domain", "part %d, attribute %q: the factor must be %d×%d", pi+1, k.attrs[i].Name, k.attrs[i].Size, k.attrs[i].Size)
			}
			if pinvs[pi][i], err = NewPinv(x); err != nil {
				return 0, nil, inputerr.Errorf("domain", "part %d, attribute %q: %w", pi+1, k.attrs[i].Name, err)
			}
		}
	}
	for j, o := range owner {
		if o < 0 {
			return 0, nil, inputerr.Errorf("domain", "term %q is in no part", k.terms[j].Name)
		}
	}
	perTerm = make([]float64, len(k.terms))
	cache := map[[2]any]float64{} // (pinv, block) → trace: blocks are shared across products
	for _, p := range k.products {
		w2 := k.Weight2(p)
		if w2 == 0 {
			continue
		}
		pi := owner[p.Term]
		e := w2 / (parts[pi].Weight * parts[pi].Weight)
		for i, b := range p.Blocks {
			key := [2]any{pinvs[pi][i], b}
			t, ok := cache[key]
			if !ok {
				t = pinvs[pi][i].Trace(b.Gram())
				cache[key] = t
			}
			e *= t
		}
		perTerm[p.Term] += e
	}
	for _, e := range perTerm {
		total += e
	}
	return total, perTerm, nil
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}
