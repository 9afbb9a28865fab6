package blas

import (
	"runtime"
	"sync"

	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/lapack"
	lgonum "gonum.org/v1/gonum/lapack/gonum"
)

// Gonum is the pure-Go backend: gonum's BLAS (which parallelizes Level 3
// across GOMAXPROCS goroutines) and gonum's LAPACK. It is always compiled in,
// so the two backends can be compared in one process.
var Gonum Backend = gonumBackend{}

type gonumBackend struct{}

// gonumWork keeps LAPACK work arrays between calls (see native's
// eigWorkspace): repeated solves of one size then allocate no workspace.
var gonumWork = sync.Pool{New: func() any { return new([]float64) }}

func (gonumBackend) Name() string        { return "purego" }
func (gonumBackend) BLAS() gblas.Float64 { return gonum.Implementation{} }
func (gonumBackend) LAPACK() LAPACK      { return lgonum.Implementation{} }

// GonumLAPACK is gonum's own pure-Go LAPACK.
func (gonumBackend) GonumLAPACK() lapack.Float64 { return lgonum.Implementation{} }
func (gonumBackend) SingularValues(m, n int, a []float64, lda int, s []float64) bool {
	impl := lgonum.Implementation{}
	query := []float64{0}
	impl.Dgesvd(lapack.SVDNone, lapack.SVDNone, m, n, a, lda, s, nil, 1, nil, 1, query, -1)
	wp := gonumWork.Get().(*[]float64)
	defer gonumWork.Put(wp)
	if cap(*wp) < int(query[0]) {
		*wp = make([]float64, int(query[0]))
	}
	work := (*wp)[:int(query[0])]
	return impl.Dgesvd(lapack.SVDNone, lapack.SVDNone, m, n, a, lda, s, nil, 1, nil, 1, work, len(work))
}
func (gonumBackend) SymEigVectors(n int, a []float64, lda int, w, z []float64, ldz int, wp *[]float64) bool {
	impl := lgonum.Implementation{}
	query := []float64{0}
	impl.Dsyev(lapack.EVCompute, gblas.Upper, n, a, lda, w, query, -1)
	if wp == nil {
		wp = gonumWork.Get().(*[]float64)
		defer gonumWork.Put(wp)
	}
	if cap(*wp) < int(query[0]) {
		*wp = make([]float64, int(query[0]))
	}
	work := (*wp)[:int(query[0])]
	if !impl.Dsyev(lapack.EVCompute, gblas.Upper, n, a, lda, w, work, len(work)) {
		return false
	}
	for i := 0; i < n; i++ {
		copy(z[i*ldz:i*ldz+n], a[i*lda:i*lda+n])
	}
	return true
}
func (gonumBackend) Threads() int { return runtime.GOMAXPROCS(0) }

// SetThreads sets GOMAXPROCS (for n > 0): gonum's Level 3 BLAS splits its
// work over GOMAXPROCS goroutines, so that is the only knob it has. It is
// process-wide, like OpenBLAS's thread count.
func (gonumBackend) SetThreads(n int) {
	if n > 0 {
		runtime.GOMAXPROCS(n)
	}
}
func (gonumBackend) CoreName() string { return "" }
