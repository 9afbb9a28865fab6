package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/model/workload"
)

// TestFamilies: every family resolves through workload.Parse at n = 256,
// 1024 and 2048 to a workload over exactly n cells (the n-relative
// parameters and the marginals' dims are workload.Parse's, tested there).
func TestFamilies(t *testing.T) {
	for _, n := range []int{256, 1024, 2048} {
		for _, f := range families {
			w, err := workload.Parse(f, n)
			require.NoError(t, err, "%s n=%d", f, n)
			assert.Equal(t, n, w.Domain(), "%s n=%d", f, n)
		}
	}
	assert.Equal(t, append([]string{"prefix"}, families...), ExpandFamilies([]string{"prefix", "families"}))
}
