package sdp

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/mechanism/lrm"
	"github.com/dpsolve/dpsolve/mechanism/strategy"
	"github.com/dpsolve/dpsolve/newton"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

// Verification checks a CSDP solution independently: it recovers the point,
// measures its feasibility itself, and compares the objective with the
// certified Newton optimum of the same V.
type Verification struct {
	// Point is the recovered (X, A, objective).
	Point *Point
	// MaxInfeasibility is the most negative eigenvalue of the slack
	// Σ yᵢFᵢ − F₀ over all blocks, negated (0: feasible), computed here
	// rather than taken from CSDP.
	MaxInfeasibility float64
	// NewtonObjective and NewtonSeconds are newton.Solve's certified
	// min tr(V X⁻¹) and its time; RelativeDifference is
	// |SDP − Newton|/|Newton|.
	NewtonObjective, NewtonSeconds, RelativeDifference float64
	// Exact is the ε-DP comparison for the exact forms (nil for Approx).
	Exact *ExactReport
}

// ExactReport sets the exact forms' relaxation value beside the ε-DP
// objective J₁ = Δ₁²·tr(V (AᵀA)⁻¹) of strategies built from it and of the
// baselines. A nil objective means the strategy cannot answer the workload
// (the note says why).
type ExactReport struct {
	RelaxationValue   float64            `json:"relaxation_value"`
	AL1Sensitivity    float64            `json:"a_l1_sensitivity"`
	SDPStrategy       *float64           `json:"sdp_strategy_objective"`
	SDPStrategyNote   string             `json:"sdp_strategy_note,omitempty"`
	CholXStrategy     *float64           `json:"chol_x_strategy_objective"`
	CholXStrategyNote string             `json:"chol_x_strategy_note,omitempty"`
	Baselines         map[string]float64 `json:"baselines"`
}

// Verify checks the CSDP result res of formulation fm for the workload Gram
// v (see Verification). Cancelling ctx stops the Newton comparison and the
// baselines; Verify then returns ctx.Err().
func Verify(ctx context.Context, fm *Formulation, v *mat.SymDense, res *Result) (*Verification, error) {
	pt, err := fm.Recover(res.Solution.Y)
	if err != nil {
		return nil, err
	}
	slack, err := fm.Problem.Slack(res.Solution.Y)
	if err != nil {
		return nil, err
	}
	out := &Verification{Point: pt}
	for _, b := range slack {
		ev, err := b.MinEigenvalue()
		if err != nil {
			return nil, err
		}
		out.MaxInfeasibility = math.Max(out.MaxInfeasibility, -ev)
	}
	nres, err := newton.Solve(ctx, v, nil)
	if err != nil {
		return nil, fmt.Errorf("newton: %w", err)
	}
	out.NewtonObjective, out.NewtonSeconds = nres.Objective, nres.Seconds
	out.RelativeDifference = math.Abs(pt.Objective-nres.Objective) / math.Abs(nres.Objective)
	if fm.Form != Approx {
		out.Exact = exactReport(ctx, v, pt)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// exactReport evaluates J₁ of the relaxation's strategy A, of A = chol(X)
// (the rounding that uses the relaxation's X), of the data-independent
// baselines of mechanism/strategy's registry and of the Low-Rank
// Mechanism's L.
func exactReport(ctx context.Context, v *mat.SymDense, pt *Point) *ExactReport {
	n := v.SymmetricDim()
	rep := &ExactReport{RelaxationValue: pt.Objective, Baselines: map[string]float64{}}
	for j := 0; j < n; j++ {
		s := 0.0
		for k := 0; k < n; k++ {
			s += math.Abs(pt.A.At(k, j))
		}
		rep.AL1Sensitivity = math.Max(rep.AL1Sensitivity, s)
	}
	eval := func(label string, a *mat.Dense) (*float64, string) {
		st, err := strategy.FromMatrix(label, a)
		if err != nil {
			return nil, err.Error()
		}
		j, err := StrategyObjective(v, st, calibrate.Laplace)
		if err != nil {
			return nil, err.Error()
		}
		return &j, ""
	}
	rep.SDPStrategy, rep.SDPStrategyNote = eval("sdp-a", pt.A)
	var ch mat.Cholesky
	if ch.Factorize(pt.X) {
		var u mat.TriDense
		ch.UTo(&u)
		rep.CholXStrategy, rep.CholXStrategyNote = eval("chol-x", mat.DenseCopyOf(&u))
	} else {
		rep.CholXStrategyNote = "X is not positive definite"
	}
	for _, b := range strategy.Baselines() {
		if b.NeedsGram {
			continue
		}
		if s, err := b.Build(ctx, n, v, nil); err == nil {
			if j, err := StrategyObjective(v, s, calibrate.Laplace); err == nil {
				rep.Baselines[b.Name] = j
			}
		}
	}
	// The Low-Rank Mechanism's L (columns in the unit ℓ1 ball) as a
	// strategy with least-squares reconstruction; its own answers B·y cost
	// at least this much. ctx stops it (lrm returns its fallback and the
	// error; the row is then left out).
	if f, err := lrm.GramFactor(v); err == nil {
		if res, err := lrm.Solve(ctx, f, &lrm.Options{Noise: calibrate.Laplace}); err == nil {
			if j, _ := eval("lrm", res.L); j != nil {
				rep.Baselines["lrm"] = *j
			}
		}
	}
	return rep
}
