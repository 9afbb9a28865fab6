//go:build cgo && !purego

package native

// #cgo LDFLAGS: -llapacke
import "C"

import (
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack"
	lgonum "gonum.org/v1/gonum/lapack/gonum"
	lnetlib "gonum.org/v1/netlib/lapack/netlib"
)

// Float64LAPACK is OpenBLAS's complete LAPACK as a gonum lapack.Float64,
// for gonum's global dispatch (lapack64.Use): every factorization of
// gonum/mat (EigenSym, Cholesky, SVD, QR, LQ, LU, Eigen, GSVD, Dense.Solve,
// Inverse, ...) then runs on OpenBLAS instead of gonum's pure-Go LAPACK.
// It goes through LAPACKE's row-major interface (gonum's netlib binding),
// which transposes general matrices to column-major and back on every call;
// dpsolve's own hot kernels (LAPACK above) avoid that copy. The routines
// that OpenBLAS may run on its thread pool are admitted by the kernel-thread
// gate like the BLAS (see Reserve).
var Float64LAPACK lapack.Float64 = gatedLAPACK{}

// lapackCalls counts the gated calls of Float64LAPACK (for the seam test:
// a gonum/mat factorization must reach it).
var lapackCalls atomic.Int64

// LAPACKCalls returns how many gated routines of Float64LAPACK have been
// called in this process.
func LAPACKCalls() int64 { return lapackCalls.Load() }

// gatedLAPACK is netlib's LAPACKE binding with its O(n³) routines admitted
// by the kernel-thread gate; the rest (norms, auxiliaries) pass through.
// Cholesky, its inverses and the symmetric eigensolver go to dpsolve's own
// wrappers (LAPACK above), which hand the row-major triangle over without
// LAPACKE's transposition copies: mat.Cholesky at n = 512 took 2.2× the CPU
// time of gonum's pure-Go LAPACK through LAPACKE, and mat.EigenSym runs
// divide and conquer (dsyevd) instead of LAPACKE's dsyev.
type gatedLAPACK struct{ lnetlib.Implementation }

// sq returns n² as a float64.
func sq(n int) float64 { return float64(n) * float64(n) }

func (g gatedLAPACK) Dpotrf(ul blas.Uplo, n int, a []float64, lda int) bool {
	lapackCalls.Add(1)
	return LAPACK{}.Dpotrf(ul, n, a, lda)
}

func (g gatedLAPACK) Dpotri(uplo blas.Uplo, n int, a []float64, lda int) bool {
	lapackCalls.Add(1)
	return LAPACK{}.Dpotri(uplo, n, a, lda)
}

func (g gatedLAPACK) Dpotrs(uplo blas.Uplo, n, nrhs int, a []float64, lda int, b []float64, ldb int) {
	defer end(begin(2 * sq(n) * float64(nrhs)))
	lapackCalls.Add(1)
	g.Implementation.Dpotrs(uplo, n, nrhs, a, lda, b, ldb)
}

func (g gatedLAPACK) Dpstrf(uplo blas.Uplo, n int, a []float64, lda int, piv []int, tol float64, work []float64) (int, bool) {
	defer end(begin(cube(n) / 3))
	lapackCalls.Add(1)
	return g.Implementation.Dpstrf(uplo, n, a, lda, piv, tol, work)
}

func (g gatedLAPACK) Dgetrf(m, n int, a []float64, lda int, ipiv []int) bool {
	defer end(begin(2 * sq(min(m, n)) * float64(max(m, n)) / 3))
	lapackCalls.Add(1)
	return g.Implementation.Dgetrf(m, n, a, lda, ipiv)
}

func (g gatedLAPACK) Dgetri(n int, a []float64, lda int, ipiv []int, work []float64, lwork int) bool {
	defer end(begin(4 * cube(n) / 3))
	lapackCalls.Add(1)
	return g.Implementation.Dgetri(n, a, lda, ipiv, work, lwork)
}

