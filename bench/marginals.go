package bench

import (
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"time"

	"github.com/dpsolve/dpsolve/mechanism/marginals"
)

// MarginalsConfig describes a planning-cost sweep of the marginals
// template: all 0…K-way marginals over n attributes of one size, for each n.
type MarginalsConfig struct {
	// Attributes are the numbers of attributes n to plan (e.g. 10…100).
	Attributes []int
	// Size is every attribute's number of values (default 2) and UpTo the
	// largest marginal (default 3).
	Size, UpTo int
	// Repeat is the number of timed plans per point and objective (default
	// 3); the median is reported.
	Repeat int
	// MaxRepeat is the number of timed max-variance plans per point
	// (default Repeat).
	MaxRepeat int
	// MaxAttributes caps n for the max-variance objective (0: no cap).
	MaxAttributes int
	// Log receives one line per point (nil: none).
	Log io.Writer
}

// MarginalsRow is one point of the sweep.
type MarginalsRow struct {
	Attributes int `json:"attributes"`
	Size       int `json:"size"`
	UpTo       int `json:"upto"`
	Marginals  int `json:"marginals"`
	Residuals  int `json:"residuals"`
	// SumSeconds is the median wall time of the sum plan (closed form);
	// SumGap its certified gap to the SVD bound.
	SumSeconds Num `json:"sum_seconds"`
	SumGap     Num `json:"sum_gap"`
	// SumCPUSeconds and MaxCPUSeconds are the medians of the process CPU
	// time (user+system, all threads) per plan: on a shared machine they
	// measure the work, where wall time adds the wait for a core.
	SumCPUSeconds Num `json:"sum_cpu_seconds"`
	MaxCPUSeconds Num `json:"max_cpu_seconds"`
	// MaxSeconds, MaxSteps and MaxGap describe the max-variance plan (NaN
	// when it was not run).
	MaxSeconds Num `json:"max_seconds"`
	MaxSteps   int `json:"max_newton_steps"`
	MaxGap     Num `json:"max_gap"`
}

// MarginalsScaling plans the sweep and returns one row per n.
func MarginalsScaling(cfg MarginalsConfig) ([]MarginalsRow, error) {
	if cfg.Size == 0 {
		cfg.Size = 2
	}
	if cfg.UpTo == 0 {
		cfg.UpTo = 3
	}
	if cfg.Repeat == 0 {
		cfg.Repeat = 3
	}
	if cfg.MaxRepeat == 0 {
		cfg.MaxRepeat = cfg.Repeat
	}
	if cfg.Repeat < 1 || cfg.MaxRepeat < 1 || len(cfg.Attributes) == 0 {
		return nil, errors.New("marginals sweep: need at least one attribute count and one repetition")
	}
	var rows []MarginalsRow
	for _, n := range cfg.Attributes {
		sizes := make([]int, n)
		for i := range sizes {
			sizes[i] = cfg.Size
		}
		sets, err := marginals.UpTo(n, cfg.UpTo)
		if err != nil {
			return rows, err
		}
		ws := marginals.Weighted(sets, 1)
		row := MarginalsRow{Attributes: n, Size: cfg.Size, UpTo: cfg.UpTo, Marginals: len(sets),
			MaxSeconds: Num(math.NaN()), MaxGap: Num(math.NaN()), MaxCPUSeconds: Num(math.NaN())}
		for _, obj := range []marginals.Objective{marginals.Sum, marginals.Max} {
			if obj == marginals.Max && cfg.MaxAttributes > 0 && n > cfg.MaxAttributes {
				continue
			}
			secs := make([]float64, cfg.Repeat)
			if obj == marginals.Max {
				secs = make([]float64, cfg.MaxRepeat)
			}
			cpu := make([]float64, len(secs))
			var p *marginals.Plan
			for r := range secs {
				runtime.GC() // the previous plan's garbage is not this one's work
				c0, start := processCPUSeconds(), time.Now()
				if p, err = marginals.NewPlan(sizes, ws, obj, nil); err != nil {
					return rows, fmt.Errorf("marginals sweep, n = %d, %s: %w", n, obj, err)
				}
				secs[r], cpu[r] = time.Since(start).Seconds(), processCPUSeconds()-c0
			}
			row.Residuals = len(p.Residuals)
			if obj == marginals.Sum {
				row.SumSeconds, row.SumCPUSeconds, row.SumGap = Num(median(secs)), Num(median(cpu)), Num(p.Gap)
			} else {
				row.MaxSeconds, row.MaxCPUSeconds, row.MaxGap, row.MaxSteps = Num(median(secs)), Num(median(cpu)), Num(p.Gap), p.Iterations
			}
		}
		if cfg.Log != nil {
			fmt.Fprintf(cfg.Log, "marginals n=%d: %d residuals, sum %.4gs (cpu %.4gs), max %.4gs (cpu %.4gs, %d steps, gap %.2g)\n",
				n, row.Residuals, float64(row.SumSeconds), float64(row.SumCPUSeconds), float64(row.MaxSeconds), float64(row.MaxCPUSeconds), row.MaxSteps, float64(row.MaxGap))
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// WriteMarginalsTable writes the sweep as a Markdown table.
func WriteMarginalsTable(w io.Writer, rows []MarginalsRow) error {
	if _, err := fmt.Fprintln(w, "| attributes | marginals | residual subsets | sum plan: wall (s) | sum: CPU (s) | max plan: wall (s) | max: CPU (s) | max: Newton steps | max: certified gap |"); err != nil {
		return err
	}
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		maxS, maxC, steps, gap := "—", "—", "—", "—"
		if r.MaxSeconds.Valid() {
			maxS, maxC = fmt.Sprintf("%.4g", float64(r.MaxSeconds)), fmt.Sprintf("%.4g", float64(r.MaxCPUSeconds))
			steps, gap = fmt.Sprint(r.MaxSteps), fmt.Sprintf("%.1e", float64(r.MaxGap))
		}
		if _, err := fmt.Fprintf(w, "| %d | %d | %d | %.4g | %.4g | %s | %s | %s | %s |\n", r.Attributes, r.Marginals, r.Residuals,
			float64(r.SumSeconds), float64(r.SumCPUSeconds), maxS, maxC, steps, gap); err != nil {
			return err
		}
	}
	return nil
}
