package blas

import gblas "gonum.org/v1/gonum/blas"

// The kernels below serve the mechanisms (lrm, release) so that no package
// outside blas/ and native/ calls gonum's blas64 or lapack64 routines: every
// dense kernel dpsolve runs goes through the backend chosen here (OpenBLAS
// in the default build, gonum under purego), not through gonum's global
// blas64 dispatch or its pure-Go LAPACK behind the caller's back.

// CholSolve solves A·X = B for X, overwriting b, given the upper-triangular
// Cholesky factor u of A = UᵀU (as left by Cholesky): two triangular solves,
// Uᵀ·Y = B then U·X = Y (LAPACK's potrs).
func CholSolve(u, b General) {
	Trsm(gblas.Left, gblas.Upper, gblas.Trans, gblas.NonUnit, 1, u, b)
	Trsm(gblas.Left, gblas.Upper, gblas.NoTrans, gblas.NonUnit, 1, u, b)
}

// Trsv solves op(A)·x = b for x, overwriting x (which holds b), with A the
// square triangular matrix a (triangle ul; the other is not referenced).
func Trsv(ul gblas.Uplo, t gblas.Transpose, d gblas.Diag, a General, x []float64) {
	if a.Rows != a.Cols || len(x) != a.Rows {
		panic("blas: shape mismatch in Trsv")
	}
	Current().BLAS().Dtrsv(ul, t, d, a.Rows, a.Data, max(1, a.Stride), x, 1)
}

// UseForGonum routes gonum's global dispatch (blas64, lapack64: gonum/mat)
// through the current backend again, after a program changed it: what Use
// does for gonum, without changing dpsolve's backend. Importing the package
// does it once for the default backend.
func UseForGonum() { Use(Current()) }
