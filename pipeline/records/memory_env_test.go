package records

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestAvailableMemoryHonoursOverride: the limit every dpsolve command
// uses (DPSOLVE_MEMORY_LIMIT) is the one a release checks against too.
func TestAvailableMemoryHonoursOverride(t *testing.T) {
	t.Setenv("DPSOLVE_MEMORY_LIMIT", "3MiB")
	m, ok := AvailableMemory()
	assert.True(t, ok)
	assert.Equal(t, float64(3<<20), m.Bytes)
	assert.Equal(t, "DPSOLVE_MEMORY_LIMIT", m.Source)
	err := checkFits(4<<20, "the histogram", nil)
	assert.ErrorIs(t, err, ErrInput)
	assert.Contains(t, err.Error(), "DPSOLVE_MEMORY_LIMIT")
}
