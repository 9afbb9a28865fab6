// Package plan computes noise strategies for structured (multi-attribute)
// workloads without ever forming the n×n Gram: the strategy is a Kronecker
// product of small per-attribute strategies, or a weighted union of such
// products, and its expected error is evaluated factor by factor
// (domain.Kron.KronError / UnionError).
//
// A Template turns a *domain.Kron into a Result: a Strategy with
// sensitivity 1 and its expected error. The built-in templates are
//
//   - "kron" (OPT⊗): one Kronecker product ⊗ᵢAᵢ. A single product term is
//     solved exactly — the product of the per-attribute newton optima,
//     with the product of their certificates as a global lower bound; a
//     union of terms by exact block coordinate descent, each block a
//     certified newton solve on the weighted Gram Σⱼ cⱼ·Vᵢⱼ.
//   - "union" (OPT₊): a weighted stack of Kronecker products, each part
//     answering the terms assigned to it, part weights in closed form, the
//     grouping of terms chosen among a few candidates.
//   - "dense": the full newton solve on the explicit Gram (small domains
//     only), the certified reference.
//   - "best": the portfolio of an explicit list of templates (Best): the
//     ones that certify the workload first, stopping at a certified
//     optimum, else the lowest error of all.
//
// Package planner (mechanism/plan/planner) names every template of the
// repository, the marginals template of mechanism/marginals included, and
// looks them up by name; this package keeps no registry.
//
// The unit of every objective is the unit of newton.Solve's: expected total
// squared error of all queries per unit noise variance at sensitivity 1
// (multiply by σ² of the calibrated mechanism).
package plan

import (
	"context"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/progress"
	"github.com/dpsolve/dpsolve/status"
)

// ErrInput is wrapped by every error returned for bad input.
var ErrInput = inputerr.ErrInput

// Options configures a plan. The zero value selects the defaults.
type Options struct {
	// Noise is the noise model the plan is normalized for:
	// calibrate.Gaussian (default; L2 sensitivity 1, (ε,δ)-DP or zCDP) or
	// calibrate.Laplace (L1 sensitivity 1, pure ε-DP); a budget's is
	// Budget.Noise().
	Noise calibrate.NoiseKind
	// Tol stops block coordinate descent when a sweep lowers the objective
	// by at most Tol relative to it; default 1e-10 (Gaussian), 3e-5 (Laplace).
	Tol float64
	// MaxSweeps caps the sweeps of block coordinate descent; default 200.
	MaxSweeps int
	// DenseMaxCells is the largest domain the dense template accepts;
	// default 4096.
	DenseMaxCells int
	// Progress, when non-nil, receives dpsolve's progress events: one
	// with Stage "plan <template>" ("plan kron") after every sweep of block
	// coordinate descent (Step the sweep, Objective the objective so far),
	// one with Done set when a template finishes (its objective and, where
	// it has one, certified bound; the portfolio "best" sends its own after
	// its templates'), and from Run a final one with Stage "plan" and Done
	// set for the returned plan (its template as Note).
	Progress progress.Func
	// Accept, when non-nil, restricts the plan to strategies it accepts
	// (returns nil for): a caller that must measure or write the strategy
	// passes the check of its own formats. The portfolio skips a template
	// whose strategy it rejects (saying why in Tried), union falls back to
	// Kronecker parts only, and the marginals template to its table plan.
	Accept func(*Plan) error
}

// Accepts reports whether o.Accept accepts s (always, when Accept is nil).
func (o Options) Accepts(s *Plan) error {
	if o.Accept == nil || s == nil {
		return nil
	}
	return o.Accept(s)
}

// Stage is the progress stage name of a template: "plan " + its name.
func Stage(template string) string { return "plan " + template }

// ReportDone sends a template's final progress event for res to f; templates
// registered by other packages call it when they finish.
func ReportDone(f progress.Func, stage string, res *Result) {
	if !f.Enabled() {
		return
	}
	f(progress.Event{Stage: stage, Step: res.Sweeps, Objective: res.Objective, Bound: res.LowerBound,
		Gap: gap(res.Objective, res.LowerBound), Seconds: res.Seconds, Done: true, Note: res.Status.String()})
}

// gap is the relative gap (objective − bound)/objective; NaN when the bound
// is unknown.
func gap(objective, bound float64) float64 {
	if math.IsNaN(bound) || !(objective > 0) {
		return math.NaN()
	}
	return (objective - bound) / objective
}

// Template is a family of strategies with an optimizer for it. Other
// packages implement it too (the marginals template); package planner
// lists them all by name.
type Template interface {
	// Name is the template's name as the command line spells it ("kron").
	Name() string
	// Plan returns the best strategy of the family for w, or an error
	// wrapping ErrInput when the template does not apply to w (say why).
	Plan(ctx context.Context, w *domain.Kron, opt Options) (*Result, error)
}

// Factor is one attribute's strategy matrix Aᵢ (pᵢ×dᵢ). Its largest column
// norm (L2 for Gaussian, L1 for Laplace) is 1, so ⊗ᵢAᵢ has sensitivity 1.
type Factor struct {
	Attribute string
	A         *mat.Dense
}

