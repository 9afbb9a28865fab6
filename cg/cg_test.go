package cg_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/cg"
	"github.com/dpsolve/dpsolve/status"
)

// spdOperator returns X ↦ P·X + X·P for a random SPD P: a symmetric
// positive definite operator on n×n matrices (its eigenvalues are pᵢ + pⱼ).
func spdOperator(r *rand.Rand, n int) (cg.Operator, blas.General) {
	b := blas.NewSquare(n)
	for i := range b.Data {
		b.Data[i] = r.NormFloat64()
	}
	p := blas.NewSquare(n)
	blas.Gemm(gblas.NoTrans, gblas.Trans, 1, b, b, 0, p)
	for i := 0; i < n; i++ {
		p.Data[i*n+i] += 1
	}
	return func(dst, src blas.General) {
		blas.Gemm(gblas.NoTrans, gblas.NoTrans, 1, p, src, 0, dst)
		blas.Gemm(gblas.NoTrans, gblas.NoTrans, 1, src, p, 1, dst)
	}, p
}

func zeroDiag(a blas.General) {
	for i := 0; i < a.Rows; i++ {
		a.Data[i*a.Stride+i] = 0
	}
}

// TestSolveSylvester: A(X) = PX + XP = B is a Lyapunov equation with a
// unique solution; compare CG's answer with the one from P's
// eigendecomposition, Xᵢⱼ = (QᵀBQ)ᵢⱼ/(pᵢ+pⱼ) in P's eigenbasis.
func TestSolveSylvester(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := 12
	op, p := spdOperator(r, n)
	b := blas.NewSquare(n)
	for i := range b.Data {
		b.Data[i] = r.NormFloat64()
	}
	x := blas.NewSquare(n)
	res, err := cg.Solve(op, b, x, cg.Options{MaxIter: 500, Tol: 1e-12})
	require.NoError(t, err)
	require.Equal(t, status.Converged, res.Status)

	var eig mat.EigenSym
	pd := mat.NewSymDense(n, append([]float64(nil), p.Data...))
	require.True(t, eig.Factorize(pd, true))
	var q mat.Dense
	eig.VectorsTo(&q)
	ev := eig.Values(nil)
	bm := mat.NewDense(n, n, b.Data)
	var bt, tmp, want mat.Dense
	bt.Mul(q.T(), bm)
	bt.Mul(&bt, &q)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			bt.Set(i, j, bt.At(i, j)/(ev[i]+ev[j]))
		}
	}
	tmp.Mul(&q, &bt)
	want.Mul(&tmp, q.T())
	got := mat.NewDense(n, n, x.Data)
	var d mat.Dense
	d.Sub(got, &want)
	// Residual 1e-12 relative; the operator's condition number is modest
	// (< 1e4 here), so the solution error is below 1e-8 relative.
	require.Less(t, mat.Norm(&d, math.Inf(1)), 1e-8*mat.Norm(&want, math.Inf(1)))
}

// TestProjectionAndPreconditioner: with the zero-diagonal projection the
// solution satisfies P·A(x) = P·b and diag(x) = 0; a Jacobi preconditioner
// reaches the same solution in no more iterations.
func TestProjectionAndPreconditioner(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	n := 10
	op, p := spdOperator(r, n)
	b := blas.NewSquare(n)
	for i := range b.Data {
		b.Data[i] = r.NormFloat64()
	}
	solve := func(pre func(dst, src blas.General)) (blas.General, cg.Result) {
		x := blas.NewSquare(n)
		res, err := cg.Solve(op, b, x, cg.Options{MaxIter: 1000, Tol: 1e-12, Project: zeroDiag, Precondition: pre})
		require.NoError(t, err)
		require.Equal(t, status.Converged, res.Status)
		return x, res
	}
	x1, r1 := solve(nil)
	// Jacobi: the diagonal of X ↦ PX + XP is pᵢᵢ + pⱼⱼ.
	x2, r2 := solve(func(dst, src blas.General) {
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				dst.Data[i*n+j] = src.Data[i*n+j] / (p.Data[i*n+i] + p.Data[j*n+j])
			}
		}
	})
	ax := blas.NewSquare(n)
	op(ax, x1)
	for i := 0; i < n; i++ {
		require.Zero(t, x1.Data[i*n+i])
		for j := 0; j < n; j++ {
			if i != j {
				require.InDelta(t, b.Data[i*n+j], ax.Data[i*n+j], 1e-9)
			}
		}
	}
	for i := range x1.Data {
		require.InDelta(t, x1.Data[i], x2.Data[i], 1e-9)
	}
	t.Logf("plain CG %d iterations, Jacobi-PCG %d", r1.Iterations, r2.Iterations)
	require.LessOrEqual(t, r2.Iterations, r1.Iterations+2)
}

func TestCapAndErrors(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	op, _ := spdOperator(r, 8)
	b := blas.NewSquare(8)
	b.Data[1] = 1
	x := blas.NewSquare(8)
	res, err := cg.Solve(op, b, x, cg.Options{MaxIter: 2, Tol: 1e-15})
	require.NoError(t, err)
	require.Equal(t, 2, res.Iterations)
	require.Equal(t, status.IterationLimit, res.Status)

	_, err = cg.Solve(op, b, x, cg.Options{})
	require.Error(t, err)
	neg := func(dst, src blas.General) {
		for i := range src.Data {
			dst.Data[i] = -src.Data[i]
		}
	}
	res, err = cg.Solve(neg, b, blas.NewSquare(8), cg.Options{MaxIter: 5, Tol: 1e-9})
	require.ErrorIs(t, err, cg.ErrNotPositiveDefinite)
	require.Equal(t, status.Failed, res.Status)
}

// A strided view would make the flat-slice iteration read row padding: it
// is rejected as bad input rather than solved wrongly.
func TestRejectsStridedViews(t *testing.T) {
	id := func(dst, src blas.General) { blas.Copy(dst, src) }
	full := blas.NewGeneral(2, 3)
	view := blas.General{Rows: 2, Cols: 2, Stride: 3, Data: full.Data[:5]}
	x := blas.NewGeneral(2, 2)
	if _, err := cg.Solve(id, view, x, cg.Options{MaxIter: 3}); !errors.Is(err, cg.ErrInput) {
		t.Fatalf("strided b: %v, want ErrInput", err)
	}
	b := blas.NewGeneral(2, 2)
	b.Data[0] = 1
	if _, err := cg.Solve(id, b, view, cg.Options{MaxIter: 3}); !errors.Is(err, cg.ErrInput) {
		t.Fatalf("strided x: %v, want ErrInput", err)
	}
	if _, err := cg.Solve(id, b, x, cg.Options{MaxIter: 3, Tol: 1e-12}); err != nil || x.Data[0] != 1 {
		t.Fatalf("contiguous: %v, x = %v", err, x.Data)
	}
}
