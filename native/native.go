//go:build cgo && !purego

package native

/*
#cgo LDFLAGS: -lopenblas
#include <stddef.h>

// LAPACK's Fortran interface, which libopenblas exports itself (LP64: 32-bit
// integers). dpsolve's own kernels call it directly instead of through
// LAPACKE, whose row-major entry points copy every matrix to column-major
// and back, and whose column-major *_work entry points only forward to
// these routines anyway. (gonum/mat's factorizations do go through LAPACKE:
// see Float64LAPACK and doc.go for what linking it costs.) The trailing size_t arguments are
// the hidden lengths of the character arguments that gfortran-compiled
// routines expect (1 each); routines OpenBLAS implements in C ignore them.
typedef int lapack_int;

extern void dpotrf_(const char*, const lapack_int*, double*, const lapack_int*, lapack_int*, size_t);
extern void dpotri_(const char*, const lapack_int*, double*, const lapack_int*, lapack_int*, size_t);
extern void dtrtri_(const char*, const char*, const lapack_int*, double*, const lapack_int*, lapack_int*, size_t, size_t);
extern void dsyevd_(const char*, const char*, const lapack_int*, double*, const lapack_int*, double*,
	double*, const lapack_int*, lapack_int*, const lapack_int*, lapack_int*, size_t, size_t);
extern void dgesdd_(const char*, const lapack_int*, const lapack_int*, double*, const lapack_int*, double*,
	double*, const lapack_int*, double*, const lapack_int*, double*, const lapack_int*, lapack_int*, lapack_int*, size_t);
extern void dsyevr_(const char*, const char*, const char*, const lapack_int*, double*, const lapack_int*,
	const double*, const double*, const lapack_int*, const lapack_int*, const double*, lapack_int*, double*,
	double*, const lapack_int*, lapack_int*, double*, const lapack_int*, lapack_int*, const lapack_int*, lapack_int*,
	size_t, size_t, size_t);

extern void dsytrd_(const char*, const lapack_int*, double*, const lapack_int*, double*, double*, double*,
	double*, const lapack_int*, lapack_int*, size_t);
extern void dstedc_(const char*, const lapack_int*, double*, double*, double*, const lapack_int*,
	double*, const lapack_int*, lapack_int*, const lapack_int*, lapack_int*, size_t);
extern void dormtr_(const char*, const char*, const char*, const lapack_int*, const lapack_int*, const double*,
	const lapack_int*, const double*, double*, const lapack_int*, double*, const lapack_int*, lapack_int*,
	size_t, size_t, size_t);

// The wrappers take values and return LAPACK's info (0: success), like
// LAPACKE's *_work functions in column-major layout.
static lapack_int dp_dpotrf(char uplo, lapack_int n, double* a, lapack_int lda) {
	lapack_int info = 0;
	dpotrf_(&uplo, &n, a, &lda, &info, 1);
	return info;
}

static lapack_int dp_dpotri(char uplo, lapack_int n, double* a, lapack_int lda) {
	lapack_int info = 0;
	dpotri_(&uplo, &n, a, &lda, &info, 1);
	return info;
}

static lapack_int dp_dtrtri(char uplo, char diag, lapack_int n, double* a, lapack_int lda) {
	lapack_int info = 0;
	dtrtri_(&uplo, &diag, &n, a, &lda, &info, 1, 1);
	return info;
}

static lapack_int dp_dsyevd(char jobz, char uplo, lapack_int n, double* a, lapack_int lda, double* w,
		double* work, lapack_int lwork, lapack_int* iwork, lapack_int liwork) {
	lapack_int info = 0;
	dsyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, &info, 1, 1);
	return info;
}

static lapack_int dp_dsytrd(char uplo, lapack_int n, double* a, lapack_int lda, double* d, double* e,
		double* tau, double* work, lapack_int lwork) {
	lapack_int info = 0;
	dsytrd_(&uplo, &n, a, &lda, d, e, tau, work, &lwork, &info, 1);
	return info;
}

static lapack_int dp_dstedc(char compz, lapack_int n, double* d, double* e, double* z, lapack_int ldz,
		double* work, lapack_int lwork, lapack_int* iwork, lapack_int liwork) {
	lapack_int info = 0;
	dstedc_(&compz, &n, d, e, z, &ldz, work, &lwork, iwork, &liwork, &info, 1);
	return info;
}

static lapack_int dp_dormtr(char side, char uplo, char trans, lapack_int m, lapack_int n, const double* a,
		lapack_int lda, const double* tau, double* c, lapack_int ldc, double* work, lapack_int lwork) {
	lapack_int info = 0;
	dormtr_(&side, &uplo, &trans, &m, &n, a, &lda, tau, c, &ldc, work, &lwork, &info, 1, 1, 1);
	return info;
}

// dp_dgesdd_values: singular values only (jobz 'N'; u and vt are not referenced).
static lapack_int dp_dgesdd_values(lapack_int m, lapack_int n, double* a, lapack_int lda, double* s,
		double* work, lapack_int lwork, lapack_int* iwork) {
	lapack_int info = 0, one = 1;
	double dummy = 0;
	char jobz = 'N';
	dgesdd_(&jobz, &m, &n, a, &lda, s, &dummy, &one, &dummy, &one, work, &lwork, iwork, &info, 1);
	return info;
}

// dp_dsyevr_all: every eigenvalue and eigenvector (jobz 'V', range 'A').
static lapack_int dp_dsyevr_all(char uplo, lapack_int n, double* a, lapack_int lda, lapack_int* m, double* w,
		double* z, lapack_int ldz, lapack_int* isuppz, double* work, lapack_int lwork, lapack_int* iwork, lapack_int liwork) {
	lapack_int info = 0, il = 0, iu = 0;
	double vl = 0, vu = 0, abstol = 0;
	char jobz = 'V', range = 'A';
	dsyevr_(&jobz, &range, &uplo, &n, a, &lda, &vl, &vu, &il, &iu, &abstol, m, w, z, &ldz, isuppz,
		work, &lwork, iwork, &liwork, &info, 1, 1, 1);
	return info;
}

// OpenBLAS extensions, declared here so that no particular cblas.h is needed.
extern void openblas_set_num_threads(int);
extern int openblas_get_num_threads(void);
extern char* openblas_get_corename(void);
extern char* openblas_get_config(void);
*/
import "C"

