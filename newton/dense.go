package newton

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/blas"
)

// Small helpers over blas.General used by the solvers.

func symToGeneral(v *mat.SymDense, scale float64) blas.General {
	n := v.SymmetricDim()
	g := blas.NewSquare(n)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			x := v.At(i, j) * scale
			g.Data[i*n+j] = x
			g.Data[j*n+i] = x
		}
	}
	return g
}

func generalToSym(g blas.General) *mat.SymDense {
	n := g.Rows
	s := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			s.SetSym(i, j, g.Data[i*g.Stride+j])
		}
	}
	return s
}

func upperToTri(g blas.General) *mat.TriDense {
	n := g.Rows
	t := mat.NewTriDense(n, mat.Upper, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			t.SetTri(i, j, g.Data[i*g.Stride+j])
		}
	}
	return t
}

func trace(g blas.General) float64 {
	s := 0.0
	for i := 0; i < g.Rows; i++ {
		s += g.Data[i*g.Stride+i]
	}
	return s
}

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

// lowerCholesky overwrites the positive definite c (upper triangle read)
// with its lower-triangular factor C, c = C·Cᵀ; false if not definite.
func lowerCholesky(c blas.General) bool {
	if !blas.Cholesky(c) {
		return false
	}
	n := c.Rows
	for i := 0; i < n; i++ { // c holds R (upper), c = RᵀR: C = Rᵀ
		for j := i + 1; j < n; j++ {
			c.Data[j*c.Stride+i], c.Data[i*c.Stride+j] = c.Data[i*c.Stride+j], 0
		}
	}
	return true
}

// psdFactor returns C with C·Cᵀ = V for a positive semidefinite V (full
// storage): the transposed Cholesky factor when V is numerically definite,
// else Q·diag(√μ) from V's eigendecomposition with every eigenvalue at or
// below rankTol(n)·μ_max set to zero. A zero eigenvalue computed as 1e-16
// would otherwise contribute √1e-16 = 1e-8 per dimension to the dual bound;
// dropping those directions lowers V and so keeps the bound a bound (it is
// monotone in V), while each kept eigenvalue is large enough (≥ 32·n·ε·μ_max)
// for its rounding error to be relative and small, as the Cholesky factor's
// is for a definite V. (The solver's dualSolver.bound uses the same
// truncated factor.)
func psdFactor(v blas.General) (blas.General, bool) {
	n := v.Rows
	c := blas.NewSquare(n)
	blas.Copy(c, v)
	if lowerCholesky(c) {
		return c, true
	}
	blas.Copy(c, v)
	mu := make([]float64, n)
	if !blas.SymEig(c, mu, true) {
		return c, false
	}
	e := rankTol(n) * math.Abs(mu[n-1])
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if mu[j] > e {
				c.Data[i*n+j] *= math.Sqrt(mu[j])
			} else {
				c.Data[i*n+j] = 0
			}
		}
	}
	return c, true
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
	e := float64(n) * 0x1p-52 * math.Abs(mu[n-1])
	s := 0.0
	for _, x := range mu {
		s += math.Sqrt(math.Max(x-e, 0))
	}
	return s
}
