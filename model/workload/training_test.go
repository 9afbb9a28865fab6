package workload

import (
	"errors"
	"testing"
)

// ParseTraining on names whose reading is known by hand, and on every
// malformed form: each is bad input, never a silent default.
func TestParseTraining(t *testing.T) {
	for spec, want := range map[string]Training{
		"prefix":                      {Spec: "prefix"},
		"momentum:0.9":                {Spec: "momentum:0.9", Momentum: 0.9},
		"prefix,cooldown:8":           {Spec: "prefix,cooldown:8", Cooldown: true, CooldownSteps: 8, CooldownFinal: 0.1},
		"momentum:0.5,cooldown:16:.2": {Spec: "momentum:0.5,cooldown:16:.2", Momentum: 0.5, Cooldown: true, CooldownSteps: 16, CooldownFinal: 0.2},
	} {
		got, err := ParseTraining(spec)
		if err != nil || got != want {
			t.Errorf("ParseTraining(%q) = %+v, %v; want %+v", spec, got, err, want)
		}
	}
	for _, spec := range []string{"", "identity", "momentum:x", "momentum", "prefix,warmup:3", "prefix,cooldown:x",
		"prefix,cooldown:4:0.1:2", "prefix,cooldown:4:y", "prefix,cooldown:4,cooldown:5"} {
		if _, err := ParseTraining(spec); !errors.Is(err, ErrInput) {
			t.Errorf("ParseTraining(%q): err %v, want bad input", spec, err)
		}
	}
}
