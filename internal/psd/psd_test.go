package psd

import (
	"errors"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/internal/inputerr"
)

const eps = 0x1p-52

// orthogonal returns a random n×n orthogonal matrix (Q of the QR of a
// Gaussian matrix).
func orthogonal(rng *rand.Rand, n int) *mat.Dense {
	g := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			g.Set(i, j, rng.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(g)
	var q mat.Dense
	qr.QTo(&q)
	return &q
}

// withSpectrum returns V = Q·diag(lam)·Qᵀ for a random orthogonal Q, in
// full storage: a symmetric matrix whose eigenvalues are known (to the
// rounding of the product, a few ε·max|λ|).
func withSpectrum(rng *rand.Rand, lam []float64) blas.General {
	n := len(lam)
	q := orthogonal(rng, n)
	v := blas.NewSquare(n)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			s := 0.0
			for k, l := range lam {
				s += q.At(i, k) * l * q.At(j, k)
			}
			v.Data[i*n+j], v.Data[j*n+i] = s, s
		}
	}
	return v
}

// gram returns WᵀW for a random m×n W of rank k (W = B·C, Gaussian B, C),
// computed as a Gram is in practice, and W's largest singular value
// squared (λ_max of the exact Gram), from gonum's SVD.
func gram(rng *rand.Rand, m, n, k int) (blas.General, float64) {
	b := mat.NewDense(m, k, nil)
	c := mat.NewDense(k, n, nil)
	for i := 0; i < m; i++ {
		for j := 0; j < k; j++ {
			b.Set(i, j, rng.NormFloat64())
		}
	}
	for i := 0; i < k; i++ {
		for j := 0; j < n; j++ {
			c.Set(i, j, rng.NormFloat64())
		}
	}
	var w, v mat.Dense
	w.Mul(b, c)
	v.Mul(w.T(), &w)
	var svd mat.SVD
	svd.Factorize(&w, mat.SVDNone)
	s := svd.Values(nil)[0]
	g := blas.NewSquare(n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			g.Data[i*n+j] = v.At(i, j)
		}
	}
	return g, s * s
}

// residual returns max |RᵀR − V| over the entries.
func residual(r, v blas.General) float64 {
	n := v.Rows
	d := 0.0
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			s := 0.0
			for k := 0; k < r.Rows; k++ {
				s += r.Data[k*r.Stride+i] * r.Data[k*r.Stride+j]
			}
			d = math.Max(d, math.Abs(s-v.Data[i*v.Stride+j]))
		}
	}
	return d
}

// rowGramValues returns the eigenvalues of R·Rᵀ (the squared singular
// values of R), descending, from gonum.
func rowGramValues(r blas.General) []float64 {
	if r.Rows == 0 {
		return nil
	}
	rm := mat.NewDense(r.Rows, r.Cols, r.Data)
	var svd mat.SVD
	svd.Factorize(rm, mat.SVDNone)
	s := svd.Values(nil)
	for i := range s {
		s[i] *= s[i]
	}
	return s
}

// The reconstruction bound every case below checks, ‖RᵀR − V‖_max ≤
// 64·n·ε·λ_max: the dropped eigenvalues are each within ±τ = 32·n·ε·λ_max
// of zero (one dropped direction moves an entry by at most τ, and the
// dropped ones are orthogonal, so together by at most τ), and the kept
// part's backward error (eigensolver or Cholesky) is a few n·ε·λ_max at
// most: 64 covers both with room.
const reconstruction = 64

// A random Gram WᵀW of known rank k: the factor has rank k, reproduces V
// to the stated multiple of n·ε·λ_max, and its squared singular values
// are V's non-zero eigenvalues (gonum's EigenSym, an independent
// computation, to the same multiple of n·ε·λ_max).
func TestFactorRankDeficientGram(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for _, c := range []struct{ m, n, k int }{{40, 30, 7}, {12, 50, 12}, {200, 64, 63}, {5, 5, 1}, {30, 30, 30}} {
		v, lmax := gram(rng, c.m, c.n, c.k)
		keep := append([]float64(nil), v.Data...)
		for _, f := range []struct {
			name string
			fn   func(blas.General) (blas.General, int, error)
		}{{"Factor", Factor}, {"Principal", Principal}, {"FactorInto", into}} {
			r, rk, err := f.fn(v)
			if err != nil {
				t.Fatalf("%s %+v: %v", f.name, c, err)
			}
			if rk != c.k || r.Rows != rk || r.Cols != c.n {
				t.Errorf("%s %+v: rank %d, R %d×%d; want rank %d", f.name, c, rk, r.Rows, r.Cols, c.k)
				continue
			}
			if d, bound := residual(r, v), reconstruction*float64(c.n)*eps*lmax; !(d <= bound) {
				t.Errorf("%s %+v: max |RᵀR − V| = %.3g > %.3g", f.name, c, d, bound)
			}
			// The reference spectrum: V's eigenvalues from gonum's EigenSym
			// (another routine than blas' eigensolver), to Weyl's bound:
			// both are within a few n·ε·λ_max of the exact ones.
			var es mat.EigenSym
			vs := mat.NewSymDense(c.n, append([]float64(nil), v.Data...))
			if !es.Factorize(vs, false) {
				t.Fatal("reference eigendecomposition failed")
			}
			ref := es.Values(nil)
			sort.Sort(sort.Reverse(sort.Float64Slice(ref)))
			got := rowGramValues(r)
			for i := 0; i < rk; i++ {
				if math.Abs(got[i]-ref[i]) > reconstruction*float64(c.n)*eps*lmax {
					t.Errorf("%s %+v: λ_%d = %.15g, reference %.15g", f.name, c, i, got[i], ref[i])
				}
			}
		}
		for i := range keep {
			if keep[i] != v.Data[i] {
				t.Fatalf("%+v: the input was written", c)
			}
		}
	}
}

