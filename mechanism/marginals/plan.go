package marginals

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
)

// Objective selects what a plan minimizes.
type Objective string

const (
	// Sum minimizes the expected total squared error Σ_S w_S²·Σ_cells var,
	// the unit of every other dpsolve objective; closed form.
	Sum Objective = "sum"
	// Max minimizes the largest per-query variance max_S w_S²·var_S, by a
	// certified barrier (interior-point) method.
	Max Objective = "max"
)

// Options configures NewPlan. The zero value (or nil) selects the defaults.
type Options struct {
	// Tol is the relative duality gap at which the Max solver stops;
	// default 1e-8. Sum plans are exact.
	Tol float64
	// MaxIter caps the Max solver's Newton steps; default 500.
	MaxIter int
}

// Residual is one measured residual subset of a plan.
type Residual struct {
	// Attrs is the residual subset T (increasing attribute positions).
	Attrs []int
	// Coords is dim_T = Π_{a∈T}(d_a−1), the number of noisy values measured.
	Coords float64
	// Variance is σ_T², the noise variance of each measured value at the
	// plan's normalisation (unit L2 sensitivity of the whole plan).
	Variance float64
	// Sensitivity2 is Δ_T² = Π_{a∈T}(d_a−1)/d_a, the squared L2
	// sensitivity of the residual query Q_T; Σ Sensitivity2/Variance = 1.
	Sensitivity2 float64
}

// MarginalError is the error of one workload marginal under a plan.
type MarginalError struct {
	// Attrs and Weight are the marginal's attribute set and weight.
	Attrs  []int
	Weight float64
	// Cells is the marginal's number of queries Π_{a∈S} d_a.
	Cells float64
	// CellVariance is the variance of every (unweighted) cell of the
	// reconstructed marginal; +Inf when the marginal is not estimable.
	CellVariance float64
	// TotalSquaredError is Weight²·Cells·CellVariance (0 for weight 0).
	TotalSquaredError float64
	// Estimable is false for a weight-0 marginal whose residuals the plan
	// does not measure.
	Estimable bool
}

// Plan is an optimal residual strategy for a marginal workload, normalised
// to L2 sensitivity 1, with its errors and certificate.
type Plan struct {
	// Sizes are the attribute sizes in domain order; Sets the workload.
	Sizes []int
	Sets  []Set
	// Objective is what the plan minimizes.
	Objective Objective
	// Residuals are the measured residual subsets, by size then
	// lexicographically.
	Residuals []Residual
	// Marginals has one entry per workload set, in the workload's order.
	Marginals []MarginalError
	// TotalSquaredError is Σ_S w_S²·Cells_S·var_S, the expected total
	// squared error of the weighted workload per unit noise (the unit of
	// `dpsolve solve`'s objective).
	TotalSquaredError float64
	// MaxVariance is max_S w_S²·var_S, the largest per-query variance.
	MaxVariance float64
	// Value is the minimized objective: TotalSquaredError for Sum,
	// MaxVariance for Max.
	Value float64
	// LowerBound is a certified lower bound on Value over every strategy
	// (the SVD bound for Sum; the Lagrange dual bound for Max), and Gap the
	// relative gap (Value − LowerBound)/Value, clamped at 0.
	LowerBound float64
	Gap        float64
	// Iterations is the number of Newton steps of the Max solver (0 for Sum).
	Iterations int
	// Seconds is the planning time.
	Seconds float64

	lat *lattice
}

// NewPlan computes the optimal residual plan for the marginals sets over a
// domain with the given attribute sizes. Bad input (see the package
// documentation of Set and KWay) yields an error wrapping ErrInput.
func NewPlan(sizes []int, sets []Set, obj Objective, opt *Options) (*Plan, error) {
	return NewPlanContext(context.Background(), sizes, sets, obj, opt)
}

// NewPlanContext is NewPlan with a context: cancelling it stops the Max
// solver at its next Newton step with an error wrapping ctx.Err().
func NewPlanContext(ctx context.Context, sizes []int, sets []Set, obj Objective, opt *Options) (*Plan, error) {
	start := time.Now()
	if ctx == nil {
		ctx = context.Background()
	}
	var o Options
	if opt != nil {
		o = *opt
	}
	if o.Tol == 0 {
		o.Tol = 1e-8
	}
	if o.MaxIter == 0 {
		o.MaxIter = 500
	}
	if math.IsNaN(o.Tol) || o.Tol <= 0 || o.Tol >= 1 {
		return nil, errorf("tolerance must lie in (0, 1), got %v", o.Tol)
	}
	if o.MaxIter < 0 {
		return nil, errorf("iteration limit must be positive, got %d", o.MaxIter)
	}
	if obj == "" {
		obj = Sum
	}
	if obj != Sum && obj != Max {
		return nil, errorf("objective %q is not %q or %q", obj, Sum, Max)
	}
	sets, err := validate(sizes, sets)
	if err != nil {
		return nil, err
	}
	lat, err := buildLattice(sizes, sets)
	if err != nil {
		return nil, err
	}
	p := &Plan{Sizes: slices.Clone(sizes), Sets: sets, Objective: obj, lat: lat}
	p.Residuals = make([]Residual, len(lat.res))
	for i, t := range lat.res {
		dim, d2 := 1.0, 1.0
		for _, a := range t {
			d := float64(sizes[a])
			dim *= d - 1
			d2 *= (d - 1) / d
		}
		p.Residuals[i] = Residual{Attrs: t, Coords: dim, Sensitivity2: d2}
	}
	switch obj {
	case Sum:
		p.planSum()
		p.LowerBound = svdBound(sizes, sets, lat)
	case Max:
		lb, iters, err := p.planMax(ctx, o)
		if err != nil {
			return nil, err
		}
		p.LowerBound, p.Iterations = lb, iters
	}
	if err := p.evaluate(); err != nil {
		return nil, err
	}
	switch obj {
	case Sum:
		p.Value = p.TotalSquaredError
	case Max:
		p.Value = p.MaxVariance
	}
	p.Gap = math.Max(0, (p.Value-p.LowerBound)/p.Value)
	p.Seconds = time.Since(start).Seconds()
	return p, nil
}

