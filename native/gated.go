//go:build cgo && !purego

package native

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/netlib/blas/netlib"
)

// gatedBLAS is OpenBLAS's CBLAS (through netlib) with every routine that
// OpenBLAS may run on its thread pool admitted by the kernel-thread gate
// (see policy). The others (Level 1 on short vectors, rotations, banded and
// packed Level 2, which OpenBLAS runs on the calling thread) pass straight
// through.
type gatedBLAS struct{ netlib.Implementation }

// level1Parallel is the vector length from which OpenBLAS 0.3.21 threads
// its Level 1 routines (interface/axpy.c, dot.c, scal.c: n > 10000).
const level1Parallel = 10000

func (g gatedBLAS) Ddot(n int, x []float64, incX int, y []float64, incY int) float64 {
	if n <= level1Parallel {
		return g.Implementation.Ddot(n, x, incX, y, incY)
	}
	defer end(begin(2 * float64(n)))
	return g.Implementation.Ddot(n, x, incX, y, incY)
}

func (g gatedBLAS) Daxpy(n int, alpha float64, x []float64, incX int, y []float64, incY int) {
	if n <= level1Parallel {
		g.Implementation.Daxpy(n, alpha, x, incX, y, incY)
		return
	}
	defer end(begin(2 * float64(n)))
	g.Implementation.Daxpy(n, alpha, x, incX, y, incY)
}

func (g gatedBLAS) Dscal(n int, alpha float64, x []float64, incX int) {
	if n <= level1Parallel {
		g.Implementation.Dscal(n, alpha, x, incX)
		return
	}
	defer end(begin(float64(n)))
	g.Implementation.Dscal(n, alpha, x, incX)
}

func (g gatedBLAS) Dgemv(tA blas.Transpose, m, n int, alpha float64, a []float64, lda int, x []float64, incX int, beta float64, y []float64, incY int) {
	defer end(begin(2 * float64(m) * float64(n)))
	g.Implementation.Dgemv(tA, m, n, alpha, a, lda, x, incX, beta, y, incY)
}

func (g gatedBLAS) Dsymv(ul blas.Uplo, n int, alpha float64, a []float64, lda int, x []float64, incX int, beta float64, y []float64, incY int) {
	defer end(begin(2 * float64(n) * float64(n)))
	g.Implementation.Dsymv(ul, n, alpha, a, lda, x, incX, beta, y, incY)
}

func (g gatedBLAS) Dtrmv(ul blas.Uplo, tA blas.Transpose, d blas.Diag, n int, a []float64, lda int, x []float64, incX int) {
	defer end(begin(float64(n) * float64(n)))
	g.Implementation.Dtrmv(ul, tA, d, n, a, lda, x, incX)
}

func (g gatedBLAS) Dtrsv(ul blas.Uplo, tA blas.Transpose, d blas.Diag, n int, a []float64, lda int, x []float64, incX int) {
	defer end(begin(float64(n) * float64(n)))
	g.Implementation.Dtrsv(ul, tA, d, n, a, lda, x, incX)
}

func (g gatedBLAS) Dger(m, n int, alpha float64, x []float64, incX int, y []float64, incY int, a []float64, lda int) {
	defer end(begin(2 * float64(m) * float64(n)))
	g.Implementation.Dger(m, n, alpha, x, incX, y, incY, a, lda)
}

func (g gatedBLAS) Dsyr(ul blas.Uplo, n int, alpha float64, x []float64, incX int, a []float64, lda int) {
	defer end(begin(float64(n) * float64(n)))
	g.Implementation.Dsyr(ul, n, alpha, x, incX, a, lda)
}

func (g gatedBLAS) Dsyr2(ul blas.Uplo, n int, alpha float64, x []float64, incX int, y []float64, incY int, a []float64, lda int) {
	defer end(begin(2 * float64(n) * float64(n)))
	g.Implementation.Dsyr2(ul, n, alpha, x, incX, y, incY, a, lda)
}

func (g gatedBLAS) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	defer end(begin(2 * float64(m) * float64(n) * float64(k)))
	g.Implementation.Dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func (g gatedBLAS) Dsymm(s blas.Side, ul blas.Uplo, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	k := m
	if s == blas.Right {
		k = n
	}
	defer end(begin(2 * float64(m) * float64(n) * float64(k)))
	g.Implementation.Dsymm(s, ul, m, n, alpha, a, lda, b, ldb, beta, c, ldc)
}

func (g gatedBLAS) Dsyrk(ul blas.Uplo, t blas.Transpose, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	defer end(begin(float64(n) * float64(n) * float64(k)))
	g.Implementation.Dsyrk(ul, t, n, k, alpha, a, lda, beta, c, ldc)
}

func (g gatedBLAS) Dsyr2k(ul blas.Uplo, t blas.Transpose, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	defer end(begin(2 * float64(n) * float64(n) * float64(k)))
	g.Implementation.Dsyr2k(ul, t, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func (g gatedBLAS) Dtrmm(s blas.Side, ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	k := m
	if s == blas.Right {
		k = n
	}
	defer end(begin(float64(m) * float64(n) * float64(k)))
	g.Implementation.Dtrmm(s, ul, tA, d, m, n, alpha, a, lda, b, ldb)
}

func (g gatedBLAS) Dtrsm(s blas.Side, ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	k := m
	if s == blas.Right {
		k = n
	}
	defer end(begin(float64(m) * float64(n) * float64(k)))
	g.Implementation.Dtrsm(s, ul, tA, d, m, n, alpha, a, lda, b, ldb)
}