// into is Factor through FactorInto with storage full of NaN: the rows
// below the rank must come back zero (it returns them too, so residual
// checks them), and the work matrix is the caller's.
func into(v blas.General) (blas.General, int, error) {
	n := v.Rows
	r, work := blas.NewSquare(n), blas.NewSquare(n)
	for i := range r.Data {
		r.Data[i], work.Data[i] = math.NaN(), math.NaN()
	}
	k, err := FactorInto(v, r, work)
	if err != nil {
		return blas.General{}, 0, err
	}
	for _, x := range r.Data[k*n:] {
		if x != 0 {
			return blas.General{}, 0, errors.New("FactorInto left a non-zero below the rank")
		}
	}
	return blas.General{Rows: k, Cols: n, Stride: n, Data: r.Data[:k*n]}, k, nil
}

// A definite V takes the Cholesky path (R upper triangular, rank n); the
// same V through Principal gives orthogonal rows in descending order
// (R·Rᵀ = diag(λ)).
func TestFactorDefinite(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	lam := []float64{9, 4, 2, 1, 0.5, 1e-3}
	v := withSpectrum(rng, lam)
	n := len(lam)
	r, rk, err := Factor(v)
	if err != nil || rk != n || r.Rows != n {
		t.Fatalf("Factor: rank %d, err %v; want %d", rk, err, n)
	}
	for i := 1; i < n; i++ {
		for j := 0; j < i; j++ {
			if r.Data[i*n+j] != 0 {
				t.Fatalf("Factor of a definite V is not the upper Cholesky factor: R[%d,%d] = %g", i, j, r.Data[i*n+j])
			}
		}
	}
	if d := residual(r, v); d > reconstruction*float64(n)*eps*9 {
		t.Errorf("Cholesky: max |RᵀR − V| = %.3g", d)
	}
	p, rk, err := Principal(v)
	if err != nil || rk != n {
		t.Fatalf("Principal: rank %d, err %v", rk, err)
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			s := 0.0
			for k := 0; k < n; k++ {
				s += p.Data[i*n+k] * p.Data[j*n+k]
			}
			want := 0.0
			if i == j {
				want = lam[i]
			}
			// Eigenvalues to a few ε·λ_max absolutely, vectors' rows
			// orthogonal to the same: 1e-13 is 450·ε·λ_max.
			if math.Abs(s-want) > 1e-13*9 {
				t.Errorf("Principal: (R·Rᵀ)[%d,%d] = %.3g, want %g", i, j, s, want)
			}
		}
	}
}

