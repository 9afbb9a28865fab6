package bench

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNumJSON(t *testing.T) {
	b, err := json.Marshal([]Num{1.5, Num(math.NaN()), Num(math.Inf(1)), 0})
	require.NoError(t, err)
	assert.Equal(t, "[1.5,null,null,0]", string(b))
	var back []Num
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, Num(1.5), back[0])
	assert.False(t, back[1].Valid())
	assert.True(t, back[3].Valid())
}

func TestMedianAndMax(t *testing.T) {
	assert.Equal(t, 2.0, median([]float64{3, 1, 2}))
	assert.Equal(t, 2.5, median([]float64{4, 1, 3, 2}))
	assert.Equal(t, 2.0, median([]float64{math.NaN(), 2, math.Inf(1)}))
	assert.True(t, math.IsNaN(median(nil)))
	assert.Equal(t, 3.0, maxFinite([]float64{1, math.NaN(), 3, math.Inf(1)}))
	assert.True(t, math.IsNaN(maxFinite([]float64{math.NaN()})))
}

// trace builds a trace from (seconds, objective) pairs.
func trace(pts ...float64) []TracePoint {
	var tr []TracePoint
	for i := 0; i+1 < len(pts); i += 2 {
		tr = append(tr, TracePoint{Seconds: pts[i], Objective: pts[i+1], GapBest: Num(math.NaN())})
	}
	return tr
}

func run(method string, rep int, secs, obj, lower float64, status string, tr []TracePoint) RunRecord {
	return RunRecord{Workload: "prefix", N: 4, Method: method, Rep: rep, Seconds: Num(secs), Objective: Num(obj),
		LowerBound: Num(lower), Gap: Num((obj - lower) / obj), Status: status, Trace: tr, GapSource: GapSource,
		DGEMMEquivalents: Num(math.NaN()), GapBest: Num(math.NaN())}
}

// The summary's arithmetic on hand-made runs whose answers are worked out
// below: L* = 99.9999 (the largest bound); the reference reaches
// GapBest ≤ 1e-4 at 0.2 s (its second iteration) and the target only with
// its last iteration (full time 0.5 s).
func TestSummarizeSpeedUpAtEqualGap(t *testing.T) {
	const L = 99.9999
	ref := run("newton", 1, 0.5, 100, L, "converged", trace(0.1, 110, 0.2, 100.005, 0.45, 100))
	// a peer that reached the target: compared with the reference's full time
	peer := run("peer", 1, 2.0, 100.0000005, 99.99, "converged", trace(1, 101, 2, 100.0000005))
	// a method that stopped at GapBest ≈ 5e-5: compared with 0.2 s
	slow := run("slow", 1, 3.0, 100.005, 99.0, "iteration_limit", trace(3, 100.005))
	failed := RunRecord{Workload: "prefix", N: 4, Method: "broken", Rep: 1, Error: "boom", Seconds: Num(math.NaN())}
	c := &Comparison{DGEMM: []DGEMMTiming{{N: 4, Seconds: 0.01}}, Runs: []RunRecord{ref, peer, slow, failed}}
	c.Summarize()

	require.Len(t, c.BestBounds, 1)
	assert.Equal(t, Num(L), c.BestBounds[0].Value)
	assert.Equal(t, "newton", c.BestBounds[0].Method)

	// per-run derived numbers
	assert.InDelta(t, 50, float64(c.Runs[0].DGEMMEquivalents), 1e-9)
	assert.InDelta(t, (100.005-L)/100.005, float64(c.Runs[2].GapBest), 1e-15)
	assert.InDelta(t, (110-L)/110, float64(c.Runs[0].Trace[0].GapBest), 1e-15)

	require.Len(t, c.Summary, 4)
	byMethod := map[string]SummaryRow{}
	for _, s := range c.Summary {
		byMethod[s.Method] = s
	}
	assert.False(t, byMethod["newton"].SpeedUp.Valid(), "no speed-up of the reference over itself")
	// peer's GapBest = (100.0000005 − 99.9999)/100.0000005 ≈ 1.005e-6 > tol, so
	// g ≈ 1.005e-6; the reference's trace first reaches it at its last iteration:
	// full time 0.5 s → 2.0/0.5 = 4.
	assert.InDelta(t, 4, float64(byMethod["peer"].SpeedUp), 1e-12)
	assert.Contains(t, byMethod["peer"].Note, "above the target gap")
	// slow's g ≈ 5.1e-5 equals the reference's GapBest after its second
	// iteration (0.2 s, objective 100.005 in both): 3/0.2 = 15
	assert.InDelta(t, 15, float64(byMethod["slow"].SpeedUp), 1e-12)
	assert.InDelta(t, (100.005-L)/100.005, float64(byMethod["slow"].SpeedUpGap), 1e-15)
	assert.Equal(t, "iteration_limit", byMethod["slow"].Status)
	assert.Equal(t, 0, byMethod["broken"].Runs)
	assert.Equal(t, 1, byMethod["broken"].Failed)
	assert.Equal(t, "boom", byMethod["broken"].Note)
	assert.False(t, byMethod["broken"].Seconds.Valid())
}

