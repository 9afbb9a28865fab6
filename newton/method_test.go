package newton_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/newton"
)

// The methods' names are the strings the command line took and JSON
// output carried when Method was a string; they must not change, and the
// zero Method is the default.
func TestMethodNames(t *testing.T) {
	var zero newton.Method
	require.Equal(t, newton.MethodNewton, zero)
	for m, name := range map[newton.Method]string{newton.MethodNewton: "newton", newton.MethodYuan2016: "yuan2016"} {
		require.Equal(t, name, m.String())
		p, err := newton.ParseMethod(name)
		require.NoError(t, err)
		require.Equal(t, m, p)
		b, err := json.Marshal(struct{ M newton.Method }{m})
		require.NoError(t, err)
		require.JSONEq(t, `{"M":"`+name+`"}`, string(b))
		var back struct{ M newton.Method }
		require.NoError(t, json.Unmarshal(b, &back))
		require.Equal(t, m, back.M)
	}
	_, err := newton.ParseMethod("Newton")
	require.ErrorIs(t, err, newton.ErrInput)
	_, err = newton.Method(7).MarshalText()
	require.ErrorIs(t, err, newton.ErrInput)
	require.Equal(t, "Method(7)", newton.Method(7).String())
	var m newton.Method
	require.ErrorIs(t, json.Unmarshal([]byte(`"bogus"`), &m), newton.ErrInput)
}
