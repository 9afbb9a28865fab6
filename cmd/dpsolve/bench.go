package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dpsolve/dpsolve/bench"
	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/newton"
)

func init() {
	register(&command{
		name:    "bench",
		summary: "benchmark the optimizer against peers, its scaling in n, and the dense kernels",
		run:     runBench,
	})
}

// benchFlags holds the parsed command line of dpsolve bench.
type benchFlags struct {
	workloads, ns, methods         string
	peers, suite                   bool
	python                         string
	peerTimeout                    time.Duration
	repeat, threads, scalingRepeat int
	tol                            float64
	csv, md, plot, convPlot, conv  string
	saveX                          string
	compare                        bool
	scaling, large                 bool
	scalingNs, backends            string
	puregoMaxN                     int
	kernels                        bool
	kernelNs                       string
	jsonOut, quiet                 bool
	from                           string
	mf                             string
	baseline                       string
	timedFactor                    float64
}

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f benchFlags
	fs := newFlagSet("bench", stderr)
	f.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := f.refusePlots(); err != nil {
		return err
	}
	if err := checkOutputs([]string{f.from, f.baseline}, fileOut("--csv", f.csv), fileOut("--md", f.md)); err != nil {
		return err
	}
	if f.baseline != "" && !f.suite {
		return usageErrorf("--baseline compares a suite run: it needs --suite")
	}
	if !(f.timedFactor > 1) || math.IsInf(f.timedFactor, 0) {
		return usageErrorf("--timed-factor must be a finite number above 1, got %g", f.timedFactor)
	}
	if f.from != "" {
		return rerenderBench(f, stdout)
	}
	if f.suite {
		return runSuite(ctx, f, stdout, stderr)
	}
	if f.mf != "" {
		return runMFBench(ctx, f.mf, f.peers, f.python, f.peerTimeout, f.md, stdout, stderr)
	}
	p, err := f.plan()
	if err != nil {
		return err
	}
	if f.threads > 0 {
		for _, b := range blas.Backends() {
			b.SetThreads(f.threads)
		}
	}
	rep := &bench.Report{Machine: bench.DescribeMachine(), Tol: f.tol, Repeat: f.repeat, Notes: []string{}}
	logw := stderr // progress
	if f.quiet {
		logw = io.Discard
	}
	fmt.Fprintf(logw, "dpsolve bench on %s, %d cores, kernels %s\n", rep.Machine.CPU, rep.Machine.Cores, rep.Machine.Backend)
	runErr, err := f.run(ctx, p, rep, logw, stderr)
	if err != nil {
		return err
	}
	if err := writeBenchOutputs(rep, f, stdout); err != nil {
		return err
	}
	if runErr != nil {
		return fmt.Errorf("stopped early: %w", runErr)
	}
	return nil
}

