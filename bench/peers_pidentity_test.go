//go:build !purego

package bench

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/mechanism/lrm"
	"github.com/dpsolve/dpsolve/model/workload"
)

// explicitPIdentityPhi is tr(G (LᵀL)⁻¹) for L = [I; Θ]·D⁻¹, D = diag(1 +
// column sums of |Θ|), by forming L and inverting LᵀL: a third evaluation,
// independent of both the peer's and lrm's Woodbury code.
func explicitPIdentityPhi(t *testing.T, g mat.Symmetric, theta *mat.Dense) float64 {
	p, n := theta.Dims()
	l := mat.NewDense(n+p, n, nil)
	for j := 0; j < n; j++ {
		d := 1.0
		for i := 0; i < p; i++ {
			v := theta.At(i, j)
			require.GreaterOrEqual(t, v, 0.0, "Θ must be non-negative")
			d += v
		}
		l.Set(j, j, 1/d)
		for i := 0; i < p; i++ {
			l.Set(n+i, j, theta.At(i, j)/d)
		}
	}
	var ltl, inv, prod mat.Dense
	ltl.Mul(l.T(), l)
	require.NoError(t, inv.Inverse(&ltl))
	prod.Mul(g, &inv)
	return mat.Trace(&prod)
}

// lrm's p-Identity start against HDMM's formulation run by scipy
// (L-BFGS-B with Θ ≥ 0, its own random start) on the same WRange workloads:
// both are local optima of a non-convex problem, so they need not agree
// exactly. lrm's gain over Identity across five seeds of its start spans
// 1.1% at n = 256 (2.746 to 2.777; the peer's 2.767), so lrm must be within
// 2% of the peer or better (measured 0.2% at n = 128 and 0.4% at 256), and
// the peer's reported objective must match an explicit evaluation of its Θ.
func TestLRMPIdentityAgainstPeer(t *testing.T) {
	peers := newTestPeers(t)
	for _, n := range []int{128, 256} {
		wl, err := workload.NewWRange(n, n, 1)
		require.NoError(t, err)
		w := wl.Matrix()
		var g mat.SymDense
		g.SymOuterK(1, w.T())
		res, err := lrm.Solve(context.Background(), w, nil)
		require.NoError(t, err)
		require.Equal(t, lrm.StartPIdentity, res.Start, "n=%d: WRange takes the p-Identity start", n)
		peer, err := peers.pIdentity(context.Background(), &g, res.PIdentityRows, 500, 0)
		require.NoError(t, err)
		direct := explicitPIdentityPhi(t, &g, peer.Theta)
		// Both sides sum O(n) terms of size O(‖G‖); inversion of LᵀL with
		// condition number κ loses κ·ε: 1e-8 relative is generous.
		assert.InDelta(t, 1, peer.Objective/direct, 1e-8, "n=%d: the peer's objective", n)
		assert.LessOrEqual(t, res.PIdentityObjective, 1.02*direct, "n=%d: lrm vs the scipy peer", n)
		t.Logf("n=%d p=%d: lrm Φ %.6g (%d L-BFGS its, %.3f s; returned Φ %.6g), scipy peer Φ %.6g (%d its, %.3f s, %s): ratio %.4f",
			n, res.PIdentityRows, res.PIdentityObjective, res.PIdentityIterations, res.Seconds, res.Objective,
			direct, peer.Iterations, peer.Seconds, peer.Status, res.PIdentityObjective/direct)
	}
}
