package newton

import (
	"math"
	"time"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/blas"
)

// newtonState holds the solver's n×n workspaces, named by role.
type newtonState struct {
	n       int
	threads int              // goroutines for the O(n²) passes; 0 means GOMAXPROCS
	vsrc    blas64.Symmetric // the caller's V (upper triangle), never written
	scale   float64          // s = mean(diag V); the solver works with V/s
	x       blas.General     // current X, full, unit diagonal
	u       blas.General     // Cholesky factor of x (upper)
	m       blas.General     // U⁻ᵀVU⁻¹, then its eigenvectors, then Z
	a       blas.General     // system matrix 𝒜̃, then ZᵀMZ, D̂, D
	g       blas.General     // Bᵣ, then K̃, Z·D̂, line-search trial, certificate workspace
	gr      blas.General     // Gᵣ = Bᵣ·Bᵣᵀ
	lam     []float64        // Λ
	f       float64          // F(X) = tr(U⁻ᵀVU⁻¹) of the scaled problem
	theta   float64          // regularization in scaled units
	terms   int              // exponential-sum terms used so far
	y       []float64        // dual point of the last certificate
	clock   phaseClock       // per-phase wall time of this solve
	ebuf    []float64        // formStep's exponential factors (R×n twice)
	pbuf    []float64        // polarBound's block of rows (256×n)
}

// prepare sizes the workspaces for n, keeping them when n is unchanged, and
// clears the per-solve state.
func (s *newtonState) prepare(n int) {
	if s.n != n || s.x.Data == nil {
		th := s.threads
		*s = newtonState{n: n, threads: th}
		s.x, s.u, s.m, s.g = blas.NewSquare(n), blas.NewSquare(n), blas.NewSquare(n), blas.NewSquare(n)
		// s.a and s.gr lend their storage to the eigensolver whenever
		// they are free, so they have its scratch capacity.
		s.a, s.gr = scratchSquare(n), scratchSquare(n)
		s.lam = make([]float64, n)
	}
	s.f, s.theta, s.terms, s.y = 0, 0, 0, nil
	s.clock = phaseClock{last: time.Now(), acc: map[string]float64{}}
}

// scratchSquare returns an n×n matrix whose storage has the capacity
// blas.EigenWorkLen(n), so that it can serve as the eigensolver's scratch
// while it is free (symEigIn).
func scratchSquare(n int) blas.General {
	return blas.General{Rows: n, Cols: n, Stride: n, Data: make([]float64, n*n, blas.EigenWorkLen(n))}
}

// symEigIn decomposes a into eigenvalues w and eigenvectors z (as
// blas.SymEigVectors) with the storage of the free matrix scratch (from
// scratchSquare, or any view into one) as the eigensolver's workspace, so
// the solver holds no n² eigensolver workspace of its own.
func symEigIn(a, z blas.General, w []float64, scratch blas.General) bool {
	work := scratch.Data[:cap(scratch.Data)]
	return blas.SymEigVectorsWork(a, z, w, &work)
}

// phaseClock attributes wall time to the solver's phases: lap(name) adds
// the time since the previous lap to name.
type phaseClock struct {
	last time.Time
	acc  map[string]float64
}

func (c *phaseClock) lap(name string) {
	now := time.Now()
	c.acc[name] += now.Sub(c.last).Seconds()
	c.last = now
}

// evaluate sets u = chol(X) and m = U⁻ᵀVU⁻¹ for X in s.x, and returns
// F(X) = tr(m); ok is false if X is not numerically positive definite.
func (s *newtonState) evaluate(x blas.General) (float64, bool) {
	blas.Copy(s.u, x)
	if !blas.Cholesky(s.u) {
		return math.Inf(1), false
	}
	s.whiten()
	f := trace(s.m)
	if math.IsNaN(f) || math.IsInf(f, 0) || f <= 0 {
		return math.Inf(1), false
	}
	return f, true
}

