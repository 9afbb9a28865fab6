// Package native binds dpsolve's dense kernels to OpenBLAS (its BLAS and
// its LAPACK) through cgo. It is compiled only with cgo enabled and without
// the purego build tag; package blas selects it automatically.
//
// BLAS calls go through gonum.org/v1/netlib/blas/netlib (CBLAS, row-major,
// no copies). LAPACK calls go straight to OpenBLAS's Fortran LAPACK
// interface in column-major layout (small C wrappers stand in for LAPACKE):
// every routine used here takes a symmetric or triangular matrix, so a
// row-major matrix is handed over as its column-major transpose with the
// triangle flag swapped. That avoids the n×n transposition copy that
// LAPACKE's row-major entry points (and so netlib's lapack packages) make on
// every call, which costs time and counts against dpsolve's memory budget.
//
// Build requirements (Debian): libopenblas-dev and liblapacke-dev. dpsolve's
// own LAPACK kernels call libopenblas's Fortran interface directly;
// Float64LAPACK, the complete LAPACK installed for gonum/mat, goes through
// LAPACKE (gonum's netlib binding), whose calls the dynamic linker binds to
// libopenblas too. Linking liblapacke (with the liblapack.so.3 and
// libtmglib it pulls in, bound eagerly) costs each process about a
// millisecond of CPU at start (200 runs of dpsolve version: 5.1 → 6.0 ms
// of CPU each, on a shared 2-core machine), the price of every gonum/mat
// factorization running on OpenBLAS.
//
// Concurrency: every call that OpenBLAS may run on its thread pool goes
// through one process-wide gate (see Reserve and SetThreads), and the pool's
// idle threads sleep after about 2¹⁶ cycles instead of OpenBLAS's 2²⁸.
//
// OpenBLAS picks its compute kernels from the CPU it detects. Debian's
// OpenBLAS 0.3.21 does not recognize some recent CPUs and then runs generic
// kernels several times slower; CoreName reports what it chose, and setting
// the environment variable OPENBLAS_CORETYPE (e.g. SkylakeX) before the
// process starts overrides the choice.
package native
