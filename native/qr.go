//go:build cgo && !purego

package native

/*
#include <lapacke.h>
*/
import "C"

// UpperTrapezoid overwrites the row-major m×n matrix a (m ≤ n) with the
// upper trapezoidal R of a = Q·R in its upper part (the strict lower part
// then holds Householder vectors). The row-major matrix is the column-major
// n×m matrix aᵀ, whose LQ factorization aᵀ = L·Qᵀ (dgelqf) gives R = Lᵀ in
// exactly the upper part of the row-major view, without a transposition.
func UpperTrapezoid(m, n int, a []float64, lda int) bool {
	if m == 0 || n == 0 {
		return true
	}
	if m > n || lda < max(1, n) || len(a) < (m-1)*lda+n {
		panic("lapack: bad dimensions in UpperTrapezoid")
	}
	tau := make([]float64, m)
	var wq [1]float64
	if C.LAPACKE_dgelqf_work(C.LAPACK_COL_MAJOR, C.lapack_int(n), C.lapack_int(m), ptr(a), C.lapack_int(lda), ptr(tau), ptr(wq[:]), -1) != 0 {
		return false
	}
	work := make([]float64, max(1, int(wq[0])))
	return C.LAPACKE_dgelqf_work(C.LAPACK_COL_MAJOR, C.lapack_int(n), C.lapack_int(m), ptr(a), C.lapack_int(lda), ptr(tau), ptr(work), C.lapack_int(len(work))) == 0
}
