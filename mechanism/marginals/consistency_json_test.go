package marginals

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/status"
)

// The wire form has Consistency's fields, in order, with the same types
// and tags — except Status, which travels as the boolean "converged" — so
// a field added to one and not the other fails here, not in a report.
func TestConsistencyWireForm(t *testing.T) {
	c, w := reflect.TypeOf(Consistency{}), reflect.TypeOf(consistencyJSON{})
	require.Equal(t, c.NumField(), w.NumField())
	for i := 0; i < c.NumField(); i++ {
		cf, wf := c.Field(i), w.Field(i)
		if cf.Name == "Status" {
			require.Equal(t, "Converged", wf.Name)
			require.Equal(t, `json:"converged"`, string(wf.Tag))
			continue
		}
		require.Equal(t, cf.Name, wf.Name)
		require.Equal(t, cf.Type, wf.Type, cf.Name)
		require.Equal(t, cf.Tag, wf.Tag, cf.Name)
	}
}

// The encoding is the one release reports carried when Converged was a
// bool field (same keys, same order), and it decodes back.
func TestConsistencyJSON(t *testing.T) {
	before := 0.5
	for _, st := range []status.Status{status.Converged, status.IterationLimit} {
		c := Consistency{Method: "m", Tolerance: 1e-9, MaxIterations: 10, Iterations: 3, Status: st,
			MaxInconsistency: 1e-12, MaxInconsistencyBeforeRounding: &before, MaxNegativity: 0, Tables: 4}
		b, err := json.Marshal(&c)
		require.NoError(t, err)
		conv := "false"
		if st == status.Converged {
			conv = "true"
		}
		require.Equal(t, `{"method":"m","tolerance":1e-9,"max_iterations":10,"iterations":3,"converged":`+conv+
			`,"least_squares_total":0,"max_inconsistency":1e-12,"max_inconsistency_before_rounding":0.5,"max_negativity":0,"tables":4}`, string(b))
		var back Consistency
		require.NoError(t, json.Unmarshal(b, &back))
		require.Equal(t, c, back)
	}
}
