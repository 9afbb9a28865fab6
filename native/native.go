//go:build cgo && !purego

package native

/*
#cgo LDFLAGS: -llapacke -lopenblas
#include <stdlib.h>
#include <lapacke.h>

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
	return C.LAPACKE_dpotrf_work(C.LAPACK_COL_MAJOR, swap(ul), C.lapack_int(n), ptr(a), C.lapack_int(lda)) == 0
}

// Dpotri computes the inverse of a symmetric positive definite matrix from
// its Cholesky factor (from Dpotrf with the same ul), in place.
func (LAPACK) Dpotri(ul blas.Uplo, n int, a []float64, lda int) bool {
	checkUplo(ul)
	checkSquare(n, a, lda)
	if n == 0 {
		return true
	}
	return C.LAPACKE_dpotri_work(C.LAPACK_COL_MAJOR, swap(ul), C.lapack_int(n), ptr(a), C.lapack_int(lda)) == 0
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
	return C.LAPACKE_dtrtri_work(C.LAPACK_COL_MAJOR, swap(ul), C.char(d), C.lapack_int(n), ptr(a), C.lapack_int(lda)) == 0
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
	info := C.LAPACKE_dsyevd_work(C.LAPACK_COL_MAJOR, C.char(jobz), swap(ul), C.lapack_int(n), ptr(a), C.lapack_int(lda),
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
	var dummy [1]float64
	info := C.LAPACKE_dgesdd_work(C.LAPACK_COL_MAJOR, 'N', C.lapack_int(n), C.lapack_int(m), ptr(a), C.lapack_int(lda),
		ptr(s), ptr(dummy[:]), 1, ptr(dummy[:]), 1, ptr(work), C.lapack_int(lwork), &iwork[0])
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
	info := C.LAPACKE_dsyevr_work(C.LAPACK_COL_MAJOR, 'V', 'A', 'L', C.lapack_int(n), ptr(a), C.lapack_int(lda),
		0, 0, 0, 0, 0, &m, ptr(w), ptr(z), C.lapack_int(ldz), &isuppz[0], ptr(wq[:]), -1, &iwq[0], -1)
	if info != 0 {
		return false
	}
	lwork, liwork := int(wq[0]), int(iwq[0])
	work := ws.floats(lwork)
	iwork := ws.ints(1, liwork)
	info = C.LAPACKE_dsyevr_work(C.LAPACK_COL_MAJOR, 'V', 'A', 'L', C.lapack_int(n), ptr(a), C.lapack_int(lda),
		0, 0, 0, 0, 0, &m, ptr(w), ptr(z), C.lapack_int(ldz), &isuppz[0], ptr(work), C.lapack_int(lwork), &iwork[0], C.lapack_int(liwork))
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