// register defines bench's flags on fs.
func (f *benchFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.workloads, "workload", "prefix,allrange", "comma-separated built-in workloads")
	fs.StringVar(&f.ns, "n", "256,512,1024,2048", "comma-separated domain sizes for the comparison")
	fs.StringVar(&f.methods, "methods", "newton,yuan2016", "dpsolve methods to compare (newton, yuan2016)")
	fs.BoolVar(&f.suite, "suite", false, "run only the standing side-by-side suite (dense core, DP-MF, plans against their peers and references, releases' calibration; the Python peers when --python runs) and print one table of ratios with the machine's kernels (--json: the report to save as a --baseline); exit status 3 when a row fails its own check")
	fs.BoolVar(&f.peers, "peers", false, "also run the Python peers (dual fixed point, L-BFGS); skipped with a note if numpy/scipy are missing")
	fs.StringVar(&f.python, "python", bench.DefaultPython, "interpreter for the peers")
	fs.DurationVar(&f.peerTimeout, "peer-timeout", 10*time.Minute, "time budget of one peer run (it then returns its best X)")
	fs.IntVar(&f.repeat, "repeat", 3, "repetitions; medians are reported")
	fs.Float64Var(&f.tol, "tol", 1e-8, "target certified relative gap")
	fs.IntVar(&f.threads, "threads", 0, "kernel threads for dpsolve and the peers (0: backend default)")
	fs.StringVar(&f.csv, "csv", "", "write per-run rows to this CSV file (scaling and kernel rows to NAME-scaling.csv, NAME-kernels.csv)")
	fs.StringVar(&f.md, "md", "", "write the Markdown tables to this file")
	fs.StringVar(&f.plot, "plot", "", "moved to dpsolve-plot: save the report with --json, then go run ./cmd/dpsolve-plot bench --from FILE --plot …")
	fs.StringVar(&f.convPlot, "convergence-plot", "", "moved to dpsolve-plot (see --plot)")
	fs.StringVar(&f.conv, "convergence", "", "moved to dpsolve-plot (see --plot)")
	fs.StringVar(&f.saveX, "save-x", "", "directory to save every returned X as .npy")
	fs.BoolVar(&f.compare, "compare", true, "run the method comparison (disable to run only --scaling/--kernels)")
	fs.BoolVar(&f.scaling, "scaling", false, "also run the scaling sweep of newton with peak memory, per backend")
	fs.StringVar(&f.scalingNs, "scaling-n", "256,512,1024,2048,4096", "sizes of the scaling sweep")
	fs.BoolVar(&f.large, "large", false, "add n = 8192 to the scaling sweep")
	fs.IntVar(&f.scalingRepeat, "scaling-repeat", 1, "runs per scaling point (median)")
	fs.StringVar(&f.backends, "backends", "", "kernel backends for --scaling and --kernels (default: all compiled in: "+backendNames()+")")
	fs.IntVar(&f.puregoMaxN, "purego-max-n", 2048, "largest n of the scaling sweep on the purego backend (0: no cap)")
	fs.BoolVar(&f.kernels, "kernels", false, "also time the dense kernels")
	fs.StringVar(&f.kernelNs, "kernel-n", "1024,2048", "sizes of the kernel table")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress on stderr (notes and errors remain)")
	fs.BoolVar(&f.jsonOut, "json", false, "print the full report as one JSON object on stdout (tables otherwise)")
	fs.StringVar(&f.from, "from", "", "run nothing: re-render the outputs from a report saved with --json")
	fs.StringVar(&f.baseline, "baseline", "", "with --suite: compare the run with a run saved by --suite --json, mark every row that got worse by more than its noise, and exit with status 3 if any did")
	fs.Float64Var(&f.timedFactor, "timed-factor", bench.DefaultTimedFactor, "with --baseline: the factor by which a timed row's ratio may grow before it counts as worse")
	fs.StringVar(&f.mf, "mf", "", "run only the DP-MF table instead (see dpsolve mf): cases \"n=512,k=4,workload=prefix;n=512,b=64,workload=momentum:0.9\", with --peers the L-BFGS peer side by side")
}

// benchPlan is what the flags ask bench to run, resolved and checked
// before anything runs.
type benchPlan struct {
	ns        []int
	workloads []string
	backends  []blas.Backend
	solvers   []bench.Solver
}

// plan checks the flags and resolves them; the later phases' sizes are
// checked now, not after the comparison ran.
func (f *benchFlags) plan() (*benchPlan, error) {
	ns, err := parseInts("n", f.ns)
	if err != nil {
		return nil, err
	}
	workloads, err := parseWorkloads(f.workloads, ns)
	if err != nil {
		return nil, err
	}
	// The later phases' sizes are checked now, not after the comparison ran.
	for _, l := range [][2]string{{"scaling-n", f.scalingNs}, {"kernel-n", f.kernelNs}} {
		if _, err := parseInts(l[0], l[1]); err != nil && (l[0] == "scaling-n" && f.scaling || l[0] == "kernel-n" && f.kernels) {
			return nil, err
		}
	}
	for _, n := range ns {
		if err := checkSizeMemory("bench", n, 0, memSolve, false); err != nil {
			return nil, err
		}
	}
	if f.repeat < 1 {
		return nil, usageErrorf("--repeat must be at least 1, got %d", f.repeat)
	}
	if !(f.tol > 0 && f.tol < 1) {
		return nil, usageErrorf("--tol must be in (0, 1), got %g", f.tol)
	}
	if f.scalingRepeat < 1 {
		return nil, usageErrorf("--scaling-repeat must be at least 1, got %d", f.scalingRepeat)
	}
	if f.threads < 0 {
		return nil, usageErrorf("--threads must be non-negative, got %d", f.threads)
	}
	if f.peerTimeout <= 0 {
		return nil, usageErrorf("--peer-timeout must be positive, got %v", f.peerTimeout)
	}
	backends, err := parseBackends(f.backends)
	if err != nil {
		return nil, err
	}
	methods, err := splitList("methods", f.methods)
	if err != nil {
		return nil, err
	}
	var solvers []bench.Solver
	for _, m := range methods {
		nm, err := newton.ParseMethod(m)
		if err != nil {
			return nil, usageErrorf("unknown method %q (want newton or yuan2016)", m)
		}
		solvers = append(solvers, bench.Newton{Method: nm})
	}
	if f.compare && len(solvers) == 0 && !f.peers {
		return nil, usageErrorf("--methods is empty and --peers is off: nothing to compare")
	}
	if !f.compare && !f.scaling && !f.kernels {
		return nil, usageErrorf("nothing to run: --compare=false without --scaling or --kernels")
	}
	if f.saveX != "" {
		if err := os.MkdirAll(f.saveX, 0o755); err != nil {
			return nil, err
		}
	}

	return &benchPlan{ns: ns, workloads: workloads, backends: backends, solvers: solvers}, nil
}

