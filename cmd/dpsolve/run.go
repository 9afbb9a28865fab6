package main

import (
	"context"
	"fmt"
	"io"
	"math"

	"github.com/dpsolve/dpsolve/internal/matio"
	"github.com/dpsolve/dpsolve/mechanism/strategy"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/newton"
	"github.com/dpsolve/dpsolve/pipeline/publish"
)

func init() {
	register(&command{
		name:    "run",
		summary: "optimize the strategy for a workload and privately answer it in one step",
		run:     runRun,
	})
}

// runRun runs dpsolve run and, under dpsolve batch, writes its outcome
// record (recordOutcome).
func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var outcome publish.Outcome
	err := runCommand(ctx, args, stdout, stderr, &outcome)
	recordOutcome("run", outcome, err, stderr)
	return err
}

func runCommand(ctx context.Context, args []string, stdout, stderr io.Writer, outcome *publish.Outcome) (err error) {
	fs := newFlagSet("run", stderr)
	var f releaseFlags
	f.register(fs)
	tol := fs.Float64("tol", 1e-8, "target certified relative duality gap of the strategy optimization")
	outA := fs.String("out-a", "", "also write the optimized strategy A (upper triangular) to this .npy or .csv file")
	quiet := fs.Bool("quiet", false, "no optimization progress on stderr")
	outW := registerOutW(fs)
	maxIter := fs.Int("max-iter", 0, "iteration cap of the strategy optimization (0: the solver's default)")
	allowUnconverged := fs.Bool("allow-unconverged", false, "release even if the optimization stops before its certified gap (the strategy is valid but may be suboptimal)")
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
	if err := checkOutputs([]string{f.data, f.wfile, f.specFile}, matOut("--out", f.out), matOut("--out-xhat", f.outXhat), matOut("--out-a", *outA), matOut("--out-w", *outW)); err != nil {
		return err
	}
	x, err := f.loadData()
	if err != nil {
		return err
	}
	if err := checkCounts(x, f.data, f.allowFractional, stderr); err != nil {
		return err
	}
	if err := checkSizeMemory("run", len(x), 0, memRun, false); err != nil {
		return err
	}
	if err := checkSpecMemory("run", f.source(len(x)), memRun, false, true); err != nil {
		return err
	}
	w, err := f.loadWorkload(len(x))
	if err != nil {
		return err
	}
	if *maxIter < 0 {
		return usageErrorf("--max-iter must be non-negative, got %d", *maxIter)
	}
	s, err := optimizeForRelease(ctx, w, &newton.Options{Tol: *tol, MaxIter: *maxIter, Progress: progressTo(stderr, "run", *quiet)},
		*allowUnconverged, *quiet, stderr)
	if err != nil {
		return err
	}
	res := s.Result
	if ctx.Err() != nil {
		return errCancelled(ctx) // interrupted after the solve: write nothing
	}
	if *outA != "" {
		if err := matio.WriteMatrix(*outA, s.A); err != nil {
			return err
		}
	}
	a := warnLaplaceMismatch(s.A, w, b, stderr, true)
	defer func() {
		if err == nil {
			err = writeOutW(*outW, w) // after the answers: they matter more
		}
	}()
	return doRelease(ctx, &f, b, a, x, w, stdout, stderr, func(j *releaseJSON) {
		obj, gap, secs := res.Objective, res.Gap, res.Seconds
		j.Objective, j.SolveStatus, j.SolveSeconds = &obj, res.Status.String(), &secs
		if finite(gap) {
			j.Gap = &gap
		}
	}, outcome)
}

// optimizeForRelease optimizes the strategy for w and refuses, before any
// noise is drawn, one whose optimization stopped short of its certified gap
// unless allowUnconverged: such a strategy is valid (privacy is unaffected)
// but may be far from optimal, which a user should choose knowingly.
func optimizeForRelease(ctx context.Context, w workload.Workload, opt *newton.Options, allowUnconverged, quiet bool, stderr io.Writer) (*strategy.Optimized, error) {
	if !quiet {
		fmt.Fprintf(stderr, "dpsolve run: optimizing the strategy for %s (n = %d)\n", w.Name(), w.Domain())
	}
	// Interrupted: return at once and release nothing.
	s, err := untilCancelled(ctx, func() (*strategy.Optimized, error) { return strategy.Optimize(ctx, w.Gram(), opt) })
	if err != nil {
		return nil, err
	}
	res := s.Result
	if res.Status != newton.Converged {
		if !allowUnconverged {
			return nil, fmt.Errorf("the strategy optimization stopped with status %s at certified gap %.3g (asked for %g); nothing was released and no budget spent: raise --tol or --max-iter, or pass --allow-unconverged to release with this valid but possibly suboptimal strategy", res.Status, res.Gap, opt.Tol)
		}
		fmt.Fprintf(stderr, "dpsolve run: warning: optimization stopped with status %s at gap %.3g; releasing anyway (--allow-unconverged): privacy is unaffected, accuracy may be suboptimal\n", res.Status, res.Gap)
	}
	return s, nil
}