// whiten sets m = U⁻ᵀ(V+θI)U⁻¹ from U = chol(X) in s.u.
func (s *newtonState) whiten() {
	s.loadV(s.m, s.theta)
	blas.Trsm(gblas.Left, gblas.Upper, gblas.Trans, gblas.NonUnit, 1, s.u, s.m)
	blas.Trsm(gblas.Right, gblas.Upper, gblas.NoTrans, gblas.NonUnit, 1, s.u, s.m)
}

// loadV fills dst (both triangles) with V/s + θ·I from the caller's V, so
// the solver keeps no private copy of V.
func (s *newtonState) loadV(dst blas.General, theta float64) {
	n, src, st := s.n, s.vsrc.Data, s.vsrc.Stride
	inv := 1 / s.scale
	d := dst.Data
	forTiles(s.threads, n, func(bi, ie, bj, je int) {
		for i := bi; i < ie; i++ {
			if bj == bi {
				d[i*n+i] = src[i*st+i]*inv + theta
			}
			for j := max(bj, i+1); j < je; j++ {
				v := src[i*st+j] * inv
				d[i*n+j] = v
				d[j*n+i] = v
			}
		}
	})
}

// eigen replaces the symmetric matrix in s.m by its eigenvectors (columns)
// and sets s.lam; s.g is the output buffer and the two are swapped.
func (s *newtonState) eigen(w []float64) bool {
	// s.a is free at every call: its storage is the eigensolver's scratch.
	if !symEigIn(s.m, s.g, w, s.a) {
		return false
	}
	s.m, s.g = s.g, s.m
	return true
}

// correlationSqrt sets dst to Q·diag(√μ)·Qᵀ — the square root of the matrix
// with eigenvectors q (columns; destroyed) and eigenvalues μ — scaled to unit
// diagonal: the warm start and the fixed-point step. It is one SYRK of
// B = Q·diag(μ^{1/4}).
func correlationSqrt(dst, q blas.General, mu []float64) {
	n := q.Rows
	for i := 0; i < n; i++ {
		row := q.Data[i*q.Stride : i*q.Stride+n]
		for j := range row {
			row[j] *= math.Sqrt(math.Sqrt(math.Max(mu[j], 0)))
		}
	}
	blas.Syrk(gblas.NoTrans, 1, q, 0, dst)
	normalizeUnitDiagonal(dst)
}

// copyStart copies the caller's start into dst scaled to unit diagonal and
// returns dst; a non-positive or non-finite diagonal leaves NaN, which
// evaluate rejects.
func copyStart(dst blas.General, st *mat.SymDense) blas.General {
	n, raw := st.SymmetricDim(), st.RawSymmetric()
	for i := 0; i < n; i++ {
		copy(dst.Data[i*dst.Stride+i:i*dst.Stride+n], raw.Data[i*raw.Stride+i:i*raw.Stride+n])
		if !(raw.Data[i*raw.Stride+i] > 0) {
			dst.Data[i*dst.Stride+i] = math.NaN()
		}
	}
	normalizeUnitDiagonal(dst)
	return dst
}

// normalizeUnitDiagonal scales the symmetric matrix x (upper triangle read)
// to D^{-1/2}·x·D^{-1/2}, D = diag(x), fills both triangles and sets the
// diagonal to exactly 1.
func normalizeUnitDiagonal(x blas.General) {
	n := x.Rows
	d := make([]float64, n)
	for i := 0; i < n; i++ {
		d[i] = 1 / math.Sqrt(x.Data[i*x.Stride+i])
	}
	for i := 0; i < n; i++ {
		x.Data[i*x.Stride+i] = 1
		for j := i + 1; j < n; j++ {
			v := x.Data[i*x.Stride+j] * d[i] * d[j]
			x.Data[i*x.Stride+j] = v
			x.Data[j*x.Stride+i] = v
		}
	}
}

func identity(x blas.General) {
	n := x.Rows
	for i := range x.Data {
		x.Data[i] = 0
	}
	for i := 0; i < n; i++ {
		x.Data[i*x.Stride+i] = 1
	}
}
