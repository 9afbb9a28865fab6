package bench

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
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
			MaxSeconds: Num(math.NaN()), MaxGap: Num(math.NaN())}
		for _, obj := range []marginals.Objective{marginals.Sum, marginals.Max} {
			if obj == marginals.Max && cfg.MaxAttributes > 0 && n > cfg.MaxAttributes {
				continue
			}
			secs := make([]float64, cfg.Repeat)
			if obj == marginals.Max {
				secs = make([]float64, cfg.MaxRepeat)
			}
			var p *marginals.Plan
			for r := range secs {
				start := time.Now()
				if p, err = marginals.NewPlan(sizes, ws, obj, nil); err != nil {
					return rows, fmt.Errorf("marginals sweep, n = %d, %s: %w", n, obj, err)
				}
				secs[r] = time.Since(start).Seconds()
			}
			row.Residuals = len(p.Residuals)
			if obj == marginals.Sum {
				row.SumSeconds, row.SumGap = Num(median(secs)), Num(p.Gap)
			} else {
				row.MaxSeconds, row.MaxGap, row.MaxSteps = Num(median(secs)), Num(p.Gap), p.Iterations
			}
		}
		if cfg.Log != nil {
			fmt.Fprintf(cfg.Log, "marginals n=%d: %d residuals, sum %.4gs, max %.4gs (%d steps, gap %.2g)\n",
				n, row.Residuals, float64(row.SumSeconds), float64(row.MaxSeconds), row.MaxSteps, float64(row.MaxGap))
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// WriteMarginalsTable writes the sweep as a Markdown table.
func WriteMarginalsTable(w io.Writer, rows []MarginalsRow) error {
	if _, err := fmt.Fprintln(w, "| attributes | marginals | residual subsets | sum plan (s) | max plan (s) | max: Newton steps | max: certified gap |"); err != nil {
		return err
	}
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		maxS, steps, gap := "—", "—", "—"
		if r.MaxSeconds.Valid() {
			maxS, steps, gap = fmt.Sprintf("%.4g", float64(r.MaxSeconds)), fmt.Sprint(r.MaxSteps), fmt.Sprintf("%.1e", float64(r.MaxGap))
		}
		if _, err := fmt.Fprintf(w, "| %d | %d | %d | %.4g | %s | %s | %s |\n", r.Attributes, r.Marginals, r.Residuals,
			float64(r.SumSeconds), maxS, steps, gap); err != nil {
			return err
		}
	}
	return nil
}

// WriteMarginalsPlot writes a log-log plot of planning seconds against the
// number of attributes (PNG, SVG or PDF by extension), one line per
// objective, with a reference line proportional to the number of residual
// subsets through the first sum-plan point (the cost the closed form should
// follow).
func WriteMarginalsPlot(path string, rows []MarginalsRow) error {
	var sum, max, ref plotter.XYs
	for _, r := range rows {
		x := float64(r.Attributes)
		if r.SumSeconds.Valid() && r.SumSeconds > 0 {
			sum = append(sum, plotter.XY{X: x, Y: float64(r.SumSeconds)})
		}
		if r.MaxSeconds.Valid() && r.MaxSeconds > 0 {
			max = append(max, plotter.XY{X: x, Y: float64(r.MaxSeconds)})
		}
	}
	if len(sum) == 0 {
		return errors.New("marginals plot: no sum-plan timings")
	}
	first := rows[0]
	for _, r := range rows {
		ref = append(ref, plotter.XY{X: float64(r.Attributes), Y: float64(first.SumSeconds) * float64(r.Residuals) / float64(first.Residuals)})
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("marginals template: planning time, all 0…%d-way marginals, size-%d attributes", first.UpTo, first.Size)
	p.X.Label.Text = "attributes"
	p.Y.Label.Text = "seconds"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = logTicks{}, logTicks{}
	p.Legend.Top, p.Legend.Left = true, true
	ss := []series{{name: "sum (closed form)", xy: sum}}
	if len(max) > 0 {
		ss = append(ss, series{name: "max (certified barrier method)", xy: max})
	}
	if err := addSeries(p, ss); err != nil {
		return err
	}
	l, err := plotter.NewLine(ref)
	if err != nil {
		return err
	}
	l.Color = color.Black
	l.Dashes = []vg.Length{vg.Points(6), vg.Points(4)}
	p.Add(l)
	p.Legend.Add("∝ residual subsets", l)
	return p.Save(8*vg.Inch, 6*vg.Inch, path)
}
