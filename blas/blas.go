// Package blas is the only dense-kernel API dpsolve's solvers call. It
// dispatches to a Backend: OpenBLAS (BLAS and LAPACK) through package
// native when cgo is available (the default), or gonum's pure-Go BLAS and
// LAPACK under the build tag purego or with CGO_ENABLED=0. The choice can be changed at run
// time with Use, in the manner of gonum's blas64.Use.
//
// Nothing is installed behind the caller's back: dpsolve's own kernel calls
// (this package's functions) run on the build's default backend (Default)
// from the start, and gonum's global BLAS and LAPACK (blas64, lapack64) are
// left as the program set them. A program that wants every gonum/mat
// product and factorization inside dpsolve (EigenSym, Cholesky, SVD, QR,
// LU, Dense.Solve, ...) on the same kernels and the same thread policy (see
// Reserve) calls Use once, in main, before any kernel runs — the dpsolve
// command does, with Use(Default()). Use installs the backend for dpsolve
// and as gonum's global BLAS and LAPACK; a library user that also uses gonum
// and never calls Use keeps gonum's own implementations, with dpsolve's
// kernels still on OpenBLAS in the cgo build and gonum/mat inside dpsolve
// on gonum's pure-Go LAPACK (correct, slower for large factorizations).
//
// All matrices are row-major blas64.General values. Symmetric matrices are
// read from and written to their upper triangle unless a function says
// otherwise.
package blas

import (
	"fmt"
	"sync"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// LAPACK is the LAPACK subset dpsolve uses, with gonum's lapack.Float64
// signatures and row-major conventions, so gonum's testlapack conformance
// suite applies to every backend.
type LAPACK interface {
	Dpotrf(ul gblas.Uplo, n int, a []float64, lda int) bool
	Dpotri(ul gblas.Uplo, n int, a []float64, lda int) bool
	Dtrtri(ul gblas.Uplo, d gblas.Diag, n int, a []float64, lda int) bool
	Dsyev(jobz lapack.EVJob, ul gblas.Uplo, n int, a []float64, lda int, w, work []float64, lwork int) bool
}

// Backend is a complete set of kernels.
type Backend interface {
	// Name is "openblas" or "purego".
	Name() string
	// BLAS returns the Level 1–3 BLAS implementation.
	BLAS() gblas.Float64
	// LAPACK returns the LAPACK subset.
	LAPACK() LAPACK
	// GonumLAPACK returns the complete LAPACK that gonum/mat's
	// factorizations run on (installed with lapack64.Use).
	GonumLAPACK() lapack.Float64
	// SymEigVectors computes the eigenvalues (ascending) of the symmetric
	// n×n matrix a (upper triangle read; destroyed) into w and its
	// orthonormal eigenvectors as the columns of z. work, if non-nil,
	// keeps the float64 workspace between calls (grown as needed); nil
	// draws it from a pool.
	SymEigVectors(n int, a []float64, lda int, w, z []float64, ldz int, work *[]float64) bool
	// SingularValues computes the singular values of the row-major m×n
	// matrix a (destroyed) into s in descending order.
	SingularValues(m, n int, a []float64, lda int, s []float64) bool
	// Threads returns the process's kernel-thread budget: the most
	// threads one kernel call uses (1 if unknown).
	Threads() int
	// SetThreads sets the kernel-thread budget (process-wide): OpenBLAS
	// runs a lone kernel call on up to n threads and at most n kernel calls
	// at once, each on its own thread, when several goroutines call
	// kernels (see Reserve); the pure-Go backend sets GOMAXPROCS. n ≤ 0
	// is ignored.
	SetThreads(n int)
	// CoreName names the CPU kernel set in use ("" if not applicable).
	CoreName() string
}

var (
	mu sync.RWMutex
	// current starts as the build's default for dpsolve's own kernels;
	// gonum's globals are not touched until Use (see the package doc).
	current = Default()
)

// Use makes b the backend for all subsequent kernel calls and for gonum's
// global dispatch (blas64.Use(b.BLAS()), lapack64.Use(b.GonumLAPACK())), so
// gonum/mat code in the whole program runs on b too. It is the one explicit
// install call (the dpsolve command's main makes it with Default()); it must
// not be called while kernels are running.
func Use(b Backend) {
	mu.Lock()
	defer mu.Unlock()
	current = b
	blas64.Use(b.BLAS())
	lapack64.Use(b.GonumLAPACK())
}

// Current returns the backend in use.
func Current() Backend {
	mu.RLock()
	defer mu.RUnlock()
	return current
}

// Backends returns every backend compiled into this binary, the default first.
func Backends() []Backend {
	d := Default()
	if d.Name() == Gonum.Name() {
		return []Backend{d}
	}
	return []Backend{d, Gonum}
}

// Describe returns a one-line description of the backend in use, e.g.
// "openblas (core SkylakeX, 2 threads)".
func Describe() string {
	b := Current()
	if c := b.CoreName(); c != "" {
		return fmt.Sprintf("%s (core %s, %d threads)", b.Name(), c, b.Threads())
	}
	return fmt.Sprintf("%s (%d threads)", b.Name(), b.Threads())
}
