package bench

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The gate on synthetic rows: every verdict, and only the ones that must
// fail the gate do.
func TestGate(t *testing.T) {
	nan := Num(math.NaN())
	timed := func(c string, ratio Num) SuiteRow {
		return SuiteRow{Area: "dense core", Case: c, Versus: "peer", Metric: "s", Ratio: ratio}
	}
	exact := func(c string, ratio Num) SuiteRow {
		return SuiteRow{Area: "plan", Case: c, Versus: "reference", Metric: "error", Ratio: ratio}
	}
	cpu := func(c string, ratio Num) SuiteRow {
		return SuiteRow{Area: "plan", Case: c, Versus: "marginals", Metric: "CPU s", Ratio: ratio}
	}
	cal := func(c string, ratio Num, promise float64, fail string) SuiteRow {
		return SuiteRow{Area: "release calibration", Case: c, Versus: "promise", Metric: "sq error", Peer: promise, Ratio: ratio, SD: 0.02, Fail: fail}
	}
	baseline := []SuiteRow{
		timed("better", 0.5), timed("equal", 0.5), timed("worse within noise", 0.5), timed("worse beyond noise", 0.5),
		timed("missing", 0.5), timed("missing without ratio", nan), timed("lost", 0.5),
		exact("exact equal", 1), exact("exact worse", 1), exact("exact better", 1.2), exact("exact within rounding", 1),
		cpu("cpu within", 1), cpu("cpu worse", 1),
		cal("cal closer", 1.03, 100, ""), cal("cal further", 1.01, 100, ""), cal("cal fails", 1.01, 100, ""), cal("cal promise grew", 1, 100, ""),
	}
	current := []SuiteRow{
		timed("better", 0.3), timed("equal", 0.5), timed("worse within noise", 0.9), timed("worse beyond noise", 1.01),
		timed("lost", nan), timed("new", 0.7),
		exact("exact equal", 1), exact("exact worse", 1.001), exact("exact better", 1), exact("exact within rounding", 1+1e-9),
		cpu("cpu within", 1.9), cpu("cpu worse", 2.1),
		cal("cal closer", 1.01, 100, ""), cal("cal further", 0.97, 100, ""), cal("cal fails", 1.2, 100, "FAIL: 10 sd"), cal("cal promise grew", 1, 101, ""),
	}
	rows := Gate(baseline, current, 2)
	want := map[string]struct {
		verdict   string
		regressed bool
	}{
		"better": {"better", false}, "equal": {"equal", false}, "worse within noise": {"worse within noise", false},
		"worse beyond noise": {"WORSE (×2.02)", true}, "lost": {"lost its ratio", true}, "new": {"new", false},
		"missing": {"missing", true}, "missing without ratio": {"missing", false},
		"exact equal": {"equal", false}, "exact worse": {"WORSE (×1.001)", true}, "exact better": {"better", false},
		"exact within rounding": {"worse within noise", false},
		"cpu within":            {"worse within noise", false}, "cpu worse": {"WORSE (×2.1)", true},
		"cal closer": {"better", false}, "cal further": {"worse within noise", false}, "cal fails": {"fails its own check", true},
		"cal promise grew": {"WORSE: the promised error grew 100 → 101", true},
	}
	require.Len(t, rows, len(want))
	for _, g := range rows {
		w, ok := want[g.Case]
		require.True(t, ok, g.Case)
		assert.Equal(t, w.verdict, g.Verdict, g.Case)
		assert.Equal(t, w.regressed, g.Regressed, g.Case)
	}
	// The run's order, then the baseline's rows it lacks.
	assert.Equal(t, "better", rows[0].Case)
	assert.Equal(t, "missing", rows[len(rows)-2].Case)
	assert.Equal(t, "missing without ratio", rows[len(rows)-1].Case)

	var b strings.Builder
	n, err := WriteGateTable(&b, rows)
	require.NoError(t, err)
	assert.Equal(t, 7, n)
	assert.Contains(t, b.String(), "| dense core | worse beyond noise | peer | 0.5 | 1.01 | ×2 | **WORSE (×2.02)** |")
	assert.Contains(t, b.String(), "| dense core | missing | peer | 0.5 | — | — | **missing** |")
	assert.Contains(t, b.String(), "| plan | cpu within | marginals | 1 | 1.9 | ×2 | worse within noise |")
	assert.Contains(t, b.String(), "| release calibration | cal fails | promise | 1.01 | 1.2 | 1 ± 0.08 (4 sd) | **fails its own check** |")

	// A run compared with itself: nothing regressed.
	for _, g := range Gate(current, current, 2) {
		assert.Equal(t, g.Case == "cal fails", g.Regressed, g.Case)
	}
}

// A saved report reads back with its NaN ratios.
func TestSuiteReportJSON(t *testing.T) {
	rep := SuiteReport{Machine: Machine{CPU: "cpu"}, Seconds: 80, CPUSeconds: 20,
		Rows: []SuiteRow{{Area: "a", Case: "c", Versus: "v", Metric: "s", Ours: 1, Ratio: Num(math.NaN()), Err: "no peer"},
			{Area: "r", Case: "c", Versus: "v", Metric: "sq error", Ours: 1, Peer: 1, Ratio: 1, SD: 0.01}}}
	b, err := json.Marshal(rep)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"ratio":null`)
	var back SuiteReport
	require.NoError(t, json.Unmarshal(b, &back))
	assert.True(t, math.IsNaN(float64(back.Rows[0].Ratio)))
	assert.Equal(t, rep.Rows[1], back.Rows[1])
	assert.Equal(t, "cpu", back.Machine.CPU)
}
