package marginals

import (
	"fmt"
	"math"
	"slices"

	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

// WeightedTable is one marginal table of a pure family plan: the table on
// Attrs measured as Weight·M_A x plus unit Laplace noise, i.e. with Laplace
// noise of scale 1/Weight at ε = 1 (the weights sum to 1: L1 sensitivity 1).
type WeightedTable struct {
	Attrs  []int
	Weight float64
}

// FamilyPlan is a plan of the marginals family for a workload of any
// Kronecker products (see the family documentation in family.go): under
// Gaussian noise residual measurements with closed-form variances
// (Residuals, unit L2 sensitivity), under pure ε weighted marginal tables
// over every attribute subset (Tables, unit L1 sensitivity). It is
// Strategy.Other of the marginals template for workloads that are not
// only marginals, and for pure-ε plans whose tables the workload does not
// all name.
type FamilyPlan struct {
	// Sizes are the attribute sizes in domain order.
	Sizes []int
	// Pure is true for an L1 (ε-DP) plan.
	Pure bool
	// Residuals are the Gaussian plan's residual measurements (as in Plan).
	Residuals []Residual
	// Tables are the pure plan's measured tables, by size then
	// lexicographically.
	Tables []WeightedTable
	// TotalSquaredError is the expected total squared error of the weighted
	// workload per unit noise variance at sensitivity 1.
	TotalSquaredError float64
	// TermErrors has one entry per workload term.
	TermErrors []float64
	// LargestTable is the error of measuring only the marginal on every
	// attribute some query resolves (Identity, or better where some
	// attribute is only ever totaled); the plan is never worse.
	LargestTable float64
	// FamilyBound is a certified lower bound on the error of every strategy
	// of the family: for Gaussian plans the plan's own error (the closed
	// form is the family's optimum); for pure plans the larger of the L2
	// relaxation's Frank–Wolfe bound and the residual closed form.
	FamilyBound float64
	// Iterations counts the pure descent's steps (0 for Gaussian plans);
	// Start names the start the kept weights descended from.
	Iterations int
	Start      string
}

// String summarizes the plan on one line.
func (fp *FamilyPlan) String() string {
	if fp.Pure {
		return fmt.Sprintf("marginals family pure plan: %d tables, total squared error %.10g (largest table alone %.6g), family bound %.6g",
			len(fp.Tables), fp.TotalSquaredError, fp.LargestTable, fp.FamilyBound)
	}
	return fmt.Sprintf("marginals family plan: %d residual subsets, total squared error %.10g (optimal in the residual family)",
		len(fp.Residuals), fp.TotalSquaredError)
}

// NewFamilyPlan plans w in the marginals family for the noise model:
// residual measurements for calibrate.Gaussian (L2 sensitivity), weighted
// marginal tables for calibrate.Laplace (L1, pure ε). Bad input (another
// noise model, or more than MaxFamilyAttributes attributes resolved by some
// query) is an error wrapping ErrInput.
func NewFamilyPlan(w *domain.Kron, noise calibrate.NoiseKind) (*FamilyPlan, error) {
	if noise != calibrate.Gaussian && noise != calibrate.Laplace {
		return nil, inputerr.Errorf("marginals", "unknown noise %q (want laplace or gaussian)", noise)
	}
	return newFamilyPlan(w, noise == calibrate.Laplace, nil)
}

// newFamilyPlan is NewFamilyPlan with extra pure starting weights over
// attribute sets (nil for none).
func newFamilyPlan(w *domain.Kron, pure bool, extra []WeightedTable) (*FamilyPlan, error) {
	f, err := newFamily(w)
	if err != nil {
		return nil, err
	}
	fp := &FamilyPlan{Sizes: slices.Clone(f.sizes), Pure: pure, LargestTable: f.identityError()}
	resEll, resValue := f.residualOptimum()
	if !pure {
		fp.TotalSquaredError, fp.FamilyBound = resValue, resValue
		fp.TermErrors = f.termErrors(resEll)
		for m, l := range resEll {
			if l > 0 {
				attrs := f.attrsOf(m)
				d2 := 1.0
				for _, a := range attrs {
					d := float64(f.sizes[a])
					d2 *= (d - 1) / d
				}
				fp.Residuals = append(fp.Residuals, Residual{Attrs: attrs, Coords: f.dim[m], Variance: f.gamma[m] / l, Sensitivity2: d2})
			}
		}
		sortResiduals(fp.Residuals)
		return fp, fp.check()
	}
	var x []float64
	if extra != nil {
		x = make([]float64, f.n)
		for _, t := range extra {
			if m, ok := f.maskOf(t.Attrs); ok {
				x[m] += t.Weight
			}
		}
	}
	r := f.optimizePure(x)
	ell := f.ellOf(r.theta)
	fp.TotalSquaredError = f.errorOf(ell)
	fp.TermErrors = f.termErrors(ell)
	fp.FamilyBound = math.Max(r.bound, resValue*(1-1e-12))
	fp.Iterations, fp.Start = r.iterations, r.start
	for m, v := range r.theta {
		if v > 0 {
			fp.Tables = append(fp.Tables, WeightedTable{Attrs: f.attrsOf(m), Weight: v})
		}
	}
	slices.SortFunc(fp.Tables, func(a, b WeightedTable) int {
		if c := len(a.Attrs) - len(b.Attrs); c != 0 {
			return c
		}
		return slices.Compare(a.Attrs, b.Attrs)
	})
	return fp, fp.check()
}

func sortResiduals(rs []Residual) {
	slices.SortFunc(rs, func(a, b Residual) int {
		if c := len(a.Attrs) - len(b.Attrs); c != 0 {
			return c
		}
		return slices.Compare(a.Attrs, b.Attrs)
	})
}

// check refuses a plan whose error is not a finite positive number (a
// domain too large for floating point).
func (fp *FamilyPlan) check() error {
	if e := fp.TotalSquaredError; math.IsNaN(e) || math.IsInf(e, 0) || e <= 0 {
		return errorf("the domain is too large for floating point: the expected error is %v", e)
	}
	return nil
}