// planSum sets σ_T² = Δ_T/√b_T · Σ_T' Δ_T'√b_T' (Cauchy–Schwarz; see the
// package documentation), b_T = Σ_{S⊇T} w_S² Cells_S p_{S,T}.
func (p *Plan) planSum() {
	b := make([]float64, len(p.Residuals))
	p.accumulate(b, nil)
	k := 0.0
	for i, r := range p.Residuals {
		k += math.Sqrt(r.Sensitivity2 * b[i])
	}
	for i := range p.Residuals {
		r := &p.Residuals[i]
		r.Variance = math.Sqrt(r.Sensitivity2/b[i]) * k
	}
}

// accumulate adds, for every residual T, Σ_{S⊇T} m_S w_S² Cells_S p_{S,T}
// into dst, with m_S = mult[S] (1 when mult is nil) — the coefficient of
// σ_T² in the (multiplier-weighted) objective.
func (p *Plan) accumulate(dst, mult []float64) {
	l := p.lat
	for i, s := range p.Sets {
		if s.Weight == 0 {
			continue
		}
		w := s.Weight * s.Weight
		if mult == nil {
			w *= cells(p.Sizes, s.Attrs)
		} else {
			w *= mult[i]
		}
		for q := l.lo[i]; q < l.hi[i]; q++ {
			dst[l.idx[q]] += w * l.coef[q]
		}
	}
}

func cells(sizes, attrs []int) float64 {
	c := 1.0
	for _, a := range attrs {
		c *= float64(sizes[a])
	}
	return c
}

// evaluate computes every marginal's variance from the residual variances
// (var_S = Σ_{T⊆S} σ_T² p_{S,T}) and the plan's totals.
func (p *Plan) evaluate() error {
	l := p.lat
	for _, r := range p.Residuals {
		if math.IsNaN(r.Variance) || math.IsInf(r.Variance, 0) || r.Variance <= 0 {
			return errorf("the domain is too large for floating point: residual %v gets noise variance %v", r.Attrs, r.Variance)
		}
	}
	p.Marginals = make([]MarginalError, len(p.Sets))
	p.TotalSquaredError, p.MaxVariance = 0, 0
	for i, s := range p.Sets {
		m := MarginalError{Attrs: s.Attrs, Weight: s.Weight, Cells: cells(p.Sizes, s.Attrs), Estimable: l.estimable[i]}
		if m.Estimable {
			for q := l.lo[i]; q < l.hi[i]; q++ {
				m.CellVariance += p.Residuals[l.idx[q]].Variance * l.coef[q]
			}
		} else {
			m.CellVariance = math.Inf(1)
		}
		if s.Weight > 0 {
			w := s.Weight * s.Weight
			m.TotalSquaredError = w * m.Cells * m.CellVariance
			p.TotalSquaredError += m.TotalSquaredError
			p.MaxVariance = math.Max(p.MaxVariance, w*m.CellVariance)
		}
		p.Marginals[i] = m
	}
	if math.IsInf(p.TotalSquaredError, 0) || math.IsNaN(p.TotalSquaredError) || p.TotalSquaredError <= 0 {
		return errorf("the domain is too large for floating point: the expected error is %v", p.TotalSquaredError)
	}
	return nil
}

// svdBound returns the SVD bound (Σᵢ σᵢ(W))²/n of the weighted workload from
// its spectrum: W's squared singular values are λ_T = Σ_{S⊇T} w_S² c_S with
// multiplicity dim_T, so the bound is (Σ_T dim_T √(Σ_{S⊇T} w_S²/Cells_S))².
// It is computed from the spectrum only, independently of the strategy.
func svdBound(sizes []int, sets []Set, l *lattice) float64 {
	lam := make([]float64, len(l.res))
	for i, s := range sets {
		if s.Weight == 0 {
			continue
		}
		w := s.Weight * s.Weight / cells(sizes, s.Attrs)
		for q := l.lo[i]; q < l.hi[i]; q++ {
			lam[l.idx[q]] += w
		}
	}
	sum := 0.0
	for i, t := range l.res {
		sum += cells(sizes, t) * residualShrink(sizes, t) * math.Sqrt(lam[i])
	}
	return sum * sum
}

// residualShrink returns Π_{a∈T}(d_a−1)/d_a, so cells·shrink = dim_T.
func residualShrink(sizes, t []int) float64 {
	s := 1.0
	for _, a := range t {
		s *= float64(sizes[a]-1) / float64(sizes[a])
	}
	return s
}

// String summarizes the plan on one line.
func (p *Plan) String() string {
	return fmt.Sprintf("marginals %s plan: %d marginals, %d residual subsets, total squared error %.10g, max variance %.6g, lower bound %.10g, gap %.2g",
		p.Objective, len(p.Sets), len(p.Residuals), p.TotalSquaredError, p.MaxVariance, p.LowerBound, p.Gap)
}

func formatG(x float64) string { return strconv.FormatFloat(x, 'g', 3, 64) }