func (g gatedLAPACK) Dgetrs(trans blas.Transpose, n, nrhs int, a []float64, lda int, ipiv []int, b []float64, ldb int) {
	defer end(begin(2 * sq(n) * float64(nrhs)))
	lapackCalls.Add(1)
	g.Implementation.Dgetrs(trans, n, nrhs, a, lda, ipiv, b, ldb)
}

func (g gatedLAPACK) Dgeqrf(m, n int, a []float64, lda int, tau, work []float64, lwork int) {
	defer end(begin(2 * sq(min(m, n)) * float64(max(m, n))))
	lapackCalls.Add(1)
	g.Implementation.Dgeqrf(m, n, a, lda, tau, work, lwork)
}

func (g gatedLAPACK) Dgelqf(m, n int, a []float64, lda int, tau, work []float64, lwork int) {
	defer end(begin(2 * sq(min(m, n)) * float64(max(m, n))))
	lapackCalls.Add(1)
	g.Implementation.Dgelqf(m, n, a, lda, tau, work, lwork)
}

func (g gatedLAPACK) Dorgqr(m, n, k int, a []float64, lda int, tau, work []float64, lwork int) {
	defer end(begin(4 * float64(m) * float64(n) * float64(k)))
	lapackCalls.Add(1)
	g.Implementation.Dorgqr(m, n, k, a, lda, tau, work, lwork)
}

func (g gatedLAPACK) Dorglq(m, n, k int, a []float64, lda int, tau, work []float64, lwork int) {
	defer end(begin(4 * float64(m) * float64(n) * float64(k)))
	lapackCalls.Add(1)
	g.Implementation.Dorglq(m, n, k, a, lda, tau, work, lwork)
}

func (g gatedLAPACK) Dormqr(side blas.Side, trans blas.Transpose, m, n, k int, a []float64, lda int, tau, c []float64, ldc int, work []float64, lwork int) {
	defer end(begin(4 * float64(m) * float64(n) * float64(k)))
	lapackCalls.Add(1)
	g.Implementation.Dormqr(side, trans, m, n, k, a, lda, tau, c, ldc, work, lwork)
}

func (g gatedLAPACK) Dormlq(side blas.Side, trans blas.Transpose, m, n, k int, a []float64, lda int, tau, c []float64, ldc int, work []float64, lwork int) {
	defer end(begin(4 * float64(m) * float64(n) * float64(k)))
	lapackCalls.Add(1)
	g.Implementation.Dormlq(side, trans, m, n, k, a, lda, tau, c, ldc, work, lwork)
}

func (g gatedLAPACK) Dgels(trans blas.Transpose, m, n, nrhs int, a []float64, lda int, b []float64, ldb int, work []float64, lwork int) bool {
	defer end(begin(2 * sq(min(m, n)) * float64(max(m, n))))
	lapackCalls.Add(1)
	return g.Implementation.Dgels(trans, m, n, nrhs, a, lda, b, ldb, work, lwork)
}

func (g gatedLAPACK) Dgesvd(jobU, jobVT lapack.SVDJob, m, n int, a []float64, lda int, s, u []float64, ldu int, vt []float64, ldvt int, work []float64, lwork int) bool {
	defer end(begin(12 * sq(min(m, n)) * float64(max(m, n))))
	lapackCalls.Add(1)
	return g.Implementation.Dgesvd(jobU, jobVT, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork)
}

func (g gatedLAPACK) Dsyev(jobz lapack.EVJob, uplo blas.Uplo, n int, a []float64, lda int, w, work []float64, lwork int) bool {
	lapackCalls.Add(1)
	return LAPACK{}.Dsyev(jobz, uplo, n, a, lda, w, work, lwork)
}

func (g gatedLAPACK) Dgeev(jobvl lapack.LeftEVJob, jobvr lapack.RightEVJob, n int, a []float64, lda int, wr, wi []float64, vl []float64, ldvl int, vr []float64, ldvr int, work []float64, lwork int) int {
	defer end(begin(25 * cube(n)))
	lapackCalls.Add(1)
	return g.Implementation.Dgeev(jobvl, jobvr, n, a, lda, wr, wi, vl, ldvl, vr, ldvr, work, lwork)
}