// Part is one part of a union strategy, scaled by Weight and answering the
// named terms from its own measurements: a Kronecker product (Factors), or
// another template's plan of those terms alone (Strategy: a marginals
// family plan, a dense plan; Factors nil). Each part has sensitivity 1
// before scaling; for Gaussian privacy the weights satisfy Σ w² = 1 (the
// stack's L2 sensitivity is 1), for Laplace Σ w = 1 (L1).
type Part struct {
	Weight   float64
	Terms    []string
	Factors  []Factor
	Strategy *Plan
}

// Plan is a planned measurement strategy with sensitivity 1. Exactly one
// of Factors (a Kronecker product, template kron), Parts (a union of
// Kronecker products, template union), Matrix (an explicit n×n strategy
// over the flattened domain, template dense) or Other is set.
type Plan struct {
	// Template names the template that made it.
	Template string
	// Noise is the noise model whose sensitivity (L2 for Gaussian, L1 for
	// Laplace) it is normalized to.
	Noise calibrate.NoiseKind
	// Factors, in domain order, for a Kronecker strategy.
	Factors []Factor
	// Parts for a union of Kronecker strategies.
	Parts []Part
	// Matrix for an explicit strategy over all cells (row-major cells).
	Matrix *mat.Dense
	// Other holds a template-specific representation documented by the
	// template's own package (e.g. the marginals template's residual plan).
	Other any
}

// Kind returns "kron", "union", "dense" or "other".
func (s *Plan) Kind() string {
	switch {
	case s.Factors != nil:
		return "kron"
	case s.Parts != nil:
		return "union"
	case s.Matrix != nil:
		return "dense"
	}
	return "other"
}

// TermUnitError is the expected error of one workload term.
type TermUnitError struct {
	Term    string
	Queries int
	Error   float64 // expected total squared error of the term's queries per unit noise
}

// Tried records one template the portfolio ran.
type Tried struct {
	Template  string
	Objective float64 // NaN when the template failed or did not apply
	Seconds   float64
	Err       string // why it failed or did not apply ("" when it ran)
}

// Result is a planned strategy and its expected error.
type Result struct {
	// Template is the name of the template whose strategy this is.
	Template string
	Strategy *Plan
	// Objective is the expected total squared error per unit noise at
	// sensitivity 1, Σⱼ (error of term j).
	Objective float64
	// LowerBound is a certified lower bound on the objective of every
	// strategy (not only this template's), NaN when none is known;
	// LowerBoundSource says where it comes from.
	LowerBound       float64
	LowerBoundSource string
	// FamilyBound is a certified lower bound on the objective of every
	// strategy of the template's own family (FamilySource names the family
	// and the bound); 0 (the trivial bound) when none is known. Where the
	// family holds every strategy it equals LowerBound; for a non-convex
	// family (the pure-ε marginals weights) it says how far the optimizer
	// may be from the best of its family rather than from the best strategy.
	FamilyBound  float64
	FamilySource string
	// TermErrors has one entry per workload term, in spec order.
	TermErrors []TermUnitError
	// Sweeps is the number of block-coordinate-descent sweeps (0 when none
	// ran); History the objective after each.
	Sweeps  int
	History []float64
	// Status is status.Converged, status.IterationLimit or
	// status.Cancelled (the dense template passes on newton's Status).
	Status status.Status
	// Regularization is the largest θ (relative to mean diag) any block's
	// newton solve added to a singular Gram; 0 when every block was solved
	// exactly. The objective and bounds are always for the unregularized
	// workload.
	Regularization float64
	// DenseObjective is the dense template's certified optimum when it ran
	// for comparison (NaN otherwise); AboveDense is
	// (Objective − DenseObjective)/DenseObjective.
	DenseObjective float64
	AboveDense     float64
	// Tried lists the templates a portfolio ran (nil otherwise).
	Tried []Tried
	// Seconds is the wall time.
	Seconds float64
}

func (o Options) withDefaults() (Options, error) {
	if o.Noise == "" {
		o.Noise = calibrate.Gaussian
	}
	if o.Noise != calibrate.Gaussian && o.Noise != calibrate.Laplace {
		return o, inputerr.Errorf("plan", "noise must be %q or %q, got %q", calibrate.Gaussian, calibrate.Laplace, o.Noise)
	}
	if o.Tol == 0 {
		o.Tol = 1e-10
		if o.Noise == calibrate.Laplace {
			// p-Identity's L-BFGS stops at a relative change of 1e-5, and
			// its warm-started blocks keep lowering the error by less
			// than that for many sweeps. At 1e-4 the descents stopped in
			// their slow tail, where the stopping point moved the
			// objective by up to ±7e-4 when only rounding changed (HDMM's
			// benchmarks); at 3e-5 SF1 takes 10 sweeps instead of 8 and
			// ends 6e-5 lower (1e-5: 13 sweeps, 1.7e-4 lower).
			o.Tol = 3e-5
		}
	}
	if math.IsNaN(o.Tol) || o.Tol < 0 {
		return o, inputerr.Errorf("plan", "tolerance must be positive, got %g", o.Tol)
	}
	if o.MaxSweeps == 0 {
		o.MaxSweeps = 200
	}
	if o.MaxSweeps < 0 {
		return o, inputerr.Errorf("plan", "sweep limit must be positive, got %d", o.MaxSweeps)
	}
	if o.DenseMaxCells == 0 {
		o.DenseMaxCells = 4096
	}
	return o, nil
}
