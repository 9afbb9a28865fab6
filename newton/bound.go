package newton

import (
	"errors"
	"fmt"
	"math"

	gblas "gonum.org/v1/gonum/blas"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/internal/psd"
	"github.com/dpsolve/dpsolve/internal/rank"
)

// dualBound evaluates the weak-duality bound
//
//	g(y) = 2·tr((D^{1/2} V D^{1/2})^{1/2}) − Σ y,  D = diag(y), y > 0,
//
// at the best multiple t·y of the given y: with T = tr((D^{1/2}VD^{1/2})^{1/2})
// and S = Σy, g(t·y) = 2√t·T − t·S is maximal at t = (T/S)², where it is
// T²/S. The scaling costs nothing, never lowers the bound, is the identity
// at the optimum (where T = S), and with all yᵢ equal gives the SVD bound
// (tr V^{1/2})²/n. It is given a factor C (n×k) with V = C·Cᵀ. The trace is the sum of the singular
// values of D^{1/2}·C, computed directly rather than as square roots of the
// eigenvalues of D^{1/2}VD^{1/2}: singular values carry absolute error about
// ε·σ_max, whereas square roots of eigenvalues near zero carry errors of
// √(ε·λ_max), which for a low-rank V would add up to a "bound" above the
// optimum. buf (n×k) is workspace.
func dualBound(c blas.General, y []float64, buf blas.General) (float64, bool) {
	n, k := c.Rows, c.Cols
	sy := 0.0
	for i, yi := range y {
		if !(yi >= 0) || math.IsInf(yi, 0) {
			return math.Inf(-1), true
		}
		r := math.Sqrt(yi)
		sy += yi
		crow := c.Data[i*c.Stride : i*c.Stride+k]
		brow := buf.Data[i*buf.Stride : i*buf.Stride+k]
		for j, x := range crow {
			brow[j] = r * x
		}
	}
	sv := make([]float64, min(n, k))
	b := blas.General{Rows: n, Cols: k, Stride: buf.Stride, Data: buf.Data}
	if !blas.SingularValues(b, sv) {
		return 0, false
	}
	st := 0.0
	for _, x := range sv {
		st += x
	}
	return st * st / sy, true
}

// psdFactor returns C (n×r) with C·Cᵀ = V for a positive semidefinite V
// (full storage, not written): the transpose of psd.Factor's R, so the
// transposed Cholesky factor when V is definite, else Q·diag(√μ) over the
// eigenvalues above psd.Tol(n, μ_max) = 32·n·ε·μ_max. A zero eigenvalue
// computed as 1e-16 would otherwise contribute √1e-16 = 1e-8 per dimension
// to the dual bound; dropping those directions lowers V and so keeps the
// bound a bound (it is monotone in V), while each kept eigenvalue is large
// enough for its rounding error to be relative and small, as the Cholesky
// factor's is for a definite V (internal/psd says why). An error wraps
// ErrInput when V is not positive semidefinite by that tolerance.
func psdFactor(v blas.General) (blas.General, error) {
	r, k, err := psd.Factor(v)
	if err != nil {
		if errors.Is(err, psd.ErrNotPSD) {
			return blas.General{}, inputErrorf("Gram matrix is %v", err)
		}
		return blas.General{}, fmt.Errorf("newton: certificate factor of V: %w", err)
	}
	n := v.Rows
	c := blas.NewGeneral(n, k)
	for i := 0; i < k; i++ {
		row := r.Data[i*r.Stride : i*r.Stride+n]
		for j, x := range row {
			c.Data[j*k+i] = x
		}
	}
	return c, nil
}

// sqrtSum returns Σ√μᵢ over computed eigenvalues μ (ascending) of a positive
// semidefinite matrix, each shrunk by E = n·ε·μ_max first: an exact zero
// computed as 1e-16·μ_max would otherwise add √(1e-16·μ_max) to a quantity
// that must stay a lower bound (the SVD bound), as psdFactor explains.
func sqrtSum(mu []float64) float64 {
	n := len(mu)
	if n == 0 {
		return 0
	}
	e := rank.Cutoff(n, math.Abs(mu[n-1]))
	s := 0.0
	for _, x := range mu {
		s += math.Sqrt(math.Max(x-e, 0))
	}
	return s
}

// dualValues returns, from the eigenvalues λ of S = D^{1/2}VD^{1/2} and
// Σy, the certified bound b = (Σ√λ)²/Σy with sqrtSum's rounding safeguard
// and the same dual value without it, est: not a bound, but an estimate
// for deciding how far a step got. The safeguard costs the bound a
// relative O(n³ε), 6% of the gap at AllRange n = 4096, which alone failed
// the fixed-point phase's first-step test.
func dualValues(lam []float64, sy float64) (b, est float64) {
	t := sqrtSum(lam)
	te := 0.0
	for _, x := range lam {
		te += math.Sqrt(math.Max(x, 0))
	}
	return t * t / sy, te * te / sy
}

