package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dpsolve/dpsolve/internal/testkit/budgettest"
)

// TestPrivacyFor: pure ε-DP is met by Laplace noise (L1 sensitivity, Pure);
// (ε,δ)-DP and ρ-zCDP by Gaussian noise (L2 sensitivity, Gaussian).
func TestPrivacyFor(t *testing.T) {
	assert.Equal(t, Pure, PrivacyFor(budgettest.PureDP(1)))
	assert.Equal(t, Gaussian, PrivacyFor(budgettest.ApproxDP(1, 1e-6)))
	assert.Equal(t, Gaussian, PrivacyFor(budgettest.ZCDP(0.5)))
}