func TestTimeToGap(t *testing.T) {
	r := run("newton", 1, 1.0, 10, 9, "converged", trace(0.2, 12, 0.5, 10.5, 0.9, 10))
	L := 9.999
	r.GapBest = Num(relGap(10, L))
	for i := range r.Trace {
		r.Trace[i].GapBest = Num(relGap(r.Trace[i].Objective, L))
	}
	s, ok := timeToGap(&r, 0.2)
	assert.True(t, ok)
	assert.Equal(t, 0.2, s) // 12 → gap 0.167
	s, ok = timeToGap(&r, 0.05)
	assert.True(t, ok)
	assert.Equal(t, 0.5, s) // 10.5 → gap 0.048
	s, ok = timeToGap(&r, 1e-3)
	assert.True(t, ok)
	assert.Equal(t, 1.0, s, "the last iteration counts with the full solve time")
	s, ok = timeToGap(&r, 1e-5)
	assert.False(t, ok)
	assert.Equal(t, 1.0, s)
}

func TestSummarizeMediansOverRepetitions(t *testing.T) {
	var runs []RunRecord
	for rep, s := range []float64{3, 1, 2} {
		runs = append(runs, run("newton", rep+1, s, 100, 100-1e-7, "converged", trace(s, 100)))
		runs = append(runs, run("peer", rep+1, 10*s*float64(rep+1), 100, 100-2e-7, "converged", trace(s, 100)))
	}
	c := &Comparison{DGEMM: []DGEMMTiming{{N: 4, Seconds: 0.5}}, Runs: runs}
	c.Summarize()
	require.Len(t, c.Summary, 2)
	nt, peer := c.Summary[0], c.Summary[1]
	assert.Equal(t, 3, nt.Runs)
	assert.Equal(t, Num(2), nt.Seconds)
	assert.Equal(t, Num(4), nt.DGEMMEquivalents)
	// per-repetition speed-ups 10, 20, 30 → median 20
	assert.Equal(t, Num(20), peer.SpeedUp)
	assert.Equal(t, Num(30), peer.Seconds) // 30, 20, 60
	// worst certified gap over the runs
	assert.InDelta(t, 2e-9, float64(peer.Gap), 1e-15)
}

// The fastest peer is the one the reference beats by the least.
func TestSummarizeFastestPeer(t *testing.T) {
	c := &Comparison{DGEMM: []DGEMMTiming{{N: 4, Seconds: 1}}, Runs: []RunRecord{
		run("newton", 1, 1, 100, 100-1e-7, "converged", trace(1, 100)),
		run("fixedpoint", 1, 8, 100, 100-2e-7, "converged", trace(8, 100)),
		run("lbfgs", 1, 5, 100, 100-2e-7, "converged", trace(5, 100)),
		run("yuan2016", 1, 2, 150, 90, "iteration_limit", trace(2, 150)), // not a peer
	}}
	c.Summarize()
	require.Len(t, c.FastestPeer, 1)
	assert.Equal(t, PeerSpeedUp{Workload: "prefix", N: 4, Peer: "lbfgs", SpeedUp: 5, Gap: 1e-8}, c.FastestPeer[0])
}
