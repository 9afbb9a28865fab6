package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/internal/testkit/budgettest"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

// The reports write their budgets with calibrate's encoding at the place
// their own rho/epsilon/delta fields had: the bytes are those the
// hand-spelled fields produced (written out here), for every kind, and the
// zero Budget writes nothing, as omitempty did.
func TestReportBudgetKeys(t *testing.T) {
	for want, b := range map[string]calibrate.Budget{
		`{"term":"a","share":0.5,"rho":0.25,"plan":"p","template":"","sigma":0,"sensitivity":0,"measurements":0,"expected_total_squared_error":0}`:                   budgettest.ZCDP(0.25),
		`{"term":"a","share":0.5,"epsilon":2,"plan":"p","template":"","sigma":0,"sensitivity":0,"measurements":0,"expected_total_squared_error":0}`:                  budgettest.PureDP(2),
		`{"term":"a","share":0.5,"epsilon":1,"delta":0.000001,"plan":"p","template":"","sigma":0,"sensitivity":0,"measurements":0,"expected_total_squared_error":0}`: budgettest.ApproxDP(1, 1e-6),
		`{"term":"a","share":0.5,"plan":"p","template":"","sigma":0,"sensitivity":0,"measurements":0,"expected_total_squared_error":0}`:                              {},
	} {
		got, err := json.Marshal(tblSplitJSON{Term: "a", Share: 0.5, Budget: b, Plan: "p"})
		require.NoError(t, err)
		assert.Equal(t, want, string(got))
	}
	// mf writes two budgets after sigma: ρ, then ε and δ, as its own
	// fields did; without --epsilon it writes none of them.
	got, err := json.Marshal(mfJSON{Sigma: 2, ZCDP: budgettest.ZCDP(0.125), Budget: budgettest.ApproxDP(1, 1e-6), Backend: "b"})
	require.NoError(t, err)
	assert.Contains(t, string(got), `"sigma":2,"rho":0.125,"epsilon":1,"delta":0.000001,"backend":"b"`)
	got, err = json.Marshal(mfJSON{Backend: "b"})
	require.NoError(t, err)
	assert.NotContains(t, string(got), "rho")
	assert.NotContains(t, string(got), "epsilon")
}