// run runs the comparison, the scaling sweep and the kernel table, each
// when asked and only while the phases before it completed. runErr is a
// phase that stopped early (the report keeps what ran); err means there
// is no report to write.
func (f *benchFlags) run(ctx context.Context, p *benchPlan, rep *bench.Report, logw, stderr io.Writer) (runErr, err error) {
	if f.compare {
		if runErr, err = f.runComparison(ctx, p, rep, logw, stderr); err != nil || runErr != nil {
			return runErr, err
		}
	}
	if f.scaling {
		if runErr, err = f.runScaling(ctx, p, rep, logw); err != nil || runErr != nil {
			return runErr, err
		}
	}
	if f.kernels {
		return f.runKernels(p, rep, stderr)
	}
	return nil, nil
}

// runComparison runs dpsolve's methods (and with --peers the Python
// peers) on every workload and size.
func (f *benchFlags) runComparison(ctx context.Context, p *benchPlan, rep *bench.Report, logw, stderr io.Writer) (runErr, err error) {
	if f.peers {
		peers, err := bench.NewPeers(ctx, f.python)
		if err != nil {
			rep.Notes = append(rep.Notes, err.Error())
			fmt.Fprintln(stderr, err)
		} else {
			defer peers.Close()
			peers.MaxSeconds, peers.Threads = f.peerTimeout.Seconds(), f.threads
			rep.Machine.Python = peers.Version
			for _, name := range bench.PeerNames {
				s, _ := peers.Solver(name)
				p.solvers = append(p.solvers, s)
			}
		}
	} else {
		rep.Notes = append(rep.Notes, "peers not run (use --peers)")
	}
	if len(p.solvers) == 0 {
		return nil, errors.New("no method can run")
	}
	c, err := bench.Compare(ctx, bench.Config{Workloads: p.workloads, Ns: p.ns, Methods: p.solvers, Repeat: f.repeat,
		Tol: f.tol, SaveX: f.saveX, Log: logw})
	if c == nil {
		return nil, err
	}
	rep.Comparison = c
	return err, nil
}

// runScaling runs the scaling sweep of newton, per backend.
func (f *benchFlags) runScaling(ctx context.Context, p *benchPlan, rep *bench.Report, logw io.Writer) (runErr, err error) {
	sns, err := parseInts("scaling-n", f.scalingNs)
	if err != nil {
		return nil, err
	}
	if f.large && !slices.Contains(sns, 8192) {
		sns = append(sns, 8192)
	}
	maxN := map[string]int{}
	if f.puregoMaxN > 0 {
		maxN[blas.Gonum.Name()] = f.puregoMaxN
	}
	rows, err := bench.Scaling(ctx, bench.ScalingConfig{Workloads: p.workloads, Ns: sns, Backends: p.backends,
		MaxN: maxN, Repeat: f.scalingRepeat, Tol: f.tol, Log: logw})
	rep.Scaling = rows
	if len(rows) > 0 && !rows[0].RSSReset {
		rep.Notes = append(rep.Notes, "peak RSS could not be reset per run: it is the process peak so far (sizes run in increasing order)")
	}
	return err, nil
}

