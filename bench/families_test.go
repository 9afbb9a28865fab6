package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseWorkload: every family resolves at n = 256 and 1024 to a
// workload over exactly n cells, with the n-relative parameters resolved.
func TestParseWorkload(t *testing.T) {
	for _, n := range []int{256, 1024, 2048} {
		for _, f := range Families {
			w, err := ParseWorkload(f, n)
			require.NoError(t, err, "%s n=%d", f, n)
			assert.Equal(t, n, w.Domain(), "%s n=%d", f, n)
		}
	}
	w, err := ParseWorkload("wrelated:m=2n;s=n/8", 1024)
	require.NoError(t, err)
	assert.Equal(t, 2048, w.Queries())
	w, err = ParseWorkload("marginals:k=3", 1024)
	require.NoError(t, err)
	assert.Contains(t, w.Name(), "4x4x4x4x4")
	_, err = ParseWorkload("marginals:k=2", 6)
	require.Error(t, err)
	assert.Equal(t, append([]string{"prefix"}, Families...), ExpandFamilies([]string{"prefix", "families"}))
}
