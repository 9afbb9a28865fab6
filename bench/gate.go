package bench

import (
	"fmt"
	"io"
	"math"
)

// SuiteReport is one run of the suite as dpsolve bench --suite --json
// saves it: the machine, the run's wall seconds, the CPU seconds of
// dpsolve's process and of the Python peers' processes, and its rows.
type SuiteReport struct {
	Machine        Machine    `json:"machine"`
	Seconds        float64    `json:"seconds"`
	CPUSeconds     float64    `json:"cpu_seconds"`
	PeerCPUSeconds float64    `json:"peer_cpu_seconds"`
	Rows           []SuiteRow `json:"rows"`
}

// DefaultTimedFactor is the factor by which a wall-timed row's ratio ("s")
// may grow between two runs before the gate calls it a regression. The
// timed rows are ratios of two timings in one run, so a uniformly slower
// machine cancels out, but on a shared machine each side waits for a core
// on its own: over nine runs of the suite on the 2-core Intel machine at a
// load of 9–15 (2026-12-03), the largest ratio of a wall-timed row was
// 5.7× its smallest (prefix n=512 against the fixed point; the others
// 3.6–4.5×), so 6× is the least that does not flag that noise. On a quiet
// machine, measure a few runs and pass a smaller --timed-factor.
const DefaultTimedFactor = 6.0

// cpuFactor is the same allowance for a row timed in this process's CPU
// seconds ("CPU s"), which waiting for a core does not inflate: the
// portfolio row (25 ms a side) spread 1.36× over five runs at load 11–13
// (cache and core contention remain); 2× leaves a margin over that.
const cpuFactor = 2.0

// errorTolerance is the relative change an error row's ratio (and a
// calibration row's promised error) may show before the gate calls it
// worse: both sides are deterministic objectives, equal to ~1e-12 between
// runs on one machine; 1e-6 leaves room for another machine's kernels.
const errorTolerance = 1e-6

// GateRow is one row of a suite run compared with a baseline run: the two
// ratios, the noise the comparison allows, and the verdict ("better",
// "equal", "worse within noise", "WORSE", "missing", "new", "lost its
// ratio", "fails its own check"). Regressed is set for the verdicts that
// fail the gate.
type GateRow struct {
	Area, Case, Versus, Metric string
	Baseline, Current          Num
	Allowed, Verdict           string
	Regressed                  bool
}

// Gate compares the rows of a run with those of a baseline run, matched by
// area, case and versus, in the run's order followed by the baseline's
// rows the run lacks. A wall-timed row ("s") regressed when its ratio grew
// by more than timedFactor, a CPU-timed one ("CPU s") by more than
// cpuFactor; an error row when it grew by more than a relative
// errorTolerance; a calibration row when it fails its own check (its
// ratio outside calibrationSDs of its sd from 1) or its promised error
// grew by more than errorTolerance. A row of the baseline with a ratio
// that the run lacks, or that has none in the run, regressed too (the
// comparison can no longer be made); a new row did not.
func Gate(baseline, current []SuiteRow, timedFactor float64) []GateRow {
	key := func(r SuiteRow) string { return r.Area + "\x00" + r.Case + "\x00" + r.Versus }
	base := map[string]SuiteRow{}
	for _, r := range baseline {
		base[key(r)] = r
	}
	seen := map[string]bool{}
	var out []GateRow
	for _, c := range current {
		seen[key(c)] = true
		g := GateRow{Area: c.Area, Case: c.Case, Versus: c.Versus, Metric: c.Metric, Current: c.Ratio, Baseline: Num(math.NaN())}
		b, ok := base[key(c)]
		if ok {
			g.Baseline = b.Ratio
		}
		judge(&g, b, c, ok, timedFactor)
		out = append(out, g)
	}
	for _, b := range baseline {
		if seen[key(b)] {
			continue
		}
		g := GateRow{Area: b.Area, Case: b.Case, Versus: b.Versus, Metric: b.Metric, Baseline: b.Ratio, Current: Num(math.NaN()),
			Allowed: "—", Verdict: "missing"}
		g.Regressed = !math.IsNaN(float64(b.Ratio))
		out = append(out, g)
	}
	return out
}

// judge sets g's tolerance and verdict for the run's row c against the
// baseline's row b (inBase: b exists).
func judge(g *GateRow, b, c SuiteRow, inBase bool, timedFactor float64) {
	cr, br := float64(c.Ratio), float64(b.Ratio)
	switch c.Metric {
	case "s":
		g.Allowed = fmt.Sprintf("×%.3g", timedFactor)
	case "CPU s":
		g.Allowed = fmt.Sprintf("×%.3g", cpuFactor)
	case "sq error":
		g.Allowed = fmt.Sprintf("1 ± %.2g (%d sd)", calibrationSDs*c.SD, calibrationSDs)
	default:
		g.Allowed = fmt.Sprintf("×(1+%.0e)", errorTolerance)
	}
	switch {
	case c.Fail != "":
		g.Verdict, g.Regressed = "fails its own check", true
	case !inBase:
		g.Verdict = "new"
	case math.IsNaN(cr):
		g.Verdict, g.Regressed = "lost its ratio", !math.IsNaN(br)
		if !g.Regressed {
			g.Verdict = "no ratio in either run"
		}
	case math.IsNaN(br):
		g.Verdict = "new ratio"
	case c.Metric == "sq error":
		// The ratio's target is 1; its own check passed. The promise
		// itself (the plan's error at this budget) must not grow.
		switch {
		case c.Peer > b.Peer*(1+errorTolerance):
			g.Verdict, g.Regressed = fmt.Sprintf("WORSE: the promised error grew %.6g → %.6g", b.Peer, c.Peer), true
		case math.Abs(cr-1) > math.Abs(br-1):
			g.Verdict = "worse within noise"
		case math.Abs(cr-1) < math.Abs(br-1):
			g.Verdict = "better"
		default:
			g.Verdict = "equal"
		}
	default:
		limit := 1 + errorTolerance
		switch c.Metric {
		case "s":
			limit = timedFactor
		case "CPU s":
			limit = cpuFactor
		}
		switch q := cr / br; {
		case q > limit:
			g.Verdict, g.Regressed = fmt.Sprintf("WORSE (×%.4g)", q), true
		case q > 1:
			g.Verdict = "worse within noise"
		case q < 1:
			g.Verdict = "better"
		default:
			g.Verdict = "equal"
		}
	}
}

// WriteGateTable writes the comparison with the baseline as a Markdown
// table and returns the number of rows that regressed.
func WriteGateTable(w io.Writer, rows []GateRow) (int, error) {
	fmt.Fprintln(w, "| area | case | versus | baseline ratio | ratio | allowed | verdict |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---|---|")
	regressed := 0
	num := func(v Num) string {
		if math.IsNaN(float64(v)) {
			return "—"
		}
		return fmt.Sprintf("%.4g", float64(v))
	}
	for _, g := range rows {
		v := g.Verdict
		if g.Regressed {
			regressed++
			v = "**" + v + "**"
		}
		if _, err := fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", g.Area, g.Case, g.Versus, num(g.Baseline), num(g.Current), g.Allowed, v); err != nil {
			return regressed, err
		}
	}
	return regressed, nil
}