// runKernels times the dense kernels on every backend.
func (f *benchFlags) runKernels(p *benchPlan, rep *bench.Report, stderr io.Writer) (runErr, err error) {
	kns, err := parseInts("kernel-n", f.kernelNs)
	if err != nil {
		return nil, err
	}
	prev := blas.Current()
	for _, b := range p.backends {
		blas.Use(b)
		fmt.Fprintf(stderr, "kernels on %s at n = %v\n", blas.Describe(), kns)
		k, err := bench.Kernels(kns, 3)
		rep.Kernels = append(rep.Kernels, k...)
		if err != nil {
			blas.Use(prev)
			return err, nil
		}
	}
	blas.Use(prev)
	return nil, nil
}

// refusePlots refuses the plot flags, which dpsolve-plot took over, with the
// commands that draw the figure now.
func (f *benchFlags) refusePlots() error {
	for _, fl := range [][2]string{{"--plot", f.plot}, {"--convergence-plot", f.convPlot}, {"--convergence", f.conv}} {
		if fl[1] != "" {
			return usageErrorf("%s: dpsolve no longer draws plots; save the report with --json (or use an existing one) and run\n"+
				"  go run ./cmd/dpsolve-plot bench --from REPORT.json --plot TIME.svg --convergence-plot CONV.png [--convergence WORKLOAD:N]", fl[0])
		}
	}
	return nil
}

// rerenderBench loads a --json report and writes the requested outputs.
func rerenderBench(f benchFlags, stdout io.Writer) error {
	b, err := os.ReadFile(f.from)
	if err != nil {
		return err
	}
	var rep bench.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return fmt.Errorf("%s is not a dpsolve bench --json report: %w", f.from, err)
	}
	if rep.Comparison != nil {
		rep.Comparison.Summarize() // reports from older versions lack newer summary fields
	}
	return writeBenchOutputs(&rep, f, stdout)
}

// writeBenchOutputs writes the report to stdout (JSON or Markdown) and to
// the requested files.
func writeBenchOutputs(rep *bench.Report, f benchFlags, stdout io.Writer) error {
	if f.jsonOut {
		enc := json.NewEncoder(stdout)
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else if err := rep.WriteMarkdown(stdout); err != nil {
		return err
	}
	// Every file goes through a temporary file and rename, like every other
	// output: an interrupted or failed bench never leaves a half-written
	// table where a previous complete one was.
	writeFile := writeFileAtomic
	if f.md != "" {
		if err := writeFile(f.md, rep.WriteMarkdown); err != nil {
			return err
		}
	}
	if f.csv != "" {
		if rep.Comparison != nil {
			if err := writeFile(f.csv, rep.WriteRunsCSV); err != nil {
				return err
			}
		}
		stem := strings.TrimSuffix(f.csv, ".csv")
		if len(rep.Scaling) > 0 {
			if err := writeFile(stem+"-scaling.csv", rep.WriteScalingCSV); err != nil {
				return err
			}
		}
		if len(rep.Kernels) > 0 {
			if err := writeFile(stem+"-kernels.csv", rep.WriteKernelsCSV); err != nil {
				return err
			}
		}
	}
	return nil
}

// splitList splits a comma-separated flag value. An all-blank value is the
// empty list; an empty entry inside one ("256,,512", "256,") is refused, as
// every other list parser does: it is usually a typo that would otherwise
// silently drop a size.
func splitList(flag, s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p == "" {
			return nil, usageErrorf("--%s %q has an empty entry", flag, s)
		}
		out = append(out, p)
	}
	return out, nil
}

func parseInts(name, s string) ([]int, error) {
	list, err := splitList(name, s)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, p := range list {
		v, err := strconv.Atoi(p)
		if err != nil || v < 2 {
			return nil, usageErrorf("--%s: %q is not an integer ≥ 2", name, p)
		}
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return nil, usageErrorf("--%s is empty", name)
	}
	return out, nil
}