// The tolerance in both directions, on matrices of known spectrum: an
// eigenvalue −n·ε·λ_max (rounding of a Gram) is accepted and dropped,
// −64·n·ε·λ_max and −1e-6·λ_max are rejected with a *NotPSDError wrapping
// ErrNotPSD and inputerr.ErrInput; +n·ε·λ_max is dropped, 64·n·ε·λ_max
// kept (by Principal; Factor keeps the +n·ε·λ_max directions too, as its
// doc says, when Cholesky succeeds without a pivot at or below Tol: here
// the last pivot, 1/(V⁻¹)ₙₙ ≈ λ_min/q² with q the last entry of λ_min's
// eigenvector, so about n·λ_min, is 1.2e-13 against Tol 6.2e-14).
// The margins (a factor 2 or more from τ = 32·n·ε·λ_max) are far
// above the few ε·λ_max by which the computed eigenvalues differ from the
// constructed ones.
func TestFactorTolerance(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 17))
	const n = 20
	u := float64(n) * eps // n·ε, λ_max = 1
	spec := func(last ...float64) []float64 {
		lam := make([]float64, n)
		for i := range lam {
			lam[i] = 1 / float64(i+1)
		}
		copy(lam[n-len(last):], last)
		return lam
	}
	for _, c := range []struct {
		name  string
		last  []float64
		rank  int
		notPD bool
		chol  bool // Cholesky succeeds with pivots above Tol: Factor keeps every direction
	}{
		{"−n·ε·λmax accepted", []float64{0, -u}, n - 2, false, false},
		{"+n·ε·λmax dropped", []float64{u, u}, n - 2, false, true},
		{"64·n·ε·λmax kept", []float64{64 * u}, n, false, true},
		{"−64·n·ε·λmax rejected", []float64{-64 * u}, 0, true, false},
		{"−1e-6·λmax rejected", []float64{-1e-6}, 0, true, false},
	} {
		v := withSpectrum(rng, spec(c.last...))
		for _, f := range []struct {
			name string
			fn   func(blas.General) (blas.General, int, error)
		}{{"Factor", Factor}, {"Principal", Principal}} {
			r, rk, err := f.fn(v)
			if c.notPD {
				var e *NotPSDError
				if !errors.As(err, &e) || !errors.Is(err, ErrNotPSD) || !errors.Is(err, inputerr.ErrInput) {
					t.Errorf("%s, %s: err = %v, want a *NotPSDError wrapping ErrNotPSD and ErrInput", c.name, f.name, err)
				} else if !(e.Smallest < -e.Tol) || e.Tol != Tol(n, e.Largest) {
					t.Errorf("%s, %s: %+v", c.name, f.name, e)
				}
				continue
			}
			want := c.rank
			if c.chol && f.name == "Factor" {
				want = n
			}
			if err != nil || rk != want {
				t.Errorf("%s, %s: rank %d, err %v; want rank %d", c.name, f.name, rk, err, want)
				continue
			}
			if d := residual(r, v); d > reconstruction*u {
				t.Errorf("%s, %s: max |RᵀR − V| = %.3g", c.name, f.name, d)
			}
		}
	}
}

// Cholesky succeeds on diag(1, 1, 1e-17) (its pivots are the diagonal),
// but the pivot 1e-17 ≤ Tol proves an eigenvalue the rule calls zero: the
// eigendecomposition path drops it (rank 2, not 3).
func TestFactorTinyPivot(t *testing.T) {
	v := blas.General{Rows: 3, Cols: 3, Stride: 3, Data: []float64{1, 0, 0, 0, 1, 0, 0, 0, 1e-17}}
	r, rk, err := Factor(v)
	if err != nil || rk != 2 || r.Rows != 2 {
		t.Fatalf("rank %d (R %d rows), err %v; want 2", rk, r.Rows, err)
	}
	if d := residual(r, v); d > 1e-16 {
		t.Errorf("max |RᵀR − V| = %.3g", d)
	}
}

// Bad input is refused with ErrInput, never a panic; V = 0 has rank 0.
func TestFactorInput(t *testing.T) {
	for name, v := range map[string]blas.General{
		"empty":   {},
		"3×2":     blas.NewGeneral(3, 2),
		"NaN":     {Rows: 2, Cols: 2, Stride: 2, Data: []float64{1, math.NaN(), math.NaN(), 1}},
		"+Inf":    {Rows: 1, Cols: 1, Stride: 1, Data: []float64{math.Inf(1)}},
		"[3,−1]":  {Rows: 2, Cols: 2, Stride: 2, Data: []float64{1, 2, 2, 1}},
		"[1, −1]": {Rows: 2, Cols: 2, Stride: 2, Data: []float64{1, 0, 0, -1}},
	} {
		for _, fn := range []func(blas.General) (blas.General, int, error){Factor, Principal} {
			if _, _, err := fn(v); !errors.Is(err, inputerr.ErrInput) {
				t.Errorf("%s: err = %v, want ErrInput", name, err)
			}
		}
	}
	if _, err := FactorInto(blas.NewSquare(3), blas.NewSquare(2), blas.General{}); !errors.Is(err, inputerr.ErrInput) {
		t.Errorf("FactorInto into a 2×2 for a 3×3: err = %v, want ErrInput", err)
	}
	r, rk, err := Factor(blas.NewSquare(4))
	if err != nil || rk != 0 || r.Rows != 0 || r.Cols != 4 {
		t.Errorf("V = 0: R %d×%d, rank %d, err %v; want 0×4, 0, nil", r.Rows, r.Cols, rk, err)
	}
}

// Tol is 32·n·ε·largest.
func TestTol(t *testing.T) {
	if got, want := Tol(100, 3), 32*100*eps*3; got != want {
		t.Errorf("Tol(100, 3) = %g, want %g", got, want)
	}
}
