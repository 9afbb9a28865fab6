// Command dpsolve-plot draws the figures of dpsolve's benchmarks and
// experiments from the JSON reports dpsolve writes. The plotting library
// (gonum/plot, with its LaTeX, PDF, SVG and font packages) lives here and in
// bench/benchplot only, so the dpsolve binary does not carry it.
//
//	dpsolve bench … --json > report.json
//	dpsolve-plot bench --from report.json --plot time.svg --convergence-plot conv.png [--convergence prefix:1024]
//	dpsolve funcpert … --json > fp.json
//	dpsolve-plot funcpert --from fp.json --plot fig.png
//	dpsolve-plot marginals --from bench/results/marginals-scaling.json --plot marginals.png
//
// --from - reads the report from standard input. The figure's format follows
// the file's extension (.png, .svg, .pdf; funcpert draws PNG only). Exit
// status: 0 done, 1 a report or figure could not be read or written, 2 a bad
// command line.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dpsolve/dpsolve/bench"
	"github.com/dpsolve/dpsolve/bench/benchplot"
	"github.com/dpsolve/dpsolve/bench/funcpert"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// errUsage marks errors of the command line (exit status 2).
var errUsage = errors.New("usage error")

func usageErrorf(format string, a ...any) error {
	return fmt.Errorf("%w: %s", errUsage, fmt.Sprintf(format, a...))
}

const usage = `usage: dpsolve-plot <command> [flags]

commands:
  bench      time-vs-n and gap-vs-seconds plots from a dpsolve bench --json report
  funcpert   the error-vs-ε figure from a dpsolve funcpert --json result
  marginals  the planning-time plot from a marginals-scaling.json sweep (bench/results)

Run 'dpsolve-plot <command> -h' for a command's flags.
`

// run is main without os.Exit, returning the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	case "bench":
		err = plotBench(args[1:], stdin, stderr)
	case "funcpert":
		err = plotFuncpert(args[1:], stdin, stderr)
	case "marginals":
		err = plotMarginals(args[1:], stdin, stderr)
	default:
		err = usageErrorf("unknown command %q (want bench, funcpert or marginals)", args[0])
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "dpsolve-plot: %v\n", err)
		return 2
	}
	fmt.Fprintf(stderr, "dpsolve-plot: %v\n", err)
	return 1
}

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return usageErrorf("unexpected arguments: %v", fs.Args())
	}
	return nil
}

// readJSON decodes the report at path ("-": stdin) into v; what names what
// the report should be, for the error.
func readJSON(path string, stdin io.Reader, what string, v any) error {
	var b []byte
	var err error
	if path == "-" {
		b, err = io.ReadAll(stdin)
	} else {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s is not a %s: %w", path, what, err)
	}
	return nil
}

// checkFigure refuses a figure path whose directory is missing or whose
// extension cannot be drawn, before any report is read.
func checkFigure(flagName, path string, exts ...string) error {
	ext := strings.ToLower(filepath.Ext(path))
	ok := false
	for _, e := range exts {
		ok = ok || ext == e
	}
	if !ok {
		return usageErrorf("%s %q: want a %s file", flagName, path, strings.Join(exts, ", "))
	}
	if st, err := os.Stat(filepath.Dir(path)); err != nil || !st.IsDir() {
		return usageErrorf("%s %q: the directory %s does not exist", flagName, path, filepath.Dir(path))
	}
	return nil
}

