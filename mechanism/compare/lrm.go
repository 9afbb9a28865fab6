package compare

// The Low-Rank Mechanism's row. LRM (Yuan et al., VLDB 2012) is the
// optimizer for ε-DP: under Laplace noise it solves W ≈ B·L with the columns
// of L in the ℓ1 ball and reports 2Δ₁²·tr(BᵀB)/ε². Under Gaussian noise the
// optimized row is already the certified optimum of the same (ε,δ) problem
// class (LRM with the ℓ2 ball is the matrix mechanism restricted to r rows),
// so the row is skipped there.

import (
	"fmt"

	"github.com/dpsolve/dpsolve/mechanism/lrm"
	"github.com/dpsolve/dpsolve/privacy/accounting"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

// lrmRow is the Low-Rank Mechanism's row (see builtinRows).
func lrmRow() Candidate {
	return Candidate{
		Name:    "lrm",
		Summary: "Low-Rank Mechanism W ≈ B·L, ε-DP (--mechanism laplace only)",
		Default: true,
		Build:   buildCompareLRM,
	}
}

func buildCompareLRM(env *Env) (*Outcome, error) {
	if env.Noise.Mechanism != calibrate.Laplace {
		return nil, fmt.Errorf("%w: the LRM row is for --mechanism laplace (ε-DP); under Gaussian noise see the optimized row", ErrSkip)
	}
	// LRM's optimum depends on W only through V = WᵀW, so a factor of the
	// Gram serves every workload, including those without an explicit W.
	f, err := lrm.GramFactor(env.Gram)
	if err != nil {
		return nil, err
	}
	n, m := env.Workload.Domain(), env.Workload.Queries()
	fmt.Fprintf(env.Log, "  lrm: rank(W) = %d, solving …\n", func() int { k, _ := f.Dims(); return k }())
	res, err := lrm.Solve(env.Ctx, f, &lrm.Options{Noise: calibrate.Laplace, Progress: env.Progress})
	if err != nil {
		return nil, err
	}
	pure, err := calibrate.PureDP(env.Noise.Budget.Epsilon())
	if err != nil {
		return nil, err
	}
	total, err := res.ExpectedNoiseError(pure)
	if err != nil {
		return nil, err
	}
	rep, err := accounting.NewReport("lrm", n, m, total)
	if err != nil {
		return nil, err
	}
	rep.Rows = res.Rank
	rep.L1Sensitivity = res.Sensitivity
	note := fmt.Sprintf("r = %d rows for rank %d; tr(BᵀB) = %.6g, SVD upper bound of Yuan et al. %.6g; %d iterations (%d L-steps)",
		res.Rank, res.WorkloadRank, res.Objective, res.Bounds.SVDUpper, res.Iterations, res.InnerIterations)
	if res.PIdentity {
		note = fmt.Sprintf("r = %d rows (p-Identity start, p = %d, %d L-BFGS iterations) for rank %d; tr(BᵀB) = %.6g, SVD upper bound of Yuan et al. %.6g",
			res.Rank, res.PIdentityRows, res.PIdentityIterations, res.WorkloadRank, res.Objective, res.Bounds.SVDUpper)
	}
	if res.Fallback {
		note += "; returned the exact SVD decomposition"
	}
	if res.Identity {
		note += "; returned Identity, better than the optimizer's result"
	}
	return &Outcome{Report: rep, Note: note}, nil
}
