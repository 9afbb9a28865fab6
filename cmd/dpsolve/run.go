package main

import (
	"context"
	"fmt"
	"github.com/dpsolve/dpsolve/mechanism/calibrate"
	"io"
	"math"
	"os"
	"os/signal"

	"github.com/dpsolve/dpsolve/internal/matio"
	"github.com/dpsolve/dpsolve/mechanism/strategy"
	"github.com/dpsolve/dpsolve/newton"
)

func init() {
	register(&command{
		name:    "run",
		summary: "optimize the strategy for a workload and privately answer it in one step",
		run:     runRun,
	})
}

func runRun(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("run", stderr)
	var f releaseFlags
	f.register(fs)
	tol := fs.Float64("tol", 1e-8, "target certified relative duality gap of the strategy optimization")
	outA := fs.String("out-a", "", "also write the optimized strategy A (upper triangular) to this .npy or .csv file")
	quiet := fs.Bool("quiet", false, "no optimization progress on stderr")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *tol <= 0 || math.IsNaN(*tol) {
		return usageErrorf("--tol must be positive, got %g", *tol)
	}
	b, err := f.check()
	if err != nil {
		return err
	}
	x, err := f.loadData()
	if err != nil {
		return err
	}
	w, err := f.loadWorkload(len(x))
	if err != nil {
		return err
	}
	if b.Kind == calibrate.Pure {
		fmt.Fprintf(stderr, "dpsolve run: note: the optimized strategy minimizes Gaussian-noise error; under Laplace noise it is valid but not optimal\n")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	opt := &newton.Options{Tol: *tol}
	if !*quiet {
		fmt.Fprintf(stderr, "dpsolve run: optimizing the strategy for %s (n = %d)\n", w.Name(), len(x))
		opt.Progress = func(it newton.Iteration) {
			fmt.Fprintf(stderr, "  iter %3d  objective %.10g  gap %s  %.2fs\n", it.Iter, it.Objective, fmtMaybe(it.Gap, "%.3g"), it.Seconds)
		}
	}
	s, err := strategy.Optimize(ctx, w.Gram(), opt)
	if err != nil {
		return err
	}
	res := s.Result
	if res.Status != newton.Converged {
		fmt.Fprintf(stderr, "dpsolve run: warning: optimization stopped with status %s at gap %.3g; the strategy is valid (privacy is unaffected) but may be suboptimal\n", res.Status, res.Gap)
	}
	if *outA != "" {
		if err := matio.WriteMatrix(*outA, s.A); err != nil {
			return err
		}
	}
	return doRelease(&f, b, s.A, x, w, stdout, stderr, func(j *releaseJSON) {
		obj, gap, secs := res.Objective, res.Gap, res.Seconds
		j.Objective, j.SolveStatus, j.SolveSeconds = &obj, string(res.Status), &secs
		if finite(gap) {
			j.Gap = &gap
		}
	})
}