import (
	"sync"
	"unsafe"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack"
)

// BLAS is OpenBLAS's CBLAS interface as a gonum blas.Float64, its
// multi-threaded routines admitted by the kernel-thread policy (see Reserve).
var BLAS blas.Float64 = gatedBLAS{}

// LAPACK implements the LAPACK subset dpsolve uses, on row-major matrices,
// with gonum's lapack conventions (so gonum's testlapack suite applies).
type LAPACK struct{}

// swap returns the opposite triangle: the row-major upper triangle of a
// matrix is the column-major lower triangle of the same memory.
func swap(ul blas.Uplo) C.char {
	if ul == blas.Upper {
		return 'L'
	}
	return 'U'
}

func ptr(a []float64) *C.double {
	if len(a) == 0 {
		return nil
	}
	return (*C.double)(unsafe.Pointer(&a[0]))
}

func checkUplo(ul blas.Uplo) {
	if ul != blas.Upper && ul != blas.Lower {
		panic("lapack: bad uplo")
	}
}

func checkSquare(n int, a []float64, lda int) {
	switch {
	case n < 0:
		panic("lapack: n < 0")
	case lda < max(1, n):
		panic("lapack: bad leading dimension of A")
	case n > 0 && len(a) < (n-1)*lda+n:
		panic("lapack: insufficient length of a")
	}
}

// Dpotrf computes the Cholesky factorization of the symmetric positive
// definite matrix held in triangle ul of a: A = UᵀU (Upper) or A = LLᵀ
// (Lower). It returns false if A is not positive definite.
func (LAPACK) Dpotrf(ul blas.Uplo, n int, a []float64, lda int) bool {
	defer end(begin(cube(n) / 3))
	checkUplo(ul)
	checkSquare(n, a, lda)
	if n == 0 {
		return true
	}
	return C.dp_dpotrf(swap(ul), C.lapack_int(n), ptr(a), C.lapack_int(lda)) == 0
}

// Dpotri computes the inverse of a symmetric positive definite matrix from
// its Cholesky factor (from Dpotrf with the same ul), in place.
func (LAPACK) Dpotri(ul blas.Uplo, n int, a []float64, lda int) bool {
	defer end(begin(cube(n)))
	checkUplo(ul)
	checkSquare(n, a, lda)
	if n == 0 {
		return true
	}
	return C.dp_dpotri(swap(ul), C.lapack_int(n), ptr(a), C.lapack_int(lda)) == 0
}

