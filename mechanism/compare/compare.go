// Package compare sets strategies side by side on one workload under one
// calibrated noise: every row's expected error (privacy/accounting), its
// ratio to the SVD lower bound every strategy obeys, and its ratio to a
// reference row. It is the library behind dpsolve compare.
//
// # Rows
//
// Rows come from a registry of builders. The matrix-mechanism baselines of
// mechanism/strategy's registry and the Low-Rank Mechanism (lrm.go) are
// its explicit built-in list; a program adds its own with Register:
//
//	compare.Register(compare.Candidate{
//		Name:    "mine",
//		Summary: "my strategy",
//		Build: func(env *compare.Env) (*compare.Outcome, error) {
//			if env.Noise.Mechanism != calibrate.Laplace {
//				return nil, compare.ErrSkip // not applicable: no row
//			}
//			...
//		},
//	})
//
// A builder returns either a matrix-mechanism strategy (Outcome.Strategy:
// Run computes its error with accounting.Evaluate under env.Noise, Gaussian
// or Laplace) or a finished accounting.Report (for mechanisms whose
// reconstruction is not least squares, such as the Low-Rank Mechanism). The
// time the builder takes is the row's Seconds. Rows appear in registration
// order: the baselines, then lrm, then rows registered by the program.
package compare

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/mechanism/strategy"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/newton"
	"github.com/dpsolve/dpsolve/privacy/accounting"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/progress"
)

// builtinRows is the explicit list of the built-in rows, in order: the
// matrix-mechanism baselines (mechanism/strategy's list; this package only
// adds the optimizer's note), then the Low-Rank Mechanism (lrm.go). No row
// registers itself from an init function.
func builtinRows() []Candidate {
	var rows []Candidate
	for _, b := range strategy.Baselines() {
		rows = append(rows, Candidate{Name: b.Name, Summary: b.Summary, Default: b.Default, Build: baselineBuilder(b)})
	}
	return append(rows, lrmRow())
}

// baselineBuilder wraps a registered strategy as a row.
func baselineBuilder(b strategy.Baseline) func(env *Env) (*Outcome, error) {
	return func(env *Env) (*Outcome, error) {
		s, err := b.Build(env.Ctx, env.Workload.Domain(), env.Gram, &newton.Options{Tol: env.Tol, Progress: env.Progress})
		if err != nil {
			return nil, err
		}
		oc := &Outcome{Strategy: s}
		if o, ok := s.(*strategy.Optimized); ok {
			r := o.Result
			oc.Note = fmt.Sprintf("%s after %d iterations, certified gap %.2g", r.Status, r.Iterations, r.Gap)
		}
		return oc, nil
	}
}

// Env is what a row builder receives. Builders must not modify Gram.
type Env struct {
	Ctx      context.Context
	Workload workload.Workload
	// Gram is V = WᵀW, computed once for all rows (Run sets it).
	Gram *mat.SymDense
	// Noise is the calibrated noise at unit sensitivity: Mechanism
	// (calibrate.Gaussian or calibrate.Laplace), Epsilon, Delta, Scale.
	Noise accounting.Noise
	// Tol is the certified relative gap asked of optimizers.
	Tol float64
	// Log takes human progress messages (io.Discard for none).
	Log io.Writer
	// Progress reports long computations (the optimizer, lrm); nil for
	// none.
	Progress progress.Func
}

// Outcome is a builder's result: exactly one of Strategy and Report.
type Outcome struct {
	// Strategy is a matrix-mechanism strategy; Run evaluates it.
	Strategy strategy.Matrix
	// Report is an error report the builder computed itself.
	Report *accounting.Report
	// Note is an optional remark on the row.
	Note string
}

// Candidate is one registered row.
type Candidate struct {
	// Name is the row label and the key Lookup finds it by.
	Name string
	// Summary is a one-line description for help texts.
	Summary string
	// Default selects the row when the caller names none.
	Default bool
	// Build constructs the strategy (or the finished report).
	Build func(env *Env) (*Outcome, error)
}

// ErrSkip, returned by a builder, omits its row (with a note on Env.Log),
// e.g. for a mechanism the strategy does not support.
var ErrSkip = errors.New("not applicable")

var registry = builtinRows()

// Register adds a row builder after the built-in rows. A missing
// name or builder, or a duplicate name, panics (a programming error).
func Register(s Candidate) {
	if s.Name == "" || s.Build == nil {
		panic("compare: a strategy needs a name and a builder")
	}
	for _, c := range registry {
		if c.Name == s.Name {
			panic("compare: duplicate strategy " + s.Name)
		}
	}
	registry = append(registry, s)
}

// Registered returns the registered rows in registration order.
func Registered() []Candidate { return append([]Candidate(nil), registry...) }

