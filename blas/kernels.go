package blas

import (
	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
)

// General is a dense row-major matrix view: element (i,j) is
// Data[i*Stride+j].
type General = blas64.General

// NewGeneral returns a zeroed r×c matrix.
func NewGeneral(r, c int) General {
	return General{Rows: r, Cols: c, Stride: c, Data: make([]float64, r*c)}
}

// NewSquare returns a zeroed n×n matrix.
func NewSquare(n int) General { return NewGeneral(n, n) }

// Copy copies src into dst, which must have the same shape.
func Copy(dst, src General) {
	if dst.Rows != src.Rows || dst.Cols != src.Cols {
		panic("blas: shape mismatch in Copy")
	}
	for i := 0; i < src.Rows; i++ {
		copy(dst.Data[i*dst.Stride:i*dst.Stride+dst.Cols], src.Data[i*src.Stride:i*src.Stride+src.Cols])
	}
}

// Gemm computes C = alpha·op(A)·op(B) + beta·C.
func Gemm(tA, tB gblas.Transpose, alpha float64, a, b General, beta float64, c General) {
	m, k := a.Rows, a.Cols
	if tA != gblas.NoTrans {
		m, k = k, m
	}
	n := b.Cols
	if tB != gblas.NoTrans {
		n = b.Rows
	}
	Current().BLAS().Dgemm(tA, tB, m, n, k, alpha, a.Data, max(1, a.Stride), b.Data, max(1, b.Stride), beta, c.Data, max(1, c.Stride))
}

// Syrk computes the upper triangle of C = alpha·A·Aᵀ + beta·C (t = NoTrans)
// or C = alpha·Aᵀ·A + beta·C (t = Trans). The strict lower triangle of C is
// not referenced.
func Syrk(t gblas.Transpose, alpha float64, a General, beta float64, c General) {
	n, k := a.Rows, a.Cols
	if t != gblas.NoTrans {
		n, k = k, n
	}
	Current().BLAS().Dsyrk(gblas.Upper, t, n, k, alpha, a.Data, max(1, a.Stride), beta, c.Data, max(1, c.Stride))
}

// Trsm solves op(A)·X = alpha·B (side Left) or X·op(A) = alpha·B (side
// Right) for X, overwriting B, with A triangular.
func Trsm(s gblas.Side, ul gblas.Uplo, t gblas.Transpose, d gblas.Diag, alpha float64, a, b General) {
	Current().BLAS().Dtrsm(s, ul, t, d, b.Rows, b.Cols, alpha, a.Data, max(1, a.Stride), b.Data, max(1, b.Stride))
}

// Trmm computes B = alpha·op(A)·B (side Left) or B = alpha·B·op(A) (side
// Right), with A triangular, overwriting B.
func Trmm(s gblas.Side, ul gblas.Uplo, t gblas.Transpose, d gblas.Diag, alpha float64, a, b General) {
	Current().BLAS().Dtrmm(s, ul, t, d, b.Rows, b.Cols, alpha, a.Data, max(1, a.Stride), b.Data, max(1, b.Stride))
}

// Cholesky overwrites the symmetric positive definite matrix a (upper
// triangle read) with its upper-triangular factor U, A = UᵀU, and zeroes the
// strict lower triangle. It returns false, leaving a in an unspecified
// state, if A is not numerically positive definite.
func Cholesky(a General) bool {
	n := a.Rows
	if !Current().LAPACK().Dpotrf(gblas.Upper, n, a.Data, max(1, a.Stride)) {
		return false
	}
	for i := 1; i < n; i++ {
		clear(a.Data[i*a.Stride : i*a.Stride+i])
	}
	return true
}

// CholInverse overwrites the upper-triangular Cholesky factor U of A with
// A⁻¹ (both triangles filled). It returns false if U is singular.
func CholInverse(u General) bool {
	if !Current().LAPACK().Dpotri(gblas.Upper, u.Rows, u.Data, max(1, u.Stride)) {
		return false
	}
	Symmetrize(u)
	return true
}

// TriInverse overwrites the triangular matrix a (triangle ul, non-unit
// diagonal) with its inverse. It returns false if a is singular.
func TriInverse(ul gblas.Uplo, a General) bool {
	return Current().LAPACK().Dtrtri(ul, gblas.NonUnit, a.Rows, a.Data, max(1, a.Stride))
}

