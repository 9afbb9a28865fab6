package sdp

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/model/workload"
)

// Verify recomputes feasibility and the Newton comparison itself: for
// Eq. (2) CSDP and Newton agree to the 1e-6; for the bounded exact
// form the relaxation value is a lower bound on every baseline's J₁.
func TestVerify(t *testing.T) {
	requireCSDP(t)
	ctx := context.Background()
	w, err := workload.NewPrefix(8)
	require.NoError(t, err)
	v := w.Gram()
	for _, f := range []Form{Approx, ExactBounded} {
		fm, err := FromGram(f, v)
		require.NoError(t, err)
		res, err := Solve(ctx, fm.Problem, nil)
		require.NoError(t, err)
		ver, err := Verify(ctx, fm, v, res)
		require.NoError(t, err)
		assert.LessOrEqual(t, ver.MaxInfeasibility, 1e-6, "%v", f)
		if f == Approx {
			assert.Nil(t, ver.Exact)
			assert.LessOrEqual(t, ver.RelativeDifference, 1e-6)
			continue
		}
		require.NotNil(t, ver.Exact)
		for _, name := range []string{"identity", "h2", "wavelet"} {
			j, ok := ver.Exact.Baselines[name]
			require.True(t, ok, name)
			assert.GreaterOrEqual(t, j, ver.Exact.RelaxationValue*(1-1e-6), "%s below the relaxation's lower bound", name)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	fm, _ := FromGram(Approx, v)
	res, err := Solve(ctx, fm.Problem, nil)
	require.NoError(t, err)
	_, err = Verify(cctx, fm, v, res)
	assert.ErrorIs(t, err, context.Canceled)
}
