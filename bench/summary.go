package bench

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// SummaryRow aggregates the repetitions of one method on one problem.
type SummaryRow struct {
	Workload string `json:"workload"`
	N        int    `json:"n"`
	Method   string `json:"method"`
	// Runs counts successful runs, Failed the others.
	Runs   int `json:"runs"`
	Failed int `json:"failed"`
	// Seconds, DGEMMEquivalents, Objective and Iterations are medians.
	Seconds          Num `json:"seconds"`
	DGEMMEquivalents Num `json:"dgemm_equivalents"`
	Objective        Num `json:"objective"`
	Iterations       Num `json:"iterations"`
	// Gap and GapBest are the largest (worst) over the runs; Gap is
	// certified by newton.Certificate on each returned X.
	Gap     Num `json:"gap"`
	GapBest Num `json:"gap_best"`
	// Status is the runs' stop reason ("a/b" when they differ).
	Status string `json:"status"`
	// SpeedUp is the median over repetitions of T_method / T_reference(g),
	// the reference method's time to reach GapBest ≤ g in the same
	// repetition, g = max(this run's GapBest, Tol): how many times faster the
	// reference (dpsolve's newton) reaches the gap this method reached.
	SpeedUp Num `json:"speedup"`
	// SpeedUpGap is the median g.
	SpeedUpGap Num `json:"speedup_gap"`
	// Phases is the median DGEMM-equivalents per phase over the runs
	// (methods that report phases: newton).
	Phases map[string]Num `json:"phases,omitempty"`
	// Note explains a caveat (a method that stopped before the target, a
	// reference that never reached the method's gap, an error).
	Note string `json:"note,omitempty"`
}

type problemKey struct {
	workload string
	n        int
}

// Summarize (re)computes everything derived from Runs and DGEMM: the runs'
// DGEMM-equivalents and GapBest (traces included), BestBounds, Summary and
// FastestPeer. Compare calls it; call it again after loading an older
// report. An empty Reference means "newton", a zero Tol 1e-8.
func (c *Comparison) Summarize() {
	if c.Reference == "" {
		c.Reference = "newton"
	}
	if c.Tol == 0 {
		c.Tol = 1e-8
	}
	cfg := Config{Reference: c.Reference, Tol: c.Tol}
	c.BestBounds, c.Summary, c.FastestPeer = nil, nil, nil
	dgemm := map[int]float64{}
	for _, d := range c.DGEMM {
		dgemm[d.N] = float64(d.Seconds)
	}
	best := map[problemKey]*BestBound{}
	var keys []problemKey
	for i := range c.Runs {
		r := &c.Runs[i]
		k := problemKey{r.Workload, r.N}
		if best[k] == nil {
			best[k] = &BestBound{Workload: r.Workload, N: r.N, Value: Num(math.NaN())}
			keys = append(keys, k)
		}
		if r.ok() && (!best[k].Value.Valid() || r.LowerBound > best[k].Value) {
			best[k].Value, best[k].Method = r.LowerBound, r.Method
		}
	}
	for _, k := range keys {
		c.BestBounds = append(c.BestBounds, *best[k])
	}
	for i := range c.Runs {
		r := &c.Runs[i]
		if s, ok := dgemm[r.N]; ok && r.Seconds.Valid() {
			r.DGEMMEquivalents = Num(float64(r.Seconds) / s)
			if len(r.Phases) > 0 {
				r.PhaseDGEMMEquivalents = make(map[string]Num, len(r.Phases))
				for name, secs := range r.Phases {
					r.PhaseDGEMMEquivalents[name] = Num(secs / s)
				}
			}
		}
		L := float64(best[problemKey{r.Workload, r.N}].Value)
		if r.ok() {
			r.GapBest = Num(relGap(float64(r.Objective), L))
		}
		for j := range r.Trace {
			r.Trace[j].GapBest = Num(relGap(r.Trace[j].Objective, L))
		}
	}

	type rowKey struct {
		problemKey
		method string
	}
	groups := map[rowKey][]*RunRecord{}
	var order []rowKey
	ref := map[problemKey]map[int]*RunRecord{} // reference run per problem and repetition
	for i := range c.Runs {
		r := &c.Runs[i]
		k := rowKey{problemKey{r.Workload, r.N}, r.Method}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
		if r.Method == cfg.Reference && r.ok() {
			if ref[k.problemKey] == nil {
				ref[k.problemKey] = map[int]*RunRecord{}
			}
			ref[k.problemKey][r.Rep] = r
		}
	}
	fastest := map[problemKey]int{} // index into c.FastestPeer
	for _, k := range order {
		row := summarizeGroup(groups[k], ref[k.problemKey], cfg)
		c.Summary = append(c.Summary, row)
		if !slices.Contains(PeerNames, row.Method) || !row.SpeedUp.Valid() {
			continue
		}
		ps := PeerSpeedUp{Workload: row.Workload, N: row.N, Peer: row.Method, SpeedUp: row.SpeedUp, Gap: row.SpeedUpGap}
		if i, seen := fastest[k.problemKey]; !seen {
			fastest[k.problemKey] = len(c.FastestPeer)
			c.FastestPeer = append(c.FastestPeer, ps)
		} else if ps.SpeedUp < c.FastestPeer[i].SpeedUp {
			c.FastestPeer[i] = ps
		}
	}
}

