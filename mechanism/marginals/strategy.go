package marginals

import (
	"math"
	"strconv"

	"github.com/dpsolve/dpsolve/model/domain"
)

// StrategyFile is the JSON form of a plan for `dpsolve plan --out DIR`
// (DIR/strategy.json): the template, the objective, the domain, and per
// residual subset its attributes and noise variance at unit sensitivity —
// everything Measure needs besides the data, since the residual basis is
// fixed (Helmert, see the package documentation).
type StrategyFile struct {
	Template  string `json:"template"` // "marginals"
	Objective string `json:"objective"`
	Privacy   string `json:"privacy"` // "gaussian": L2 sensitivity 1
	// Basis names the per-attribute residual basis of the measurements.
	Basis  string             `json:"basis"`
	Domain []domain.Attribute `json:"domain"`
	// TotalSquaredError, MaxVariance, LowerBound and Gap as in Plan;
	// LowerBound bounds the objective that was minimized.
	TotalSquaredError float64 `json:"total_squared_error"`
	MaxVariance       float64 `json:"max_variance"`
	LowerBound        float64 `json:"lower_bound"`
	Gap               float64 `json:"gap"`
	// Sensitivity2 is Σ_T Δ_T²/σ_T², 1 up to rounding.
	Sensitivity2 float64        `json:"squared_l2_sensitivity"`
	Residuals    []ResidualJSON `json:"residuals"`
	Marginals    []MarginalJSON `json:"marginals"`
}

// ResidualJSON is one measured residual subset.
type ResidualJSON struct {
	Attributes []string `json:"attributes"`
	Coords     float64  `json:"coords"`
	Variance   float64  `json:"variance"`
}

// MarginalJSON is one workload marginal's planned error; CellVariance is
// null for a marginal that is not estimable.
type MarginalJSON struct {
	Attributes        []string `json:"attributes"`
	Weight            float64  `json:"weight"`
	Cells             float64  `json:"cells"`
	CellVariance      *float64 `json:"cell_variance"`
	TotalSquaredError float64  `json:"total_squared_error"`
}

// StrategyFile returns the plan's JSON form; names are the attribute names
// in domain order (nil: "a0", "a1", …).
func (p *Plan) StrategyFile(names []string) *StrategyFile {
	if len(names) != len(p.Sizes) {
		names = make([]string, len(p.Sizes))
		for i := range names {
			names[i] = "a" + itoa(i)
		}
	}
	named := func(s []int) []string {
		out := make([]string, len(s))
		for i, a := range s {
			out[i] = names[a]
		}
		return out
	}
	f := &StrategyFile{Template: TemplateName, Objective: string(p.Objective), Privacy: "gaussian",
		Basis:             "helmert: residual coordinates (1,…,1,−j,0,…)/√(j(j+1)), j = 1…d−1, per attribute; totals 1ᵀ",
		TotalSquaredError: p.TotalSquaredError, MaxVariance: p.MaxVariance, LowerBound: p.LowerBound, Gap: p.Gap}
	for i, d := range p.Sizes {
		f.Domain = append(f.Domain, domain.Attribute{Name: names[i], Size: d})
	}
	for _, r := range p.Residuals {
		f.Sensitivity2 += r.Sensitivity2 / r.Variance
		f.Residuals = append(f.Residuals, ResidualJSON{Attributes: named(r.Attrs), Coords: r.Coords, Variance: r.Variance})
	}
	for _, m := range p.Marginals {
		mj := MarginalJSON{Attributes: named(m.Attrs), Weight: m.Weight, Cells: m.Cells, TotalSquaredError: m.TotalSquaredError}
		if !math.IsInf(m.CellVariance, 0) {
			mj.CellVariance = &[]float64{m.CellVariance}[0]
		}
		f.Marginals = append(f.Marginals, mj)
	}
	return f
}

func itoa(i int) string { return strconv.Itoa(i) }

// PureStrategyFile is the JSON form of a PurePlan for `dpsolve plan
// --privacy pure --out DIR`: per measured table its attributes and Laplace
// scale at unit L1 sensitivity (ε = 1; divide by ε for a budget), and the
// workload marginals' GLS variances per unit Laplace variance 2/ε².
type PureStrategyFile struct {
	Template  string             `json:"template"` // "marginals"
	Objective string             `json:"objective"`
	Privacy   string             `json:"privacy"` // "pure": L1 sensitivity 1
	Mechanism string             `json:"mechanism"`
	Domain    []domain.Attribute `json:"domain"`
	// TotalSquaredError and MaxVariance are the GLS answers' (as in
	// PurePlan); DirectError is the minimized direct-estimator objective.
	TotalSquaredError float64 `json:"total_squared_error"`
	MaxVariance       float64 `json:"max_variance"`
	DirectError       float64 `json:"direct_estimator_error"`
	// L1Sensitivity is Σ_A 1/b_A, 1 up to rounding.
	L1Sensitivity float64         `json:"l1_sensitivity"`
	Tables        []PureTableJSON `json:"tables"`
	Marginals     []MarginalJSON  `json:"marginals"`
}

// PureTableJSON is one measured table of a pure plan.
type PureTableJSON struct {
	Attributes []string `json:"attributes"`
	Cells      float64  `json:"cells"`
	// Scale is b_A at ε = 1; Share is the fraction 1/b_A of ε it spends.
	Scale float64 `json:"scale"`
	Share float64 `json:"epsilon_share"`
}

// StrategyFile returns the plan's JSON form; names as in Plan.StrategyFile.
func (pp *PurePlan) StrategyFile(names []string) *PureStrategyFile {
	g := pp.base.StrategyFile(names)
	f := &PureStrategyFile{Template: TemplateName, Objective: string(pp.Objective), Privacy: "pure",
		Mechanism:         "discrete Laplace on every marginal table; generalized least squares in the residual basis",
		Domain:            g.Domain,
		TotalSquaredError: pp.TotalSquaredError, MaxVariance: pp.MaxVariance, DirectError: pp.DirectValue,
		Marginals: g.Marginals}
	for _, tb := range pp.Tables {
		f.L1Sensitivity += 1 / tb.Scale
		attrs := make([]string, len(tb.Attrs))
		for i, a := range tb.Attrs {
			attrs[i] = g.Domain[a].Name
		}
		f.Tables = append(f.Tables, PureTableJSON{Attributes: attrs, Cells: tb.Cells, Scale: tb.Scale, Share: 1 / tb.Scale})
	}
	return f
}
