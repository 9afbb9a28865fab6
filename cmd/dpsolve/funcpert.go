package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/dpsolve/dpsolve/bench/funcpert"
	"github.com/dpsolve/dpsolve/mechanism/functional/project"
)

func init() {
	register(&command{
		name:    "funcpert",
		summary: "privacy–accuracy experiment of functional perturbation for distributed optimization (Nozari et al. 2018)",
		run:     runFuncpert,
	})
}

// funcpertSeries is one curve of the JSON output.
type funcpertSeries struct {
	Method string    `json:"method"`
	Coeffs int       `json:"coeffs"`
	Eps    []float64 `json:"eps"`
	Mean   []float64 `json:"mean"`
	Min    []float64 `json:"min"`
	Max    []float64 `json:"max"`
	Bound  []float64 `json:"bound,omitempty"`
}

// funcpertJSON is the machine-readable output of dpsolve funcpert.
type funcpertJSON struct {
	Rows                  int                `json:"rows"`
	Out                   string             `json:"out,omitempty"`
	XStar                 []float64          `json:"x_star"`
	Smoothing             map[string]float64 `json:"smoothing"`
	ProjectionCertificate float64            `json:"projection_certificate"`
	ProjectionRelative    float64            `json:"projection_relative"`
	MessageS0             float64            `json:"message_s0,omitempty"`
	MessageP              float64            `json:"message_p,omitempty"`
	Gamma                 float64            `json:"gamma"`
	Q                     float64            `json:"q"`
	P                     float64            `json:"p"`
	Set                   project.Set        `json:"set"`
	Seconds               float64            `json:"seconds"`
	Series                []funcpertSeries   `json:"series"`
}

// degreeForCoeffs returns K with (K+1)(K+2)/2 = n, the 2-D basis size.
func degreeForCoeffs(n int) (int, error) {
	for K := 0; K <= 30; K++ {
		if (K+1)*(K+2)/2 == n {
			return K, nil
		}
	}
	return 0, usageErrorf("--coeffs: %d is not a 2-D basis size (K+1)(K+2)/2 for K ≤ 30 (e.g. 15, 28, 120)", n)
}

// funcpertFlags are dpsolve funcpert's flags beside the configuration they
// edit in place.
type funcpertFlags struct {
	out, plotPath    string
	quick, asJSON    bool
	quiet            bool
	epsPoints        int
	epsMin, epsMax   float64
	coeffs           string
	set              map[string]bool // the flags given on the command line
	alpha, beta, u   float64
	dataSeed         uint64
	msgRounds, wkers int
}

// register binds the flags to cfg (the experiment's defaults) and f.
func (f *funcpertFlags) register(fs *flag.FlagSet, cfg *funcpert.Config) {
	fs.StringVar(&f.out, "out", "", "write the results to this CSV file (columns eps,coeffs,method,rep,error; method functional or message, whose rows have coeffs 0)")
	fs.StringVar(&f.plotPath, "plot", "", "moved to dpsolve-plot: run with --json > FILE, then go run ./cmd/dpsolve-plot funcpert --from FILE --plot fig.png")
	fs.BoolVar(&f.quick, "quick", false, "small configuration for a fast check: 3 repetitions, 6 ε points, 15 and 28 coefficients, short baseline tuning")
	fs.IntVar(&cfg.Reps, "reps", cfg.Reps, "repetitions per (ε, coefficients)")
	fs.IntVar(&f.epsPoints, "eps-points", len(cfg.Eps), "number of ε values, log-spaced")
	fs.Float64Var(&f.epsMin, "eps-min", 1e-2, "smallest ε")
	fs.Float64Var(&f.epsMax, "eps-max", 1e3, "largest ε")
	fs.StringVar(&f.coeffs, "coeffs", "15,28,120", "comma-separated coefficient counts (2-D basis sizes)")
	fs.Float64Var(&cfg.Gamma, "gamma", cfg.Gamma, "adjacency radius γ of the weighted coefficient norm")
	fs.Float64Var(&cfg.Q, "q", cfg.Q, "adjacency weight exponent q > 1")
	fs.Float64Var(&cfg.P, "p", cfg.P, "noise decay exponent p ∈ (1/2, q − 1/2)")
	fs.Float64Var(&f.alpha, "alpha", cfg.S.Alpha, "strong convexity α of the projection set S")
	fs.Float64Var(&f.beta, "beta", cfg.S.Beta, "smoothness β of S")
	fs.Float64Var(&f.u, "u", cfg.S.U, "gradient bound u of S")
	fs.Float64Var(&cfg.GridFactor, "grid-factor", cfg.GridFactor, "projection grid: ⌈factor·K⌉ Chebyshev nodes per axis")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the (simulation, non-private) noise")
	fs.Uint64Var(&f.dataSeed, "data-seed", cfg.Data.Seed, "seed of the agents' synthetic data")
	fs.IntVar(&f.msgRounds, "message-rounds", cfg.Message.Rounds, "rounds of the message-perturbation baseline (0: skip it)")
	fs.IntVar(&f.wkers, "workers", 0, "goroutines running repetitions (0: GOMAXPROCS)")
	fs.BoolVar(&f.asJSON, "json", false, "print one JSON object on stdout")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress on stderr")
}

