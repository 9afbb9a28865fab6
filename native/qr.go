//go:build cgo && !purego

package native

/*
typedef int lapack_int;

// LAPACK's dgelqf, from libopenblas (see native.go for why not LAPACKE).
extern void dgelqf_(const lapack_int*, const lapack_int*, double*, const lapack_int*, double*, double*,
	const lapack_int*, lapack_int*);

static lapack_int dp_dgelqf(lapack_int m, lapack_int n, double* a, lapack_int lda, double* tau, double* work, lapack_int lwork) {
	lapack_int info = 0;
	dgelqf_(&m, &n, a, &lda, tau, work, &lwork, &info);
	return info;
}
*/
import "C"

// UpperTrapezoid overwrites the row-major m×n matrix a (m ≤ n) with the
// upper trapezoidal R of a = Q·R in its upper part (the strict lower part
// then holds Householder vectors). The row-major matrix is the column-major
// n×m matrix aᵀ, whose LQ factorization aᵀ = L·Qᵀ (dgelqf) gives R = Lᵀ in
// exactly the upper part of the row-major view, without a transposition.
func UpperTrapezoid(m, n int, a []float64, lda int) bool {
	defer end(begin(2 * float64(m) * float64(m) * float64(n)))
	if m == 0 || n == 0 {
		return true
	}
	if m > n || lda < max(1, n) || len(a) < (m-1)*lda+n {
		panic("lapack: bad dimensions in UpperTrapezoid")
	}
	tau := make([]float64, m)
	var wq [1]float64
	if C.dp_dgelqf(C.lapack_int(n), C.lapack_int(m), ptr(a), C.lapack_int(lda), ptr(tau), ptr(wq[:]), -1) != 0 {
		return false
	}
	work := make([]float64, max(1, int(wq[0])))
	return C.dp_dgelqf(C.lapack_int(n), C.lapack_int(m), ptr(a), C.lapack_int(lda), ptr(tau), ptr(work), C.lapack_int(len(work))) == 0
}
