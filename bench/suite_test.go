package bench

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The suite's table: one row per comparison, the ratio with three digits,
// a dash and the reason where a row has none.
func TestWriteSuiteTable(t *testing.T) {
	rows := []SuiteRow{
		{Area: "dense core", Case: "prefix n=512", Versus: "fixedpoint", Metric: "s", Ours: 1.5, Peer: 6, Ratio: 0.25},
		{Area: "plan", Case: "x", Versus: "p-Identity", Metric: "error", Ours: 2, Ratio: Num(math.NaN()), Err: "peers not run"},
		{Area: "release calibration", Case: "c", Versus: "promise", Metric: "sq error", Ours: 99, Peer: 100, Ratio: 0.99, SD: 0.012},
		{Area: "release calibration", Case: "d", Versus: "promise", Metric: "sq error", Ours: 150, Peer: 100, Ratio: 1.5, SD: 0.012, Fail: "FAIL: 42 sd"},
	}
	var b strings.Builder
	require.NoError(t, WriteSuiteTable(&b, &SuiteReport{Machine: Machine{CPU: "cpu", Cores: 2, Backend: "openblas (core Zen)"}, Seconds: 83.2, CPUSeconds: 7.46, PeerCPUSeconds: 10, Rows: rows}))
	out := b.String()
	assert.Contains(t, out, "kernels openblas (core Zen)")
	assert.Contains(t, out, "; 83 s wall, 17.5 s of CPU (7.5 s dpsolve, 10.0 s the peers)")
	assert.Contains(t, out, "| dense core | prefix n=512 | fixedpoint | s | 1.5 | 6 | 0.25 |")
	assert.Contains(t, out, "| plan | x | p-Identity (peers not run) | error | 2 | — | — |")
	assert.Contains(t, out, "| release calibration | c | promise | sq error | 99 | 100 | 0.99 ± 0.012 |")
	assert.Contains(t, out, "| release calibration | d | promise | sq error | 150 | 100 | **1.5 ± 0.012 FAIL: 42 sd** |")
}
