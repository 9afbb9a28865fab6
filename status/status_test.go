package status_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/status"
)

// The text forms are the strings dpsolve's JSON output carried before
// Status was typed; they must not change.
func TestTextFormsAreTheReleasedStrings(t *testing.T) {
	for s, want := range map[status.Status]string{
		status.Unknown: "", status.Converged: "converged", status.IterationLimit: "iteration_limit",
		status.Cancelled: "cancelled", status.Stalled: "stalled", status.Failed: "failed",
	} {
		require.Equal(t, want, s.String())
		b, err := json.Marshal(struct {
			S status.Status `json:"s"`
		}{s})
		require.NoError(t, err)
		require.JSONEq(t, `{"s":"`+want+`"}`, string(b))
		var back struct {
			S status.Status `json:"s"`
		}
		require.NoError(t, json.Unmarshal(b, &back))
		require.Equal(t, s, back.S)
		p, err := status.Parse(want)
		require.NoError(t, err)
		require.Equal(t, s, p)
	}
}

func TestInvalidStatus(t *testing.T) {
	_, err := status.Parse("done")
	require.Error(t, err)
	_, err = status.Status(200).MarshalText()
	require.Error(t, err)
	require.Equal(t, "Status(200)", status.Status(200).String())
}

func TestErr(t *testing.T) {
	require.NoError(t, status.Converged.Err())
	for _, s := range []status.Status{status.Unknown, status.IterationLimit, status.Cancelled, status.Stalled, status.Failed} {
		err := s.Err()
		require.True(t, errors.Is(err, status.ErrNotConverged), "%v", s)
	}
	require.Contains(t, status.IterationLimit.Err().Error(), "iteration_limit")
}