// applyQuick shrinks the flags --quick names, unless given explicitly, and
// shortens the baseline's tuning.
func (f *funcpertFlags) applyQuick(cfg *funcpert.Config) {
	if !f.quick {
		return
	}
	if !f.set["reps"] {
		cfg.Reps = 3
	}
	if !f.set["eps-points"] {
		f.epsPoints = 6
	}
	if !f.set["coeffs"] {
		f.coeffs = "15,28"
	}
	cfg.Message.TuneReps = 2
	cfg.Message.S0 = []float64{1e-6, 1e-4, 1e-2, 0.1}
	cfg.Message.P = []float64{0.9, 0.99}
}

// config finishes cfg from the flags: the log-spaced ε grid, the degrees of
// the coefficient counts, the set S and the seeds; cfg.Validate has the
// last word.
func (f *funcpertFlags) config(cfg *funcpert.Config) error {
	if cfg.Reps <= 0 {
		return usageErrorf("--reps must be positive, got %d", cfg.Reps)
	}
	if f.epsPoints < 1 {
		return usageErrorf("--eps-points must be at least 1, got %d", f.epsPoints)
	}
	if !(f.epsMin > 0) || !(f.epsMax >= f.epsMin) || math.IsInf(f.epsMax, 0) {
		return usageErrorf("need 0 < --eps-min ≤ --eps-max < ∞, got %g and %g", f.epsMin, f.epsMax)
	}
	if f.wkers < 0 {
		return usageErrorf("--workers must be non-negative, got %d", f.wkers)
	}
	if f.msgRounds < 0 {
		return usageErrorf("--message-rounds must be non-negative, got %d", f.msgRounds)
	}
	cfg.Eps = logSpaced(f.epsMin, f.epsMax, f.epsPoints)
	degrees, err := parseCoeffs(f.coeffs)
	if err != nil {
		return err
	}
	cfg.Degrees = degrees
	cfg.S = project.Set{Alpha: f.alpha, Beta: f.beta, U: f.u}
	cfg.Data.Seed = f.dataSeed
	cfg.Message.Rounds = f.msgRounds
	cfg.Workers = f.wkers
	if err := cfg.Validate(); err != nil {
		return usageErrorf("%v", err)
	}
	return nil
}

// logSpaced returns k values from lo to hi, evenly spaced in log10 (lo
// alone when k = 1).
func logSpaced(lo, hi float64, k int) []float64 {
	eps := make([]float64, k)
	for i := range eps {
		if k == 1 {
			eps[i] = lo
			continue
		}
		t := float64(i) / float64(k-1)
		eps[i] = math.Pow(10, (1-t)*math.Log10(lo)+t*math.Log10(hi))
	}
	return eps
}

// parseCoeffs turns --coeffs (2-D basis sizes) into polynomial degrees K.
func parseCoeffs(list string) ([]int, error) {
	var degrees []int
	for _, s := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return nil, usageErrorf("--coeffs: %q is not an integer", s)
		}
		K, err := degreeForCoeffs(n)
		if err != nil {
			return nil, err
		}
		if K < 2 {
			return nil, usageErrorf("--coeffs: %d coefficients (degree %d) cannot carry a Hessian bound; use at least 6", n, K)
		}
		degrees = append(degrees, K)
	}
	return degrees, nil
}

