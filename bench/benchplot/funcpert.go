package benchplot

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"strconv"

	"github.com/dpsolve/dpsolve/bench/funcpert"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

var palette = []color.Color{
	color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, // blue
	color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, // red
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, // green
	color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}, // purple
	color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff}, // brown
}

// floor keeps values positive for the logarithmic axis.
func floor(v float64) float64 { return math.Max(v, 1e-12) }

// decades ticks every power of ten with labels like 1e-05, 0.001, 1, 100.
type decades struct{}

func (decades) Ticks(min, max float64) []plot.Tick {
	var t []plot.Tick
	for k := int(math.Floor(math.Log10(min))); k <= int(math.Ceil(math.Log10(max))); k++ {
		v := math.Pow10(k)
		if v < min*(1-1e-9) || v > max*(1+1e-9) {
			continue
		}
		t = append(t, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
	}
	return t
}

// Funcpert draws |x_priv − x*| (x_priv the minimizer of the released functions)
// against ε on log–log axes: for every coefficient count the mean over
// repetitions (solid, markers) with its min–max range (error bars) and the
// theoretical bound (dashed, same colour); the message baseline in black. The
// legend sits to the right of the axes. It writes a PNG. The series are those
// of funcpert.Run, or of dpsolve funcpert --json.
func Funcpert(series []funcpert.Series, path string) error {
	p := plot.New()
	p.Title.Text = "Functional perturbation: error of the private minimizer vs ε"
	p.X.Label.Text = "ε"
	p.Y.Label.Text = "|x_priv − x*|"
	p.X.Scale = plot.LogScale{}
	p.Y.Scale = plot.LogScale{}
	p.X.Tick.Marker = decades{}
	p.Y.Tick.Marker = decades{}
	legend := plot.NewLegend()
	legend.TextStyle.Font.Size = vg.Points(10)
	legend.Top = true
	legend.Left = true
	p.Add(plotter.NewGrid())
	ci := 0
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		if len(s.Eps) == 0 {
			continue
		}
		mean := make(plotter.XYs, len(s.Eps))
		errs := make(plotter.YErrors, len(s.Eps))
		for i := range s.Eps {
			m := floor(s.Mean[i])
			mean[i] = plotter.XY{X: s.Eps[i], Y: m}
			errs[i].Low = m - floor(s.Min[i])
			errs[i].High = floor(s.Max[i]) - m
			ymin = math.Min(ymin, floor(s.Min[i]))
			ymax = math.Max(ymax, floor(s.Max[i]))
		}
		col := color.Color(color.Black)
		label := "message perturbation (mean)"
		if s.Method == "functional" {
			col = palette[ci%len(palette)]
			ci++
			label = fmt.Sprintf("%d coefficients (mean)", s.Coeffs)
		}
		line, points, err := plotter.NewLinePoints(mean)
		if err != nil {
			return err
		}
		line.Color = col
		line.Width = vg.Points(1.5)
		points.Color = col
		points.Shape = draw.CircleGlyph{}
		if s.Method == "message" {
			points.Shape = draw.SquareGlyph{}
		}
		bars, err := plotter.NewYErrorBars(struct {
			plotter.XYer
			plotter.YErrorer
		}{mean, errs})
		if err != nil {
			return err
		}
		bars.Color = col
		p.Add(line, points, bars)
		legend.Add(label, line, points)
		if s.Bound != nil {
			bnd := make(plotter.XYs, len(s.Eps))
			for i := range s.Eps {
				bnd[i] = plotter.XY{X: s.Eps[i], Y: floor(s.Bound[i])}
				ymax = math.Max(ymax, floor(s.Bound[i]))
			}
			bl, err := plotter.NewLine(bnd)
			if err != nil {
				return err
			}
			bl.Color = col
			bl.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
			p.Add(bl)
			legend.Add(fmt.Sprintf("%d coefficients: bound", s.Coeffs), bl)
		}
	}
	if !math.IsInf(ymin, 0) {
		p.Y.Min = math.Pow(10, math.Floor(math.Log10(ymin)))
		p.Y.Max = math.Pow(10, math.Ceil(math.Log10(ymax)+0.3))
	}
	const w, h, legendW = 25 * vg.Centimeter, 13 * vg.Centimeter, 7 * vg.Centimeter
	img := vgimg.New(w, h)
	dc := draw.New(img)
	p.Draw(draw.Crop(dc, 0, -legendW, 0, 0))
	lc := draw.Crop(dc, w-legendW+vg.Points(8), 0, 0, -vg.Points(30))
	legend.Draw(lc)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
