package bench

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWorkerPool: on a small batch the pool's results equal the
// one-at-a-time loop's bit for bit, or to 1e-12 relative where OpenBLAS's
// multi-threaded kernels (used by the loop, not by the pool's one-thread
// workers) round differently; every solve converges either way.
func TestWorkerPool(t *testing.T) {
	gs, err := poolGrams(48, 12)
	require.NoError(t, err)
	r, err := workerPool(context.Background(), gs, 3)
	require.NoError(t, err)
	t.Logf("%+v", r)
	require.Equal(t, 12, r.Solves)
	require.LessOrEqual(t, r.MaxRelDiff, 1e-12)
	require.LessOrEqual(t, r.MaxXDiff, 1e-10)
}
