package tables

import (
	"fmt"
	"math"
	"strings"

	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/status"
)

// Estimator describes the post-processing estimator of a release
// (--nonnegative, --integer) and what it did: its method, objective and
// bias, the released total every table keeps, and per table its grand
// total and its largest change from the least-squares answer.
type Estimator struct {
	// Method names the algorithm; Objective what it minimizes, subject to
	// what; Bias what it does to the answers.
	Method    string `json:"method"`
	Objective string `json:"objective"`
	Bias      string `json:"bias"`
	// LeastSquaresTotal is the least-squares estimate of the number of
	// records (unbiased) and LeastSquaresTotalStd its standard deviation.
	LeastSquaresTotal    float64 `json:"least_squares_total"`
	LeastSquaresTotalStd float64 `json:"least_squares_total_stddev"`
	// ReleasedTotal is the grand total every released table keeps:
	// max(LeastSquaresTotal, 0) with NonNegative, rounded with Integer.
	ReleasedTotal float64 `json:"released_total"`
	// Iterations, Status and Step describe the iterative part (histogram
	// plans: FISTA's iterations and the last step's largest cell change,
	// in counts; marginals plans: Dykstra's sweeps): Status is
	// status.Converged when the tolerance was met, status.IterationLimit
	// when the cap stopped it first (the tables are then still
	// non-negative, consistent and of the released total, only farther
	// from the optimum).
	Iterations int           `json:"iterations"`
	Status     status.Status `json:"status"`
	Step       float64       `json:"last_step,omitempty"`
	// MaxInconsistency is, after integer rounding, the largest |difference|
	// between two released tables on a sub-marginal they share (0: exactly
	// consistent).
	MaxInconsistency *float64 `json:"max_inconsistency,omitempty"`
	// Tables has one entry per workload table (a product of a term).
	Tables []TableChange `json:"tables"`
}

// TableChange is one released table's grand total and its largest change
// from the least-squares answer.
type TableChange struct {
	// Term is the term's name; Table describes the product ("{age,sex}"
	// for a marginal, the blocks otherwise).
	Term  string `json:"term"`
	Table string `json:"table"`
	// GrandTotal is the sum of the table's cells — for a marginal (a
	// product of identity and total blocks) the count of all records;
	// nil for other products, whose rows need not partition the records.
	GrandTotal *float64 `json:"grand_total,omitempty"`
	// MaxChange is max |released − least-squares| over the table's cells.
	MaxChange float64 `json:"max_change_from_least_squares"`
}

// histogramMethod names the histogram plans' estimator for pp, before
// integerMethod adds the rounding.
func histogramMethod(pp Publishable) (method, objective, bias string) {
	if !pp.NonNegative {
		return "", "", ""
	}
	method = "constrained least squares on the histogram (FISTA with restarts, projection onto the scaled simplex)"
	objective = "minimize the sum of squared residuals of the noisy measurements, ½Σ_k‖w_k·A_k·x − y_k‖², over histograms x ≥ 0 with Σx = the least-squares total; every table is W·x"
	bias = "biased toward the non-negative histograms: mass moves from cells the noise made large to cells it made negative, so small counts are biased upward and large ones downward; the total is not biased (the least-squares total); the stddev column describes the least-squares answers"
	return method, objective, bias
}

// integerMethod adds the integer step of histogram plans: how is "tables"
// (controlled rounding of the products' marginals) or "histogram"
// (cumulative rounding of the histogram), see integerAnswers.
func integerMethod(pp Publishable, how string) (method, objective, bias string) {
	method, objective, bias = histogramMethod(pp)
	if !pp.NonNegative {
		method = "least squares"
		objective = "the least-squares histogram x̂ = A⁺y (per union part)"
		bias = "none before rounding (unbiased least squares); cells may be negative"
	}
	if how == "tables" {
		method += ", then controlled rounding of the tables"
		objective += "; then the marginal of the histogram on every product's attributes (at most two) rounded to integers with the rounded total and common rounded one-way margins, each product answered from its rounded marginal"
		bias += "; rounding moves every marginal cell by less than 1"
	} else {
		method += ", then cumulative rounding of the histogram in row-major order"
		objective += "; then cell i of the histogram becomes round(Cᵢ) − round(Cᵢ₋₁), Cᵢ its running sum, and every table is W·x"
		bias += "; rounding moves every run of consecutive histogram cells by less than 1 in total (a table over late attributes sums many runs)"
	}
	return method, objective, bias
}

// marginalsMethod names the marginals plans' estimator for pp.
func marginalsMethod(pp Publishable) (method, objective, bias string) {
	switch {
	case pp.NonNegative:
		method = "weighted least squares over consistent non-negative tables with the least-squares total (Dykstra's alternating projections)"
		objective = "minimize Σ_S ‖t_S − t̂_S‖²/v_S over tables t that are consistent (marginals of one set of residual coordinates), non-negative and sum to the least-squares total; t̂_S the least-squares table, v_S its cell variance"
		bias = "biased toward the non-negative tables: mass moves from large cells to cells the noise made negative (small counts up, large ones down); the total is not biased; the stddev column describes the least-squares answers"
		if pp.Integer {
			method += ", then controlled rounding"
			objective += "; then rounded to integers with the rounded total (tables of at most two attributes to common rounded one-way margins, others by largest remainders)"
			bias += "; rounding moves every cell by less than 1"
		}
	case pp.Integer:
		method = "least squares, then controlled rounding"
		objective = "the least-squares tables rounded to integers with the rounded total (tables of at most two attributes to common rounded one-way margins, others by largest remainders)"
		bias = "rounding only: every cell moves by less than 1; cells may be negative"
	}
	return method, objective, bias
}

// tableChanges compares the released answers with the least-squares ones,
// table by table.
func (w *explicitWorkload) tableChanges(ans, ls [][]float64) []TableChange {
	var out []TableChange
	for ti := range w.Terms {
		t := &w.Terms[ti]
		off := 0
		for pi := range t.Products {
			p := &t.Products[pi]
			q := p.Queries()
			c := TableChange{Term: t.Name, Table: w.tableName(p)}
			sum := 0.0
			for i := off; i < off+q; i++ {
				c.MaxChange = math.Max(c.MaxChange, math.Abs(ans[ti][i]-ls[ti][i]))
				sum += ans[ti][i]
			}
			if p.Set != nil {
				c.GrandTotal = &sum
			}
			off += q
			out = append(out, c)
		}
	}
	return out
}

// tableName describes a product: "{age,sex}" for a marginal, "{}" for the
// grand total, otherwise each restricted attribute with its block kind.
func (w *explicitWorkload) tableName(p *explicitProduct) string {
	p = p.expanded()
	var parts []string
	for i, k := range p.Kinds {
		switch {
		case p.Set != nil && k == domain.BlockIdentity:
			parts = append(parts, w.Domain[i].Name)
		case p.Set == nil && k != domain.BlockTotal:
			name := string(k)
			if i < len(p.Sources) && p.Sources[i] != "" {
				name = p.Sources[i]
			}
			parts = append(parts, fmt.Sprintf("%s:%s", w.Domain[i].Name, name))
		}
	}
	return "{" + strings.Join(parts, ",") + "}"
}