func plotBench(args []string, stdin io.Reader, stderr io.Writer) error {
	fs := flag.NewFlagSet("dpsolve-plot bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("from", "", "the dpsolve bench --json report (- for stdin)")
	timePlot := fs.String("plot", "", "write the log-log time-vs-n plot to this file (.png, .svg, .pdf)")
	convPlot := fs.String("convergence-plot", "", "write the gap-vs-seconds plot to this file (.png, .svg, .pdf)")
	conv := fs.String("convergence", "", "problem of the convergence plot, WORKLOAD:N (default: first workload of the report, its largest n)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *from == "" {
		return usageErrorf("--from is required")
	}
	if *timePlot == "" && *convPlot == "" {
		return usageErrorf("nothing to draw: give --plot or --convergence-plot")
	}
	exts := []string{".png", ".svg", ".pdf"}
	for _, o := range [][2]string{{"--plot", *timePlot}, {"--convergence-plot", *convPlot}} {
		if o[1] != "" {
			if err := checkFigure(o[0], o[1], exts...); err != nil {
				return err
			}
		}
	}
	if *timePlot != "" && *timePlot == *convPlot {
		return usageErrorf("--plot and --convergence-plot name the same file %q", *timePlot)
	}
	convW, convN := "", 0
	if *conv != "" {
		w, n, ok := strings.Cut(*conv, ":")
		nn, err := strconv.Atoi(n)
		if !ok || err != nil || w == "" {
			return usageErrorf("--convergence %q: want WORKLOAD:N", *conv)
		}
		convW, convN = w, nn
	}
	var rep bench.Report
	if err := readJSON(*from, stdin, "dpsolve bench --json report", &rep); err != nil {
		return err
	}
	if c := rep.Comparison; c != nil {
		c.Summarize() // reports from older versions lack newer summary fields
		if convW == "" && len(c.Summary) > 0 {
			convW = c.Summary[0].Workload
			for _, s := range c.Summary {
				if s.Workload == convW {
					convN = max(convN, s.N)
				}
			}
		}
	}
	if *timePlot != "" {
		if err := benchplot.Time(&rep, *timePlot); err != nil {
			return err
		}
	}
	if *convPlot != "" {
		if err := benchplot.Convergence(&rep, *convPlot, convW, convN); err != nil {
			return err
		}
	}
	return nil
}

// funcpertReport is the part of dpsolve funcpert --json that the figure
// reads.
type funcpertReport struct {
	Series []struct {
		Method string    `json:"method"`
		Coeffs int       `json:"coeffs"`
		Eps    []float64 `json:"eps"`
		Mean   []float64 `json:"mean"`
		Min    []float64 `json:"min"`
		Max    []float64 `json:"max"`
		Bound  []float64 `json:"bound"`
	} `json:"series"`
}

func plotFuncpert(args []string, stdin io.Reader, stderr io.Writer) error {
	fs := flag.NewFlagSet("dpsolve-plot funcpert", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("from", "", "the dpsolve funcpert --json result (- for stdin)")
	out := fs.String("plot", "", "draw the figure into this PNG file")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *from == "" || *out == "" {
		return usageErrorf("--from and --plot are required")
	}
	if err := checkFigure("--plot", *out, ".png"); err != nil {
		return err
	}
	var r funcpertReport
	if err := readJSON(*from, stdin, "dpsolve funcpert --json result", &r); err != nil {
		return err
	}
	if len(r.Series) == 0 {
		return fmt.Errorf("%s has no series to draw", *from)
	}
	series := make([]funcpert.Series, len(r.Series))
	for i, s := range r.Series {
		n := len(s.Eps)
		if len(s.Mean) != n || len(s.Min) != n || len(s.Max) != n || (s.Bound != nil && len(s.Bound) != n) {
			return fmt.Errorf("%s: series %d (%s) has eps, mean, min, max, bound of different lengths", *from, i, s.Method)
		}
		series[i] = funcpert.Series{Method: s.Method, Coeffs: s.Coeffs, Eps: s.Eps, Mean: s.Mean, Min: s.Min, Max: s.Max, Bound: s.Bound}
	}
	return benchplot.Funcpert(series, *out)
}

func plotMarginals(args []string, stdin io.Reader, stderr io.Writer) error {
	fs := flag.NewFlagSet("dpsolve-plot marginals", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("from", "", "the sweep's JSON ({\"rows\": […]}, as bench/results/marginals-scaling.json; - for stdin)")
	out := fs.String("plot", "", "write the plot to this file (.png, .svg, .pdf)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *from == "" || *out == "" {
		return usageErrorf("--from and --plot are required")
	}
	if err := checkFigure("--plot", *out, ".png", ".svg", ".pdf"); err != nil {
		return err
	}
	var r struct {
		Rows []bench.MarginalsRow `json:"rows"`
	}
	if err := readJSON(*from, stdin, "marginals sweep", &r); err != nil {
		return err
	}
	if len(r.Rows) == 0 {
		return fmt.Errorf("%s has no rows to draw", *from)
	}
	return benchplot.Marginals(*out, r.Rows)
}