// parseWorkloads splits and expands the --workload list and checks that
// every workload builds at every size of the comparison.
func parseWorkloads(s string, ns []int) ([]string, error) {
	list, err := splitList("workload", s)
	if err != nil {
		return nil, err
	}
	ws := bench.ExpandFamilies(list)
	if len(ws) == 0 {
		return nil, usageErrorf("--workload is empty")
	}
	for _, w := range ws {
		for _, n := range ns {
			if _, err := workload.Parse(w, n); err != nil {
				return nil, usageErrorf("--workload: %v", err)
			}
		}
	}
	return ws, nil
}

func backendNames() string {
	var names []string
	for _, b := range blas.Backends() {
		names = append(names, b.Name())
	}
	return strings.Join(names, ",")
}

func parseBackends(s string) ([]blas.Backend, error) {
	all := blas.Backends()
	if strings.TrimSpace(s) == "" {
		return all, nil
	}
	names, err := splitList("backends", s)
	if err != nil {
		return nil, err
	}
	var out []blas.Backend
	for _, name := range names {
		i := slices.IndexFunc(all, func(b blas.Backend) bool { return b.Name() == name })
		if i < 0 {
			return nil, usageErrorf("--backends: %q is not compiled into this binary (have %s)", name, backendNames())
		}
		out = append(out, all[i])
	}
	return out, nil
}

// errRegression is the error of a suite run that failed: a row failed its
// own check, or got worse than the baseline by more than its noise. It
// exits with status 3.
var errRegression = errors.New("the suite regressed")

// exitRegression is the exit status of errRegression.
const exitRegression = 3

// suiteRun runs the suite (a variable for the tests of the command's
// plumbing, which replace the minutes-long suite by fixed rows).
var suiteRun = bench.Suite

// runSuite runs bench.Suite and prints its table or, with --json, its
// report (and writes the table to --md); with --baseline it compares the
// run with the saved one and prints that table too (on stderr with
// --json). A failed row or a regression is errRegression.
func runSuite(ctx context.Context, f benchFlags, stdout, stderr io.Writer) error {
	var base *bench.SuiteReport
	if f.baseline != "" {
		b, err := os.ReadFile(f.baseline)
		if err != nil {
			return err
		}
		base = &bench.SuiteReport{}
		if err := json.Unmarshal(b, base); err != nil || len(base.Rows) == 0 {
			if err == nil {
				err = errors.New("no rows")
			}
			return fmt.Errorf("--baseline %s is not a dpsolve bench --suite --json report: %w", f.baseline, err)
		}
	}
	if f.threads > 0 {
		for _, b := range blas.Backends() {
			b.SetThreads(f.threads)
		}
	}
	var logw io.Writer = stderr
	if f.quiet {
		logw = nil
	}
	rep, err := suiteRun(ctx, bench.SuiteConfig{Python: f.python, PeerSeconds: f.peerTimeout.Seconds(), Log: logw})
	write := func(w io.Writer) error { return bench.WriteSuiteTable(w, rep) }
	var gate []bench.GateRow
	if base != nil {
		gate = bench.Gate(base.Rows, rep.Rows, f.timedFactor)
		write = func(w io.Writer) error {
			if err := bench.WriteSuiteTable(w, rep); err != nil {
				return err
			}
			fmt.Fprintf(w, "\nagainst the baseline %s (%s, %s):\n\n", f.baseline, base.Machine.CPU, base.Machine.Date)
			_, err := bench.WriteGateTable(w, gate)
			return err
		}
	}
	if f.jsonOut {
		if werr := json.NewEncoder(stdout).Encode(rep); werr != nil {
			return werr
		}
		if base != nil {
			fmt.Fprintf(stderr, "against the baseline %s:\n", f.baseline)
			if _, werr := bench.WriteGateTable(stderr, gate); werr != nil {
				return werr
			}
		}
	} else if werr := write(stdout); werr != nil {
		return werr
	}
	if f.md != "" {
		if werr := writeFileAtomic(f.md, write); werr != nil {
			return werr
		}
	}
	if err != nil {
		return err
	}
	var failed []string
	for _, r := range rep.Rows {
		if r.Fail != "" {
			failed = append(failed, r.Case+": "+r.Fail)
		}
	}
	for _, g := range gate {
		if g.Regressed {
			failed = append(failed, fmt.Sprintf("%s %s vs %s: %s", g.Area, g.Case, g.Versus, g.Verdict))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%w: %s", errRegression, strings.Join(failed, "; "))
	}
	return nil
}
