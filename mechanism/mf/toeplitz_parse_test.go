package mf

import (
	"strings"
	"testing"
)

// ParseToeplitzWorkload reads names through workload.ParseTraining: β as
// written, a cooldown refused with the families that take it, a β outside
// [0, 1) and any malformed name bad input.
func TestParseToeplitzWorkloadDelegates(t *testing.T) {
	for spec, beta := range map[string]float64{"prefix": 0, "momentum:0.9": 0.9, "momentum:0": 0} {
		w, err := ParseToeplitzWorkload(spec)
		if err != nil || w.Beta != beta || w.Name != spec {
			t.Errorf("ParseToeplitzWorkload(%q) = %+v, %v; want β = %v", spec, w, err, beta)
		}
	}
	if _, err := ParseToeplitzWorkload("momentum:0.9,cooldown:10"); !errorsIsInput(err) || !strings.Contains(err.Error(), "non-Toeplitz") {
		t.Errorf("cooldown: %v, want the non-Toeplitz refusal", err)
	}
	for _, spec := range []string{"momentum:1", "momentum:-0.1", "momentum:x", "identity", "prefix,warmup:3", ""} {
		if _, err := ParseToeplitzWorkload(spec); !errorsIsInput(err) {
			t.Errorf("ParseToeplitzWorkload(%q): err %v, want bad input", spec, err)
		}
	}
}