// Dtrtri computes the inverse of a triangular matrix in place.
func (LAPACK) Dtrtri(ul blas.Uplo, d blas.Diag, n int, a []float64, lda int) bool {
	defer end(begin(cube(n) / 3))
	checkUplo(ul)
	checkSquare(n, a, lda)
	if d != blas.Unit && d != blas.NonUnit {
		panic("lapack: bad diag")
	}
	if n == 0 {
		return true
	}
	return C.dp_dtrtri(swap(ul), C.char(d), C.lapack_int(n), ptr(a), C.lapack_int(lda)) == 0
}

// Dsyev computes the eigenvalues (ascending, in w) and, for jobz ==
// lapack.EVCompute, the orthonormal eigenvectors (as the columns of a) of the
// symmetric matrix in triangle ul of a, by LAPACK's divide-and-conquer
// dsyevd. Its signature and workspace-query convention (lwork == -1 returns
// the optimal lwork in work[0]) are gonum's lapack.Float64 Dsyev's.
func (LAPACK) Dsyev(jobz lapack.EVJob, ul blas.Uplo, n int, a []float64, lda int, w, work []float64, lwork int) bool {
	defer end(begin(9 * cube(n)))
	checkUplo(ul)
	checkSquare(n, a, lda)
	if jobz != lapack.EVCompute && jobz != lapack.EVNone {
		panic("lapack: bad EVJob")
	}
	vectors := jobz == lapack.EVCompute
	// LAPACK's minimal lwork for the values alone, 1 + 2n, leaves dsytrd
	// no room for its blocked algorithm: the unblocked one ran at half the
	// speed (n = 2048, OpenBLAS 0.3.21 SkylakeX, 2 threads, BenchmarkSymEig on
	// a shared machine: 1.02 s against 0.56 s).
	// The query returns the blocked size.
	need := 1 + 2*n
	if vectors {
		need = 1 + 6*n + 2*n*n
	}
	if n > 0 {
		var q [1]float64
		var iq [1]C.lapack_int
		if C.dp_dsyevd(C.char(jobz), swap(ul), C.lapack_int(n), ptr(a), C.lapack_int(lda),
			ptr(w), ptr(q[:]), -1, &iq[0], -1) == 0 {
			need = max(need, int(q[0]))
		}
	}
	if lwork == -1 {
		work[0] = float64(need)
		return true
	}
	if n == 0 {
		return true
	}
	if len(w) < n {
		panic("lapack: insufficient length of w")
	}
	if lwork < need || len(work) < lwork {
		panic("lapack: insufficient lwork")
	}
	liwork := 1
	if vectors {
		liwork = 3 + 5*n
	}
	iwork := make([]C.lapack_int, liwork)
	info := C.dp_dsyevd(C.char(jobz), swap(ul), C.lapack_int(n), ptr(a), C.lapack_int(lda),
		ptr(w), ptr(work), C.lapack_int(lwork), &iwork[0], C.lapack_int(liwork))
	if info != 0 {
		return false
	}
	if vectors {
		// Column-major eigenvectors are the rows of the row-major view:
		// transpose in place so they become columns, as gonum promises.
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				a[i*lda+j], a[j*lda+i] = a[j*lda+i], a[i*lda+j]
			}
		}
	}
	return true
}

// SingularValues computes the singular values of the row-major m×n matrix
// a (destroyed) into s (length min(m,n)), in descending order, by LAPACK's
// divide-and-conquer dgesdd. The row-major matrix is passed as its
// column-major transpose, which has the same singular values.
func SingularValues(m, n int, a []float64, lda int, s []float64) bool {
	defer end(begin(4 * cube(min(m, n)) * float64(max(m, n)) / float64(max(1, min(m, n)))))
	if m == 0 || n == 0 {
		return true
	}
	k := min(m, n)
	if len(s) < k || lda < max(1, n) || len(a) < (m-1)*lda+n {
		panic("lapack: bad dimensions in SingularValues")
	}
	// LAPACK's minimal lwork, 3k + max(m, n, 7k), leaves dgebrd no room
	// for its blocked algorithm; the query returns the blocked size
	// ((m + n)·nb more). Measured on a random 2048×2048 matrix (OpenBLAS
	// 0.3.21 SkylakeX, one thread, machine at load 5): 8.35–8.55 s with
	// the minimal size, 6.38–8.09 s with the query's.
	lwork := 3*k + max(max(m, n), 7*k)
	iwork := make([]C.lapack_int, 8*k)
	var q [1]float64
	if C.dp_dgesdd_values(C.lapack_int(n), C.lapack_int(m), ptr(a), C.lapack_int(lda),
		ptr(s), ptr(q[:]), -1, &iwork[0]) == 0 {
		lwork = max(lwork, int(q[0]))
	}
	work := make([]float64, lwork)
	info := C.dp_dgesdd_values(C.lapack_int(n), C.lapack_int(m), ptr(a), C.lapack_int(lda),
		ptr(s), ptr(work), C.lapack_int(lwork), &iwork[0])
	return info == 0
}