// polarBound is the cheap certificate for a dual point that comes from a
// primal X: given C (n×k, V = C·Cᵀ), W = X⁻¹·C and yᵢ = ‖row i of W‖²
// (rowNormsSq), so y = diag(X⁻¹VX⁻¹), it returns a lower bound on dualBound's T²/Σy
// there, T = tr((D^{1/2}VD^{1/2})^{1/2}) = ‖A‖_* for A = D^{1/2}·C, without
// A's singular values.
//
// For every Q, ‖A‖_* ≥ tr(QᵀA)/‖Q‖₂. Q₀ = D^{-1/2}·W has unit rows and is
// exactly A's polar factor when X is optimal (X⁻¹ = D^{1/2}S^{-1/2}D^{1/2}
// there, S = AAᵀ). One Newton–Schulz step Q₁ = ½(3I − M)·Q₀, M = Q₀Q₀ᵀ,
// makes Q₁Q₁ᵀ = p(M) with p(m) = ¼·m·(3 − m)², and p ≤ 1 on (−∞, 4]: so
// ‖Q₁‖₂ ≤ 1 whenever λ_max(M) ≤ 4 (checked by Gershgorin), however far X is
// from optimal, while tr(Q₁ᵀA) falls short of ‖A‖_* by an amount of second
// order in M − I and in Q₀'s distance from A's polar factor — both first
// order in X − X*, so the bound's gap is of the order of the objective's.
// Cost: a SYRK and a GEMM (1.5 DGEMM-equivalents) against the
// bidiagonalization and singular values of an n×k matrix (about 11 at
// n = 2048 on SkylakeX).
//
// Rounding is accounted for, at the level of the rest of the certificate
// (which takes V = C·Cᵀ for the computed factor): with M̃ the computed Gram,
// Q₁ is defined from M̃, so Q₁Q₁ᵀ = p(M̃) − ¼(3I−M̃)·δ·(3I−M̃) with δ = M̃ − M;
// every entry of δ is an inner product of two unit rows of length k, of
// error at most 10·√k·ε with overwhelming probability (Higham and Mary,
// SIAM J. Sci. Comput. 41(5), 2019: the probabilistic bound with λ = 10),
// so ‖δ‖₂ ≤ 10·n·√k·ε. The traces carry worst-case bounds of their sums
// of absolute values, and the GEMM the same probabilistic bound. At
// n = k = 2048 the safeguard costs the bound about 1e-10 relative; at 8192,
// 8e-10. ok is false when the Gershgorin test fails or a value is not
// finite; c is left intact for dualBound then, w and m are overwritten.
// work holds a 256×k block of M̃·A between calls (grown as needed).
func polarBound(c, w blas.General, y []float64, m blas.General, threads int, work *[]float64) (bound float64, ok bool) {
	n, k := c.Rows, c.Cols
	const u = 0x1p-53 // unit roundoff
	sy, afro := polarStart(c, w, y)
	lo, hi, gmax := polarGram(w, m, threads)
	if !(hi <= 4) {
		return 0, false
	}
	// T₀ = tr(Q₀ᵀA) and tr(Q₀ᵀM̃A), with M̃A = (M̃·D^{1/2})·C formed a block
	// of rows at a time (scaling M̃'s columns in place: M̃ is not needed
	// after this).
	sq := make([]float64, n)
	for i, yi := range y {
		sq[i] = math.Sqrt(yi)
	}
	parallelRows(threads, n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row := m.Data[i*m.Stride : i*m.Stride+n]
			for j := range row {
				row[j] *= sq[j]
			}
		}
	})
	t0, t0abs := 0.0, 0.0
	for i := 0; i < n; i++ {
		qrow, crow := w.Data[i*w.Stride:i*w.Stride+k], c.Data[i*c.Stride:i*c.Stride+k]
		s, sa := 0.0, 0.0
		for j, q := range qrow {
			p := q * crow[j]
			s += p
			sa += math.Abs(p)
		}
		t0 += sq[i] * s
		t0abs += sq[i] * sa
	}
	t1, t1abs := polarSecond(c, w, m, work)
	t := 0.5 * (3*t0 - t1)
	// Error bounds: the two sums (n·k terms, summed by rows: (n+k)·u of
	// their absolute sums), the GEMM's entries (10·√n·u·(|M̃||A|), whose
	// inner product with |Q₀| is at most ‖|M̃|‖₂·‖Q₀‖_F·‖A‖_F ≤ gmax·√n·‖A‖_F).
	nk := float64(n + k)
	terr := 1.5*nk*u*t0abs + 0.5*(nk*u*t1abs+10*math.Sqrt(float64(n))*u*gmax*math.Sqrt(float64(n)*afro))
	// ‖Q₁‖₂² ≤ 1 + ¼‖3I − M̃‖₂²·‖δ‖₂.
	s3 := math.Max(3-lo, hi-3)
	eta := 0.25 * s3 * s3 * 10 * float64(n) * math.Sqrt(float64(k)) * u
	tl := t - terr
	if math.IsNaN(tl) || math.IsInf(tl, 0) {
		return 0, false
	}
	if tl <= 0 {
		return 0, true // a valid, useless bound
	}
	return tl * tl / ((1 + eta) * sy * (1 + float64(n)*u)), true
}