func runFuncpert(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := funcpert.DefaultConfig()
	fs := newFlagSet("funcpert", stderr)
	var f funcpertFlags
	f.register(fs, &cfg)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if f.plotPath != "" {
		return usageErrorf("--plot: dpsolve no longer draws plots; run dpsolve funcpert … --json > RESULT.json, then\n" +
			"  go run ./cmd/dpsolve-plot funcpert --from RESULT.json --plot FIG.png")
	}
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	f.applyQuick(&cfg)
	if err := f.config(&cfg); err != nil {
		return err
	}
	if !f.quiet {
		fmt.Fprintf(stderr, "dpsolve funcpert: %d ε values in [%g, %g], coefficients %s, %d repetitions, γ=%g q=%g p=%g, S={α=%g, β=%g, u=%g}\n",
			len(cfg.Eps), f.epsMin, f.epsMax, f.coeffs, cfg.Reps, cfg.Gamma, cfg.Q, cfg.P, cfg.S.Alpha, cfg.S.Beta, cfg.S.U)
	}
	if err := checkOutputs(nil, fileOut("--out", f.out)); err != nil {
		return err
	}
	res, err := funcpert.Run(ctx, cfg, progressTo(stderr, "funcpert", f.quiet))
	if err == nil && ctx.Err() != nil {
		err = errCancelled(ctx) // an interrupted experiment writes nothing
	}
	if err != nil {
		return err
	}
	if f.out != "" {
		if err := writeFileAtomic(f.out, func(w io.Writer) error { return funcpert.WriteCSV(w, res.Rows) }); err != nil {
			return err
		}
	}
	j := newFuncpertResult(&cfg, res, f.out)
	return writeReport(stdout, f.asJSON, j)
}

// newFuncpertResult is the one result of dpsolve funcpert that both the
// text and the --json renderings read.
func newFuncpertResult(cfg *funcpert.Config, res *funcpert.Result, out string) *funcpertJSON {
	j := &funcpertJSON{
		Rows: len(res.Rows), Out: out, XStar: res.XStar,
		Smoothing:             map[string]float64{},
		ProjectionCertificate: res.ProjectionCertificate,
		ProjectionRelative:    res.ProjectionRelative,
		MessageS0:             res.MessageS0, MessageP: res.MessageP,
		Gamma: cfg.Gamma, Q: cfg.Q, P: cfg.P, Set: cfg.S,
		Seconds: res.Elapsed.Seconds(),
	}
	for K, v := range res.Smoothing {
		j.Smoothing[strconv.Itoa((K+1)*(K+2)/2)] = v
	}
	for _, s := range res.Series {
		j.Series = append(j.Series, funcpertSeries{Method: s.Method, Coeffs: s.Coeffs, Eps: s.Eps, Mean: s.Mean, Min: s.Min, Max: s.Max, Bound: s.Bound})
	}
	return j
}

// writeText renders the result for a reader: x* and one table per curve.
func (j *funcpertJSON) writeText(w io.Writer) {
	fmt.Fprintf(w, "x* = (%.6f, %.6f); %d rows in %.1f s\n", j.XStar[0], j.XStar[1], j.Rows, j.Seconds)
	for _, s := range j.Series {
		name := "message perturbation"
		if s.Method == "functional" {
			name = fmt.Sprintf("functional, %d coefficients", s.Coeffs)
		}
		fmt.Fprintf(w, "%s\n  %10s %12s %12s %12s %12s\n", name, "ε", "mean", "min", "max", "bound")
		for i := range s.Eps {
			b := "-"
			if s.Bound != nil {
				b = fmt.Sprintf("%.4g", s.Bound[i])
			}
			fmt.Fprintf(w, "  %10.4g %12.4g %12.4g %12.4g %12s\n", s.Eps[i], s.Mean[i], s.Min[i], s.Max[i], b)
		}
	}
}
