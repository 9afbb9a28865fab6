//go:build cgo && !purego

package native

/*
#cgo LDFLAGS: -lopenblas
#include <stddef.h>

// LAPACK's Fortran interface, which libopenblas exports itself (LP64: 32-bit
// integers). We call it directly instead of through LAPACKE: linking
// liblapacke pulled in three more libraries (liblapacke, liblapack.so.3,
// libtmglib) and about 4000 symbol relocations, bound eagerly at every
// process start (liblapacke is linked with -z now), which cost each dpsolve
// process over a millisecond; LAPACKE's column-major *_work entry points
// only forward to these routines anyway. The trailing size_t arguments are
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
	"gonum.org/v1/netlib/blas/netlib"
)

// BLAS is OpenBLAS's CBLAS interface as a gonum blas.Float64.
var BLAS blas.Float64 = netlib.Implementation{}

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
	checkUplo(ul)
	checkSquare(n, a, lda)
	if n == 0 {
		return true
	}
	return C.dp_dpotri(swap(ul), C.lapack_int(n), ptr(a), C.lapack_int(lda)) == 0
}

// Dtrtri computes the inverse of a triangular matrix in place.
func (LAPACK) Dtrtri(ul blas.Uplo, d blas.Diag, n int, a []float64, lda int) bool {
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
	checkUplo(ul)
	checkSquare(n, a, lda)
	if jobz != lapack.EVCompute && jobz != lapack.EVNone {
		panic("lapack: bad EVJob")
	}
	vectors := jobz == lapack.EVCompute
	need := 1 + 2*n
	if vectors {
		need = 1 + 6*n + 2*n*n
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
	if m == 0 || n == 0 {
		return true
	}
	k := min(m, n)
	if len(s) < k || lda < max(1, n) || len(a) < (m-1)*lda+n {
		panic("lapack: bad dimensions in SingularValues")
	}
	lwork := 3*k + max(max(m, n), 7*k)
	work := make([]float64, lwork)
	iwork := make([]C.lapack_int, 8*k)
	info := C.dp_dgesdd_values(C.lapack_int(n), C.lapack_int(m), ptr(a), C.lapack_int(lda),
		ptr(s), ptr(work), C.lapack_int(lwork), &iwork[0])
	return info == 0
}

// SymEigVectors computes all eigenvalues (ascending, in w) and orthonormal
// eigenvectors (as the columns of z) of the symmetric matrix in the upper
// triangle of the row-major n×n matrix a, which is destroyed, by LAPACK's
// MRRR driver dsyevr. Unlike the divide-and-conquer dsyevd, which needs
// 2n² workspace on top of a, it writes the vectors to z and needs O(n)
// workspace.
func SymEigVectors(n int, a []float64, lda int, w, z []float64, ldz int) bool {
	if n == 0 {
		return true
	}
	if lda < max(1, n) || ldz < max(1, n) || len(a) < (n-1)*lda+n || len(z) < (n-1)*ldz+n || len(w) < n {
		panic("lapack: bad dimensions in SymEigVectors")
	}
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
	// Column-major eigenvectors are the rows of the row-major view.
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			z[i*ldz+j], z[j*ldz+i] = z[j*ldz+i], z[i*ldz+j]
		}
	}
	return true
}

// SetThreads sets the number of threads OpenBLAS uses.
func SetThreads(n int) { C.openblas_set_num_threads(C.int(n)) }

// Threads returns the number of threads OpenBLAS uses.
func Threads() int { return int(C.openblas_get_num_threads()) }

// CoreName returns the name of the CPU kernel set OpenBLAS selected
// (e.g. "Prescott", "SkylakeX", "Haswell").
func CoreName() string { return C.GoString(C.openblas_get_corename()) }

// Config returns OpenBLAS's build configuration string.
func Config() string { return C.GoString(C.openblas_get_config()) }

// eigWorkspace keeps dsyevr's O(n) work arrays between calls, so that a
// solver that decomposes many matrices of one size (newton.Solver) does not
// allocate them every time. Pooled, hence safe for concurrent callers.
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