// polarStart scales the rows of w to Q₀ = D^{-1/2}·W in place and returns
// Σy and ‖A‖_F² = Σᵢ yᵢ·‖row i of C‖².
func polarStart(c, w blas.General, y []float64) (sy, afro float64) {
	k := c.Cols
	for i, yi := range y {
		wrow := w.Data[i*w.Stride : i*w.Stride+k]
		sy += yi
		r := 1 / math.Sqrt(yi)
		cn := 0.0
		for j, x := range wrow {
			wrow[j] = x * r // Q₀
			cj := c.Data[i*c.Stride+j]
			cn += cj * cj
		}
		afro += yi * cn
	}
	return sy, afro
}

// polarGram sets m = M̃ = Q₀Q₀ᵀ (full storage) from q = Q₀ and returns its
// Gershgorin interval [lo, hi] and the largest absolute row sum gmax.
func polarGram(q, m blas.General, threads int) (lo, hi, gmax float64) {
	n := q.Rows
	blas.Syrk(gblas.NoTrans, 1, q, 0, m)
	mirrorUpper(threads, m, false)
	lo, hi = math.Inf(1), math.Inf(-1)
	for i := 0; i < n; i++ {
		row := m.Data[i*m.Stride : i*m.Stride+n]
		r := 0.0
		for j, x := range row {
			if j != i {
				r += math.Abs(x)
			}
		}
		d := row[i]
		lo, hi, gmax = math.Min(lo, d-r), math.Max(hi, d+r), math.Max(gmax, math.Abs(d)+r)
	}
	return lo, hi, gmax
}

// polarSecond returns tr(Q₀ᵀ·M̃A) and the sum of its terms' absolute
// values, with m = M̃·D^{1/2} (so M̃A = m·C) multiplied a block of 256
// rows at a time into work.
func polarSecond(c, q, m blas.General, work *[]float64) (t1, t1abs float64) {
	n, k := c.Rows, c.Cols
	const rows = 256
	if need := min(rows, n) * k; cap(*work) < need {
		*work = make([]float64, need)
	}
	buf := blas.General{Rows: min(rows, n), Cols: k, Stride: k, Data: (*work)[:min(rows, n)*k]}
	for b := 0; b < n; b += rows {
		e := min(b+rows, n)
		p := blas.General{Rows: e - b, Cols: k, Stride: k, Data: buf.Data[:(e-b)*k]}
		blas.Gemm(gblas.NoTrans, gblas.NoTrans, 1, blas.General{Rows: e - b, Cols: n, Stride: m.Stride, Data: m.Data[b*m.Stride:]}, c, 0, p)
		for i := b; i < e; i++ {
			qrow, prow := q.Data[i*q.Stride:i*q.Stride+k], p.Data[(i-b)*k:(i-b+1)*k]
			for j, x := range qrow {
				v := x * prow[j]
				t1 += v
				t1abs += math.Abs(v)
			}
		}
	}
	return t1, t1abs
}

// rowNormsSq returns yᵢ = ‖row i of w‖², nil if one is not positive and
// finite.
func rowNormsSq(w blas.General) []float64 {
	y := make([]float64, w.Rows)
	for i := range y {
		s := 0.0
		for _, x := range w.Data[i*w.Stride : i*w.Stride+w.Cols] {
			s += x * x
		}
		if !(s > 0) || math.IsInf(s, 0) {
			return nil
		}
		y[i] = s
	}
	return y
}