func summarizeGroup(runs []*RunRecord, ref map[int]*RunRecord, cfg Config) SummaryRow {
	r0 := runs[0]
	row := SummaryRow{Workload: r0.Workload, N: r0.N, Method: r0.Method}
	var secs, deq, obj, its, gap, gapBest, speed, speedGap []float64
	phases := map[string][]float64{} // DGEMM-equivalents per phase, over the runs
	var statuses, notes []string
	addNote := func(s string) {
		if !slices.Contains(notes, s) {
			notes = append(notes, s)
		}
	}
	for _, r := range runs {
		if !r.ok() {
			row.Failed++
			addNote(r.Error)
			continue
		}
		row.Runs++
		secs = append(secs, float64(r.Seconds))
		deq = append(deq, float64(r.DGEMMEquivalents))
		for name, x := range r.PhaseDGEMMEquivalents {
			phases[name] = append(phases[name], float64(x))
		}
		obj = append(obj, float64(r.Objective))
		its = append(its, float64(r.Iterations))
		gap = append(gap, float64(r.Gap))
		gapBest = append(gapBest, float64(r.GapBest))
		if !slices.Contains(statuses, r.Status) {
			statuses = append(statuses, r.Status)
		}
		if r.Method == cfg.Reference {
			continue
		}
		if float64(r.GapBest) > cfg.Tol {
			addNote(fmt.Sprintf("stopped (%s) above the target gap %.0e", r.Status, cfg.Tol))
		}
		rr := ref[r.Rep]
		if rr == nil {
			continue
		}
		g := math.Max(float64(r.GapBest), cfg.Tol)
		t, reached := timeToGap(rr, g)
		if !reached {
			addNote(fmt.Sprintf("%s stopped at gap %.1e, above this method's %.1e: speed-up against its full time", cfg.Reference, float64(rr.GapBest), g))
		}
		speed = append(speed, float64(r.Seconds)/t)
		speedGap = append(speedGap, g)
	}
	row.Seconds, row.DGEMMEquivalents = Num(median(secs)), Num(median(deq))
	if len(phases) > 0 {
		row.Phases = make(map[string]Num, len(phases))
		for name, xs := range phases {
			row.Phases[name] = Num(median(xs))
		}
	}
	row.Objective, row.Iterations = Num(median(obj)), Num(median(its))
	row.Gap, row.GapBest = Num(maxFinite(gap)), Num(maxFinite(gapBest))
	row.SpeedUp, row.SpeedUpGap = Num(median(speed)), Num(median(speedGap))
	row.Status = strings.Join(statuses, "/")
	row.Note = strings.Join(notes, "; ")
	return row
}

// timeToGap returns when the run first reached GapBest ≤ g: the end of that
// iteration from its trace, or its full time when that is the last iteration
// or when only the final X reaches it; reached is false if it never did (the
// full time is returned).
func timeToGap(r *RunRecord, g float64) (seconds float64, reached bool) {
	for k, tp := range r.Trace {
		if float64(tp.GapBest) <= g {
			if k == len(r.Trace)-1 {
				return float64(r.Seconds), true
			}
			return tp.Seconds, true
		}
	}
	return float64(r.Seconds), float64(r.GapBest) <= g
}

// relGap is (f − L)/f, NaN when either is missing.
func relGap(f, L float64) float64 {
	if math.IsNaN(f) || math.IsNaN(L) || !(f > 0) {
		return math.NaN()
	}
	return (f - L) / f
}