// SymEigVectors computes all eigenvalues (ascending, in w) and orthonormal
// eigenvectors (as the columns of z) of the symmetric matrix in the upper
// triangle of the row-major n×n matrix a, which is destroyed.
//
// It runs divide and conquer as dsyevd does — dsytrd, dstedc on the
// tridiagonal matrix, dormtr to apply the reflectors — but writes the
// vectors straight into z, so the only n×n workspace is dstedc's n² (kept
// in a pool between calls), where dsyevd needs 2n² besides a. Measured
// with OpenBLAS 0.3.21 (SkylakeX, 2 threads) at n = 2048 this takes 6
// DGEMM-equivalents against MRRR's (dsyevr) 8: dstedc's merges are
// matrix products, MRRR's vectors are computed one by one. MRRR
// (symEigVectorsMRRR) remains for n below dcMinN, where dstedc's own
// small-matrix path would run anyway and the n² pool is not worth it.
//
// work, if non-nil, holds the float64 workspace between calls (grown as
// needed); nil takes it from a pool.
func SymEigVectors(n int, a []float64, lda int, w, z []float64, ldz int, work *[]float64) bool {
	defer end(begin(9 * cube(n)))
	if n == 0 {
		return true
	}
	if lda < max(1, n) || ldz < max(1, n) || len(a) < (n-1)*lda+n || len(z) < (n-1)*ldz+n || len(w) < n {
		panic("lapack: bad dimensions in SymEigVectors")
	}
	if n < dcMinN {
		return symEigVectorsMRRR(n, a, lda, w, z, ldz)
	}
	ws := getEigWork()
	defer eigWork.Put(ws)
	// Row-major upper = column-major lower. Work layout in ws.f: e (n),
	// tau (n), then the larger of dsytrd's/dormtr's blocked work and
	// dstedc's 1 + 4n + n².
	var q [1]float64
	var dq, eq, tq [1]float64 // not referenced by a workspace query
	if C.dp_dsytrd('L', C.lapack_int(n), ptr(a), C.lapack_int(lda), ptr(dq[:]), ptr(eq[:]), ptr(tq[:]), ptr(q[:]), -1) != 0 {
		return false
	}
	lwTrd := int(q[0])
	var q2 [1]float64
	if C.dp_dormtr('L', 'L', 'N', C.lapack_int(n), C.lapack_int(n), ptr(a), C.lapack_int(lda), ptr(tq[:]), ptr(z), C.lapack_int(ldz), ptr(q2[:]), -1) != 0 {
		return false
	}
	lwStedc := 1 + 4*n + n*n
	lw := max(lwTrd, int(q2[0]), lwStedc)
	var f []float64
	if work != nil {
		if cap(*work) < 2*n+lw {
			*work = make([]float64, 2*n+lw)
		}
		f = (*work)[:2*n+lw]
	} else {
		f = ws.floats(2*n + lw)
	}
	e, tau, wk := f[:n], f[n:2*n], f[2*n:]
	if C.dp_dsytrd('L', C.lapack_int(n), ptr(a), C.lapack_int(lda), ptr(w), ptr(e), ptr(tau), ptr(wk), C.lapack_int(lw)) != 0 {
		return false
	}
	iwork := ws.ints(1, 3+5*n)
	if C.dp_dstedc('I', C.lapack_int(n), ptr(w), ptr(e), ptr(z), C.lapack_int(ldz), ptr(wk), C.lapack_int(lw), &iwork[0], C.lapack_int(len(iwork))) != 0 {
		return false
	}
	if C.dp_dormtr('L', 'L', 'N', C.lapack_int(n), C.lapack_int(n), ptr(a), C.lapack_int(lda), ptr(tau), ptr(z), C.lapack_int(ldz), ptr(wk), C.lapack_int(lw)) != 0 {
		return false
	}
	transposeInPlace(n, z, ldz)
	return true
}