// SymEig computes the eigenvalues of the symmetric matrix a (upper triangle
// read) into w in ascending order and, if vectors, overwrites a with the
// orthonormal eigenvectors as columns (a = Q·diag(w)·Qᵀ). Without vectors, a
// is destroyed. It returns false if the algorithm failed to converge.
func SymEig(a General, w []float64, vectors bool) bool {
	n := a.Rows
	if n == 0 {
		return true
	}
	jobz := lapack.EVNone
	if vectors {
		jobz = lapack.EVCompute
	}
	impl := Current().LAPACK()
	query := []float64{0}
	impl.Dsyev(jobz, gblas.Upper, n, a.Data, max(1, a.Stride), w, query, -1)
	work := make([]float64, int(query[0]))
	return impl.Dsyev(jobz, gblas.Upper, n, a.Data, max(1, a.Stride), w, work, len(work))
}

// Symmetrize copies the upper triangle of the square matrix a into its lower
// triangle.
func Symmetrize(a General) {
	n := a.Rows
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			a.Data[j*a.Stride+i] = a.Data[i*a.Stride+j]
		}
	}
}

// SingularValues computes the singular values of a (destroyed) into s
// (length ≥ min(rows, cols)) in descending order. It returns false if the
// algorithm failed to converge.
func SingularValues(a General, s []float64) bool {
	return Current().SingularValues(a.Rows, a.Cols, a.Data, max(1, a.Stride), s)
}

// SymEigVectors computes the eigenvalues of the symmetric matrix a (upper
// triangle read; destroyed) into w in ascending order and its orthonormal
// eigenvectors into the columns of z (a = Z·diag(w)·Zᵀ). With OpenBLAS it
// runs divide and conquer with the vectors written to z, so it needs n²
// of (pooled) workspace where SymEig's dsyevd needs 2n², and MRRR below
// n = 128 (see native.SymEigVectors). It returns false on failure.
func SymEigVectors(a, z General, w []float64) bool {
	return Current().SymEigVectors(a.Rows, a.Data, max(1, a.Stride), w, z.Data, max(1, z.Stride), nil)
}

// SymEigVectorsWork is SymEigVectors with the caller's scratch: *work is
// used when its capacity suffices (EigenWorkLen) and replaced by a larger
// allocation otherwise. A solver whose workspaces include a matrix that is
// free while it decomposes can lend that matrix's storage, allocated with
// EigenWorkLen(n) capacity, and so need no eigensolver workspace of its
// own.
func SymEigVectorsWork(a, z General, w []float64, work *[]float64) bool {
	return Current().SymEigVectors(a.Rows, a.Data, max(1, a.Stride), w, z.Data, max(1, z.Stride), work)
}

// EigenWorkLen is the scratch length SymEigVectorsWork needs for an n×n
// matrix with any backend: 2n + 1 + 4n + n² for OpenBLAS's divide and
// conquer (dsytrd's e and τ, then dstedc's work; the blocked dsytrd and
// dormtr need n·nb, nb ≤ 64, which the extra 64² covers for small n); the
// pure-Go backend and OpenBLAS's MRRR below n = 128 need O(n).
func EigenWorkLen(n int) int { return n*n + 6*n + 1 + 64*64 }

// GemmUpper computes the upper triangle of C = alpha·A·Bᵀ + beta·C, for
// results known to be symmetric, in about 5/8 of a full GEMM's flops: the
// rows of C are split into four blocks and block i multiplies only against
// the columns j ≥ its first row. Entries below the diagonal blocks are not
// referenced; within diagonal blocks the strict lower part is written too.
func GemmUpper(alpha float64, a, b General, beta float64, c General) {
	n := c.Rows
	const blocks = 4
	for k := 0; k < blocks; k++ {
		lo, hi := k*n/blocks, (k+1)*n/blocks
		if lo == hi {
			continue
		}
		ar := General{Rows: hi - lo, Cols: a.Cols, Stride: a.Stride, Data: a.Data[lo*a.Stride:]}
		br := General{Rows: n - lo, Cols: b.Cols, Stride: b.Stride, Data: b.Data[lo*b.Stride:]}
		cr := General{Rows: hi - lo, Cols: n - lo, Stride: c.Stride, Data: c.Data[lo*c.Stride+lo:]}
		Gemm(gblas.NoTrans, gblas.Trans, alpha, ar, br, beta, cr)
	}
}