// eigenDualBound is the dual bound at y from V's factor C (n×n) through
// the eigendecomposition of M = CᵀDC = P·Λ·Pᵀ and the refinement of
// refinedBound (see dualSolver.eigenBound) on Ã = D^{1/2}·C·P — tight at
// any y up to the accuracy of M's small eigenvectors, where polarBound is
// tight only at an X close to optimal. Cost: an eigendecomposition with
// vectors, a GEMM and two SYRKs (about 7 DGEMM-equivalents at n = 2048
// against 11 for the singular values), and factor once more.
//
// It needs no fourth n×n buffer: c holds C on entry, a and b are free
// (b and a from scratchSquare: the eigensolver borrows a's storage); C is
// overwritten by P and rebuilt by factor(a), so a holds C on return and
// c and b are overwritten.
func eigenDualBound(c, a, b blas.General, y []float64, factor func(dst blas.General) bool, threads int) (float64, bool) {
	n := c.Rows
	sq := make([]float64, n)
	sy := 0.0
	for i, yi := range y {
		sq[i] = math.Sqrt(yi)
		sy += yi
	}
	scaleRows := func(dst, src blas.General) {
		parallelRows(threads, n, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				d, s := dst.Data[i*dst.Stride:i*dst.Stride+n], src.Data[i*src.Stride:i*src.Stride+n]
				for j, x := range s {
					d[j] = sq[i] * x
				}
			}
		})
	}
	scaleRows(a, c)                    // A = D^{1/2}C
	blas.Syrk(gblas.Trans, 1, a, 0, b) // M = AᵀA (upper)
	lam := make([]float64, n)
	if !symEigIn(b, c, lam, a) { // P into c, a's storage as scratch
		return 0, false
	}
	if !factor(a) {
		return 0, false
	}
	blas.Gemm(gblas.NoTrans, gblas.NoTrans, 1, a, c, 0, b) // C·P
	scaleRows(b, b)                                        // Ã = D^{1/2}·C·P
	blas.Syrk(gblas.Trans, 1, b, 0, c)                     // G = ÃᵀÃ
	return refinedBound(c, lam, n, sy)
}

// refinedBound is the bound T²/Σy of eigenBound from the upper triangle of
// G = ÃᵀÃ (r×r, Ã with n rows) and the computed eigenvalues λ of M(y),
// Σy given; ok is false when the Gershgorin test fails or a value is not
// finite.
func refinedBound(g blas.General, lam []float64, n int, sy float64) (float64, bool) {
	const u = 0x1p-53
	r := len(lam)
	sl := make([]float64, r) // √λ
	md := make([]float64, r) // M̃ₐₐ
	for b, l := range lam {
		if !(l > 0) {
			return 0, false
		}
		sl[b] = math.Sqrt(l)
		md[b] = g.Data[b*g.Stride+b] / l
	}
	eps := 10 * math.Sqrt(float64(n)) * u
	lo, hi := math.Inf(1), math.Inf(-1)
	rad := make([]float64, r) // Gershgorin radii
	t0, t2, terr, trM := 0.0, 0.0, 0.0, 0.0
	for b := 0; b < r; b++ {
		t0 += md[b] * sl[b]
		t2 += md[b] * md[b] * sl[b]
		trM += md[b]
		terr += md[b] * sl[b] * md[b]
		row := g.Data[b*g.Stride : b*g.Stride+r]
		for c := b + 1; c < r; c++ {
			m := row[c] / (sl[b] * sl[c])
			am := math.Abs(m)
			rad[b] += am
			rad[c] += am
			t2 += m * m * (sl[b] + sl[c])
			// |δ(M̃ₐ_b²)·√λ| ≤ 2|M̃ₐ_b|·δM̃ₐ_b·√λ, both orders.
			terr += am * math.Sqrt(md[b]*md[c]) * (sl[b] + sl[c])
		}
	}
	for b := 0; b < r; b++ {
		lo, hi = math.Min(lo, md[b]-rad[b]), math.Max(hi, md[b]+rad[b])
	}
	if !(hi <= 4) {
		return 0, false
	}
	t := 0.5 * (3*t0 - t2)
	// Error of T: δM̃ₐₐ in the first sum (3/2·eps·Σ M̃ₐₐ√λₐ), the products
	// in the second (eps·terr), and the sums themselves (2r·u relative of
	// their positive terms).
	tl := t - 1.5*eps*t0 - eps*terr - 2*float64(r)*u*(1.5*t0+0.5*t2)
	s3 := math.Max(3-lo, hi-3)
	eta := 0.25 * s3 * s3 * eps * trM
	if math.IsNaN(tl) || math.IsInf(tl, 0) {
		return 0, false
	}
	if tl <= 0 {
		return 0, true
	}
	return tl * tl / ((1 + eta) * sy * (1 + float64(n)*u)), true
}