// dcMinN is the smallest n for which SymEigVectors uses divide and
// conquer; dstedc itself switches to implicit QL below 25, and up to a few
// hundred the two drivers cost about the same.
const dcMinN = 128

// symEigVectorsMRRR is SymEigVectors by LAPACK's MRRR driver dsyevr, which
// needs only O(n) workspace.
func symEigVectorsMRRR(n int, a []float64, lda int, w, z []float64, ldz int) bool {
	var m C.lapack_int
	ws := getEigWork()
	defer eigWork.Put(ws)
	isuppz := ws.ints(0, 2*n)
	var wq [1]float64
	var iwq [1]C.lapack_int
	// Workspace query, then the call. Row-major upper = column-major lower.
	info := C.dp_dsyevr_all('L', C.lapack_int(n), ptr(a), C.lapack_int(lda),
		&m, ptr(w), ptr(z), C.lapack_int(ldz), &isuppz[0], ptr(wq[:]), -1, &iwq[0], -1)
	if info != 0 {
		return false
	}
	lwork, liwork := int(wq[0]), int(iwq[0])
	work := ws.floats(lwork)
	iwork := ws.ints(1, liwork)
	info = C.dp_dsyevr_all('L', C.lapack_int(n), ptr(a), C.lapack_int(lda),
		&m, ptr(w), ptr(z), C.lapack_int(ldz), &isuppz[0], ptr(work), C.lapack_int(lwork), &iwork[0], C.lapack_int(liwork))
	if info != 0 || int(m) != n {
		return false
	}
	transposeInPlace(n, z, ldz)
	return true
}

// transposeInPlace transposes the n×n matrix z in place: the column-major
// eigenvectors LAPACK writes are the rows of the row-major view, and
// callers want them as columns. Tiles of transposeTile² elements keep both
// the rows and the columns being swapped in cache (a plain double loop
// walks the columns with stride ldz, one cache line per element).
func transposeInPlace(n int, z []float64, ldz int) {
	const t = transposeTile
	for bi := 0; bi < n; bi += t {
		ie := min(bi+t, n)
		// The diagonal tile.
		for i := bi; i < ie; i++ {
			for j := i + 1; j < ie; j++ {
				z[i*ldz+j], z[j*ldz+i] = z[j*ldz+i], z[i*ldz+j]
			}
		}
		// Tiles right of the diagonal with their mirror images below it.
		for bj := ie; bj < n; bj += t {
			je := min(bj+t, n)
			for i := bi; i < ie; i++ {
				for j := bj; j < je; j++ {
					z[i*ldz+j], z[j*ldz+i] = z[j*ldz+i], z[i*ldz+j]
				}
			}
		}
	}
}

// transposeTile is the tile edge of transposeInPlace: two 32×32 tiles of
// float64 are 16 KiB, within any L1 data cache.
const transposeTile = 32

// CoreName returns the name of the CPU kernel set OpenBLAS selected
// (e.g. "Prescott", "SkylakeX", "Haswell").
func CoreName() string { return C.GoString(C.openblas_get_corename()) }

// config returns OpenBLAS's build configuration string (tests only: blas
// reports the core name, not the configuration).
func config() string { return C.GoString(C.openblas_get_config()) }

// eigWorkspace keeps the eigensolvers' work arrays (dstedc's n², dsyevr's
// O(n)) between calls, so that a solver that decomposes many matrices of
// one size (newton.Solver) does not allocate them every time. Pooled, hence safe for concurrent callers.
type eigWorkspace struct {
	f  []float64
	is [2][]C.lapack_int
}

var eigWork = sync.Pool{New: func() any { return new(eigWorkspace) }}

func getEigWork() *eigWorkspace { return eigWork.Get().(*eigWorkspace) }

func (w *eigWorkspace) floats(n int) []float64 {
	if cap(w.f) < n {
		w.f = make([]float64, n)
	}
	return w.f[:n]
}

func (w *eigWorkspace) ints(k, n int) []C.lapack_int {
	if cap(w.is[k]) < n {
		w.is[k] = make([]C.lapack_int, n)
	}
	return w.is[k][:n]
}
