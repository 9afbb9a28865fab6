package bench

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"runtime"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

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

// WriteMarginalsPlot writes a log-log plot of planning seconds against the
// number of attributes (PNG, SVG or PDF by extension), one line per
// objective, with a reference line proportional to the number of residual
// subsets through the last sum-plan point (the cost the closed form should
// follow).
func WriteMarginalsPlot(path string, rows []MarginalsRow) error {
	var sum, max, sumCPU, maxCPU, ref plotter.XYs
	add := func(xy *plotter.XYs, x float64, y Num) {
		if y.Valid() && y > 0 {
			*xy = append(*xy, plotter.XY{X: x, Y: float64(y)})
		}
	}
	for _, r := range rows {
		x := float64(r.Attributes)
		add(&sum, x, r.SumSeconds)
		add(&max, x, r.MaxSeconds)
		add(&sumCPU, x, r.SumCPUSeconds)
		add(&maxCPU, x, r.MaxCPUSeconds)
	}
	if len(sum) == 0 {
		return errors.New("marginals plot: no sum-plan timings")
	}
	first, last := rows[0], rows[len(rows)-1]
	for _, r := range rows {
		ref = append(ref, plotter.XY{X: float64(r.Attributes), Y: float64(last.SumSeconds) * float64(r.Residuals) / float64(last.Residuals)})
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("marginals template: planning time, all 0…%d-way marginals, size-%d attributes", first.UpTo, first.Size)
	p.X.Label.Text = "attributes"
	p.Y.Label.Text = "seconds"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	p.Legend.Top, p.Legend.Left = true, true
	ss := []series{{name: "sum (closed form), wall", xy: sum}}
	for _, s := range []series{{"sum, CPU", sumCPU}, {"max (certified barrier method), wall", max}, {"max, CPU", maxCPU}} {
		if len(s.xy) > 0 {
			ss = append(ss, s)
		}
	}
	if err := addSeries(p, ss); err != nil {
		return err
	}
	p.X.Tick.Marker = sizeTicks(ss)
	l, err := plotter.NewLine(ref)
	if err != nil {
		return err
	}
	l.Color = color.Black
	l.Dashes = []vg.Length{vg.Points(6), vg.Points(4)}
	p.Add(l)
	p.Legend.Add("proportional to the residual subsets", l)
	return p.Save(8*vg.Inch, 6*vg.Inch, path)
}
