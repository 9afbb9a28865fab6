package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/dpsolve/dpsolve/mechanism/distributed/experiment"
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
	Plot                  string             `json:"plot,omitempty"`
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

func runFuncpert(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	def := experiment.DefaultConfig()
	fs := newFlagSet("funcpert", stderr)
	out := fs.String("out", "", "write the results to this CSV file (columns eps,coeffs,method,rep,error; method functional or message, whose rows have coeffs 0)")
	plotPath := fs.String("plot", "", "draw the figure into this PNG file")
	quick := fs.Bool("quick", false, "small configuration for a fast check: 3 repetitions, 6 ε points, 15 and 28 coefficients, short baseline tuning")
	reps := fs.Int("reps", def.Reps, "repetitions per (ε, coefficients)")
	epsPoints := fs.Int("eps-points", len(def.Eps), "number of ε values, log-spaced")
	epsMin := fs.Float64("eps-min", 1e-2, "smallest ε")
	epsMax := fs.Float64("eps-max", 1e3, "largest ε")
	coeffs := fs.String("coeffs", "15,28,120", "comma-separated coefficient counts (2-D basis sizes)")
	gamma := fs.Float64("gamma", def.Gamma, "adjacency radius γ of the weighted coefficient norm")
	q := fs.Float64("q", def.Q, "adjacency weight exponent q > 1")
	p := fs.Float64("p", def.P, "noise decay exponent p ∈ (1/2, q − 1/2)")
	alpha := fs.Float64("alpha", def.S.Alpha, "strong convexity α of the projection set S")
	beta := fs.Float64("beta", def.S.Beta, "smoothness β of S")
	u := fs.Float64("u", def.S.U, "gradient bound u of S")
	gridFactor := fs.Float64("grid-factor", def.GridFactor, "projection grid: ⌈factor·K⌉ Chebyshev nodes per axis")
	seed := fs.Uint64("seed", def.Seed, "seed of the (simulation, non-private) noise")
	dataSeed := fs.Uint64("data-seed", def.Data.Seed, "seed of the agents' synthetic data")
	msgRounds := fs.Int("message-rounds", def.Message.Rounds, "rounds of the message-perturbation baseline (0: skip it)")
	workers := fs.Int("workers", 0, "goroutines running repetitions (0: GOMAXPROCS)")
	asJSON := fs.Bool("json", false, "print one JSON object on stdout")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *quick {
		if !set["reps"] {
			*reps = 3
		}
		if !set["eps-points"] {
			*epsPoints = 6
		}
		if !set["coeffs"] {
			*coeffs = "15,28"
		}
		def.Message.TuneReps = 2
		def.Message.S0 = []float64{1e-6, 1e-4, 1e-2, 0.1}
		def.Message.P = []float64{0.9, 0.99}
	}
	if *reps <= 0 {
		return usageErrorf("--reps must be positive, got %d", *reps)
	}
	if *epsPoints < 1 {
		return usageErrorf("--eps-points must be at least 1, got %d", *epsPoints)
	}
	if !(*epsMin > 0) || !(*epsMax >= *epsMin) || math.IsInf(*epsMax, 0) {
		return usageErrorf("need 0 < --eps-min ≤ --eps-max < ∞, got %g and %g", *epsMin, *epsMax)
	}
	if *workers < 0 {
		return usageErrorf("--workers must be non-negative, got %d", *workers)
	}
	if *msgRounds < 0 {
		return usageErrorf("--message-rounds must be non-negative, got %d", *msgRounds)
	}
	cfg := def
	cfg.Reps = *reps
	cfg.Eps = make([]float64, *epsPoints)
	for i := range cfg.Eps {
		if *epsPoints == 1 {
			cfg.Eps[i] = *epsMin
			continue
		}
		t := float64(i) / float64(*epsPoints-1)
		cfg.Eps[i] = math.Pow(10, (1-t)*math.Log10(*epsMin)+t*math.Log10(*epsMax))
	}
	cfg.Degrees = nil
	for _, s := range strings.Split(*coeffs, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return usageErrorf("--coeffs: %q is not an integer", s)
		}
		K, err := degreeForCoeffs(n)
		if err != nil {
			return err
		}
		if K < 2 {
			return usageErrorf("--coeffs: %d coefficients (degree %d) cannot carry a Hessian bound; use at least 6", n, K)
		}
		cfg.Degrees = append(cfg.Degrees, K)
	}
	cfg.Gamma, cfg.Q, cfg.P = *gamma, *q, *p
	cfg.S = project.Set{Alpha: *alpha, Beta: *beta, U: *u}
	cfg.GridFactor = *gridFactor
	cfg.Seed = *seed
	cfg.Data.Seed = *dataSeed
	cfg.Message.Rounds = *msgRounds
	cfg.Workers = *workers
	if err := cfg.Validate(); err != nil {
		return usageErrorf("%v", err)
	}
	if !*quiet {
		fmt.Fprintf(stderr, "dpsolve funcpert: %d ε values in [%g, %g], coefficients %s, %d repetitions, γ=%g q=%g p=%g, S={α=%g, β=%g, u=%g}\n",
			len(cfg.Eps), *epsMin, *epsMax, *coeffs, cfg.Reps, cfg.Gamma, cfg.Q, cfg.P, cfg.S.Alpha, cfg.S.Beta, cfg.S.U)
	}
	if err := checkOutputs(nil, fileOut("--out", *out), fileOut("--plot", *plotPath)); err != nil {
		return err
	}
	res, err := experiment.Run(ctx, cfg, progressTo(stderr, "funcpert", *quiet))
	if err == nil && ctx.Err() != nil {
		err = errCancelled(ctx) // an interrupted experiment writes nothing
	}
	if err != nil {
		return err
	}
	if *out != "" {
		if err := writeFileAtomic(*out, func(w io.Writer) error { return experiment.WriteCSV(w, res.Rows) }); err != nil {
			return err
		}
	}
	if *plotPath != "" {
		if err := experiment.Plot(res, *plotPath); err != nil {
			return fmt.Errorf("plot: %w", err)
		}
	}
	j := funcpertJSON{
		Rows: len(res.Rows), Out: *out, Plot: *plotPath, XStar: res.XStar,
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
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(j)
	}
	fmt.Fprintf(stdout, "x* = (%.6f, %.6f); %d rows in %.1f s\n", res.XStar[0], res.XStar[1], len(res.Rows), res.Elapsed.Seconds())
	for _, s := range res.Series {
		name := "message perturbation"
		if s.Method == "functional" {
			name = fmt.Sprintf("functional, %d coefficients", s.Coeffs)
		}
		fmt.Fprintf(stdout, "%s\n  %10s %12s %12s %12s %12s\n", name, "ε", "mean", "min", "max", "bound")
		for i := range s.Eps {
			b := "-"
			if s.Bound != nil {
				b = fmt.Sprintf("%.4g", s.Bound[i])
			}
			fmt.Fprintf(stdout, "  %10.4g %12.4g %12.4g %12.4g %12s\n", s.Eps[i], s.Mean[i], s.Min[i], s.Max[i], b)
		}
	}
	return nil
}