func (g gatedLAPACK) Dggsvd3(jobU, jobV, jobQ lapack.GSVDJob, m, n, p int, a []float64, lda int, b []float64, ldb int, alpha, beta, u []float64, ldu int, v []float64, ldv int, q []float64, ldq int, work []float64, lwork int, iwork []int) (k, l int, ok bool) {
	defer end(begin(12 * cube(max(m, n, p))))
	lapackCalls.Add(1)
	return g.Implementation.Dggsvd3(jobU, jobV, jobQ, m, n, p, a, lda, b, ldb, alpha, beta, u, ldu, v, ldv, q, ldq, work, lwork, iwork)
}

func (g gatedLAPACK) Dtrtri(uplo blas.Uplo, diag blas.Diag, n int, a []float64, lda int) bool {
	lapackCalls.Add(1)
	return LAPACK{}.Dtrtri(uplo, diag, n, a, lda)
}

func (g gatedLAPACK) Dtrtrs(uplo blas.Uplo, trans blas.Transpose, diag blas.Diag, n, nrhs int, a []float64, lda int, b []float64, ldb int) bool {
	defer end(begin(sq(n) * float64(nrhs)))
	lapackCalls.Add(1)
	return g.Implementation.Dtrtrs(uplo, trans, diag, n, nrhs, a, lda, b, ldb)
}

func (g gatedLAPACK) Dpbtrf(uplo blas.Uplo, n, kd int, ab []float64, ldab int) bool {
	defer end(begin(float64(n) * float64(kd+1) * float64(kd+1)))
	lapackCalls.Add(1)
	return g.Implementation.Dpbtrf(uplo, n, kd, ab, ldab)
}

// The O(n²) auxiliaries below (norms, condition estimates) are not
// factorizations and gain nothing from OpenBLAS: they run gonum's row-major
// code (on OpenBLAS's BLAS), because LAPACKE's row-major versions copy the
// matrix and the Fortran norms then walk it against its layout. Through
// LAPACKE, mat.Cholesky at n = 512 spent 0.75 ms in dpotrf, 1.25 ms in
// dlansy and 0.75 ms in dpocon.

func (gatedLAPACK) Dlange(norm lapack.MatrixNorm, m, n int, a []float64, lda int, work []float64) float64 {
	return lgonum.Implementation{}.Dlange(norm, m, n, a, lda, work)
}

func (gatedLAPACK) Dlansy(norm lapack.MatrixNorm, uplo blas.Uplo, n int, a []float64, lda int, work []float64) float64 {
	return lgonum.Implementation{}.Dlansy(norm, uplo, n, a, lda, work)
}

func (gatedLAPACK) Dlantr(norm lapack.MatrixNorm, uplo blas.Uplo, diag blas.Diag, m, n int, a []float64, lda int, work []float64) float64 {
	return lgonum.Implementation{}.Dlantr(norm, uplo, diag, m, n, a, lda, work)
}

func (gatedLAPACK) Dgecon(norm lapack.MatrixNorm, n int, a []float64, lda int, anorm float64, work []float64, iwork []int) float64 {
	return lgonum.Implementation{}.Dgecon(norm, n, a, lda, anorm, work, iwork)
}

func (gatedLAPACK) Dpocon(uplo blas.Uplo, n int, a []float64, lda int, anorm float64, work []float64, iwork []int) float64 {
	return lgonum.Implementation{}.Dpocon(uplo, n, a, lda, anorm, work, iwork)
}

func (gatedLAPACK) Dtrcon(norm lapack.MatrixNorm, uplo blas.Uplo, diag blas.Diag, n int, a []float64, lda int, work []float64, iwork []int) float64 {
	return lgonum.Implementation{}.Dtrcon(norm, uplo, diag, n, a, lda, work, iwork)
}
