package benchplot

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dpsolve/dpsolve/bench"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// gapFloor keeps gaps that round to zero drawable on a log axis.
const gapFloor = 1e-16

// series is one named line of a plot.
type series struct {
	name string
	xy   plotter.XYs
}

// Time writes a log-log plot of solve seconds against n (PNG, SVG
// or PDF by the file's extension): the median of every method and workload
// in the comparison, every backend and workload of the scaling sweep, and an
// n³ reference line through the first point of dpsolve's newton.
func Time(r *bench.Report, path string) error {
	var ss []series
	idx := map[string]int{}
	add := func(name string, n int, secs bench.Num) {
		if !secs.Valid() || secs <= 0 {
			return
		}
		if _, ok := idx[name]; !ok {
			idx[name] = len(ss)
			ss = append(ss, series{name: name})
		}
		ss[idx[name]].xy = append(ss[idx[name]].xy, plotter.XY{X: float64(n), Y: float64(secs)})
	}
	if c := r.Comparison; c != nil {
		for _, s := range c.Summary {
			add(fmt.Sprintf("%s (%s)", s.Method, s.Workload), s.N, s.Seconds)
		}
	}
	for _, s := range r.Scaling {
		add(fmt.Sprintf("newton, %s (%s), scaling", s.Backend, s.Workload), s.N, s.Seconds)
	}
	if len(ss) == 0 {
		return errors.New("time plot: no successful runs to draw")
	}
	for i := range ss {
		slices.SortFunc(ss[i].xy, func(a, b plotter.XY) int { return cmpFloat(a.X, b.X) })
	}
	ref := 0
	for i, s := range ss {
		if strings.HasPrefix(s.name, "newton") {
			ref = i
			break
		}
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range ss {
		for _, p := range s.xy {
			lo, hi = math.Min(lo, p.X), math.Max(hi, p.X)
		}
	}
	p := plot.New()
	p.Title.Text = "dpsolve bench: solve time vs n"
	if r.Comparison != nil {
		p.Title.Text += " (comparison on " + r.Machine.Backend + ")"
	}
	p.X.Label.Text = "n"
	p.Y.Label.Text = "seconds"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = sizeTicks(ss), logTicks{}
	p.Legend.Top, p.Legend.Left = true, true
	if err := addSeries(p, ss); err != nil {
		return err
	}
	if hi > lo {
		// n³ reference through the first point of the first newton series.
		p0 := ss[ref].xy[0]
		xy := plotter.XYs{{X: lo, Y: p0.Y * math.Pow(lo/p0.X, 3)}, {X: hi, Y: p0.Y * math.Pow(hi/p0.X, 3)}}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return err
		}
		l.Color = color.Black
		l.Dashes = []vg.Length{vg.Points(6), vg.Points(4)}
		p.Add(l)
		p.Legend.Add("n³ slope", l)
	}
	return p.Save(8*vg.Inch, 6*vg.Inch, path)
}

// Convergence writes gap to the best certified bound (log scale)
// against seconds for every method's run on one problem (the repetition
// with the median time), so linear and quadratic convergence can be told
// apart.
func Convergence(r *bench.Report, path, workload string, n int) error {
	c := r.Comparison
	if c == nil {
		return errors.New("convergence plot: no comparison was run")
	}
	var ss []series
	var methods []string
	byMethod := map[string][]*bench.RunRecord{}
	for i := range c.Runs {
		x := &c.Runs[i]
		if x.Workload != workload || x.N != n || x.Error != "" || len(x.Trace) == 0 {
			continue
		}
		if byMethod[x.Method] == nil {
			methods = append(methods, x.Method)
		}
		byMethod[x.Method] = append(byMethod[x.Method], x)
	}
	for _, m := range methods {
		runs := byMethod[m]
		slices.SortFunc(runs, func(a, b *bench.RunRecord) int { return cmpFloat(float64(a.Seconds), float64(b.Seconds)) })
		run := runs[(len(runs)-1)/2]
		name := m
		if m == "yuan2016" {
			name += " (θ-regularized objective)"
		}
		s := series{name: name}
		for _, tp := range run.Trace {
			if tp.GapBest.Valid() {
				s.xy = append(s.xy, plotter.XY{X: tp.Seconds, Y: math.Max(float64(tp.GapBest), gapFloor)})
			}
		}
		if len(s.xy) > 0 {
			ss = append(ss, s)
		}
	}
	if len(ss) == 0 {
		return fmt.Errorf("convergence plot: no traced runs of %s at n = %d", workload, n)
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s, n = %d: relative gap to the best certified bound", workload, n)
	p.X.Label.Text = "seconds"
	p.Y.Label.Text = "(F − L*) / F"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	p.X.Min = 0
	p.Legend.Top = true
	if err := addSeries(p, ss); err != nil {
		return err
	}
	// head room above the data for the legend (5 lines ≈ 1.5 decades)
	p.Y.Max *= math.Pow(10, 0.3*float64(len(ss)+1))
	return p.Save(8*vg.Inch, 6*vg.Inch, path)
}

// Marginals writes a log-log plot of planning seconds against the
// number of attributes (PNG, SVG or PDF by extension), one line per
// objective, with a reference line proportional to the number of residual
// subsets through the last sum-plan point (the cost the closed form should
// follow).
func Marginals(path string, rows []bench.MarginalsRow) error {
	var sum, max, sumCPU, maxCPU, ref plotter.XYs
	add := func(xy *plotter.XYs, x float64, y bench.Num) {
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

// logTicks marks every power of ten with a label like 1e-08 and the
// multiples 2…9 in between without one.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		v := math.Pow(10, e)
		if v >= lo && v <= hi {
			ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
		}
		for k := 2.0; k < 10; k++ {
			if w := k * v; w >= lo && w <= hi {
				ticks = append(ticks, plot.Tick{Value: w})
			}
		}
	}
	return ticks
}

// sizeTicks labels the sizes n that appear in the series.
func sizeTicks(ss []series) plot.ConstantTicks {
	var ns []float64
	for _, s := range ss {
		for _, p := range s.xy {
			if !slices.Contains(ns, p.X) {
				ns = append(ns, p.X)
			}
		}
	}
	slices.Sort(ns)
	ticks := make(plot.ConstantTicks, len(ns))
	for i, n := range ns {
		ticks[i] = plot.Tick{Value: n, Label: strconv.Itoa(int(n))}
	}
	return ticks
}

func addSeries(p *plot.Plot, ss []series) error {
	args := make([]any, 0, 2*len(ss))
	for _, s := range ss {
		args = append(args, s.name, s.xy)
	}
	return plotutil.AddLinePoints(p, args...)
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