// Defaults returns the registered rows with Default set.
func Defaults() []Candidate {
	var rows []Candidate
	for _, c := range registry {
		if c.Default {
			rows = append(rows, c)
		}
	}
	return rows
}

// Lookup resolves a row name: a registered row, or any name strategy.Lookup
// knows (hB for the B-ary tree).
func Lookup(name string) (Candidate, bool) {
	for _, c := range registry {
		if c.Name == name {
			return c, true
		}
	}
	b, err := strategy.Lookup(name)
	if err != nil {
		return Candidate{}, false
	}
	return Candidate{Name: b.Name, Summary: b.Summary, Build: baselineBuilder(b)}, true
}

// Row is one strategy's line of the comparison.
type Row struct {
	Strategy string
	Report   *accounting.Report // nil when Err is set
	Seconds  float64            // building time
	Note     string
	Err      error
	// RatioSVD and RatioReference are RMSE ratios to the SVD bound and to
	// the reference row (NaN when undefined).
	RatioSVD, RatioReference float64
}

// Result is a comparison: the rows, in the order asked, and the bound.
type Result struct {
	Workload workload.Workload
	Noise    accounting.Noise
	// Bound is the SVD lower bound on every strategy's error.
	Bound *accounting.Bound
	Rows  []Row
}

// Run computes the Gram and the SVD bound once, then builds and evaluates
// every row in order. A failed row is kept with its error, so the rows that
// worked are still reported (Result.Err joins the failures); a skipped row
// is left out. Run sets env.Gram. Its own error is a failed bound or a
// cancelled env.Ctx.
func Run(env *Env, rows []Candidate) (*Result, error) {
	w, log := env.Workload, env.Log
	t0 := time.Now()
	env.Gram = w.Gram()
	n, nq := w.Domain(), w.Queries()
	fmt.Fprintf(log, "dpsolve compare: %s, n = %d, m = %d, %s (%.2fs for the Gram)\n", w.Name(), n, nq, DescribeNoise(env.Noise), time.Since(t0).Seconds())
	t0 = time.Now()
	bound, err := accounting.LowerBound(env.Gram, nq, env.Noise)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "  SVD bound: RMSE %.6g (%.2fs)\n", bound.RMSE, time.Since(t0).Seconds())
	res := &Result{Workload: w, Noise: env.Noise, Bound: bound}
	for _, c := range rows {
		if err := env.Ctx.Err(); err != nil {
			return nil, err
		}
		row, err := runRow(env, c, bound)
		if err != nil {
			return nil, err
		}
		if row != nil {
			res.Rows = append(res.Rows, *row)
		}
	}
	if err := env.Ctx.Err(); err != nil {
		return nil, err
	}
	setReference(res.Rows, env.Noise)
	return res, nil
}

// runRow builds and evaluates one row; nil (and no error) when the builder
// skips it. The only error is a cancelled context.
func runRow(env *Env, c Candidate, bound *accounting.Bound) (*Row, error) {
	ctx, log := env.Ctx, env.Log
	row := Row{Strategy: c.Name, RatioSVD: math.NaN(), RatioReference: math.NaN()}
	start := time.Now()
	oc, err := c.Build(env)
	if err != nil && (ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		// Stopped because it was told to, not failed: no row.
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	row.Seconds = time.Since(start).Seconds()
	switch {
	case errors.Is(err, ErrSkip):
		fmt.Fprintf(log, "  %s: skipped (%v)\n", c.Name, err)
		return nil, nil
	case err != nil:
		row.Err = err
	case oc == nil || (oc.Strategy == nil) == (oc.Report == nil):
		row.Err = fmt.Errorf("builder returned neither a strategy nor a report (or both)")
	case oc.Report != nil:
		row.Report, row.Note = oc.Report, oc.Note
	default:
		row.Note = oc.Note
		row.Report, row.Err = accounting.Evaluate(env.Gram, env.Workload.Queries(), oc.Strategy, env.Noise)
	}
	if row.Err != nil {
		fmt.Fprintf(log, "  %s: %v\n", c.Name, row.Err)
	} else {
		row.RatioSVD = row.Report.RMSE / bound.RMSE
		fmt.Fprintf(log, "  %s: RMSE %.6g (built in %.2fs)\n", c.Name, row.Report.RMSE, row.Seconds)
	}
	return &row, nil
}

// DescribeNoise words calibrated noise at unit sensitivity.
func DescribeNoise(nz accounting.Noise) string {
	if nz.Mechanism == calibrate.Laplace {
		return fmt.Sprintf("Laplace, ε = %g (ε-DP), scale %.6g per unit L1 sensitivity", nz.Budget.Epsilon(), nz.Scale)
	}
	return fmt.Sprintf("Gaussian, ε = %g, δ = %g (%s), σ = %.6g per unit L2 sensitivity", nz.Budget.Epsilon(), nz.Budget.Delta(), nz.Calibration, nz.Scale)
}
