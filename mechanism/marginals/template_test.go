package marginals

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/dpsolve/dpsolve/mechanism/plan"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/newton"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

const templateSpec = `{"domain": [{"name": "a", "size": 2}, {"name": "b", "size": 3}, {"name": "c", "size": 4}],
 "workload": [{"name": "m", "marginals": {"upto": 1}},
              {"name": "ac", "weight": 2, "product": {"a": "identity", "c": "identity"}},
              {"name": "bc", "weight": 0.5, "marginals": {"sets": [["b", "c"]]}}]}`

// The template plans a spec mixing marginals terms and an
// identity/total product term: its objective equals newton's dense SVD
// bound of the spec's own dense Gram (1e-9, as in TestSumMatchesNewton),
// its term errors add up; other workloads are planned in the marginals
// family.
func TestTemplate(t *testing.T) {
	w, err := domain.ParseSpec(strings.NewReader(templateSpec), ".", workload.Blocks)
	if err != nil {
		t.Fatal(err)
	}
	tp := Template{}
	if !tp.Certifies(w, plan.Options{}) || tp.Certifies(w, plan.Options{Noise: calibrate.Laplace}) || (Template{Objective: Max}).Certifies(w, plan.Options{}) {
		t.Error("the Gaussian sum plan of marginals certifies, the pure and max plans do not")
	}
	res, err := tp.Plan(context.Background(), w, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := w.DenseGram(4096)
	if err != nil {
		t.Fatal(err)
	}
	nr, err := newton.Solve(context.Background(), v, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := relDiff(res.Objective, nr.SVDBound); d > 1e-9 {
		t.Errorf("template objective %.15g, dense SVD bound %.15g", res.Objective, nr.SVDBound)
	}
	if nr.LowerBound > res.Objective*(1+1e-12) || nr.Objective < res.Objective*(1-1e-12) {
		t.Errorf("template %.15g outside newton's [%.15g, %.15g]", res.Objective, nr.LowerBound, nr.Objective)
	}
	if d := relDiff(res.Objective, res.LowerBound); d > 1e-12 {
		t.Errorf("objective %.15g, lower bound %.15g", res.Objective, res.LowerBound)
	}
	sum := 0.0
	for _, te := range res.TermErrors {
		sum += te.Error
	}
	if d := relDiff(sum, res.Objective); d > 1e-12 || len(res.TermErrors) != 3 || res.TermErrors[0].Queries != 1+2+3+4 {
		t.Errorf("term errors %+v sum to %.15g, objective %.15g", res.TermErrors, sum, res.Objective)
	}
	p, ok := res.Strategy.Other.(*Plan)
	if !ok || res.Strategy.Kind() != "other" || res.Template != TemplateName {
		t.Fatalf("strategy %+v", res.Strategy)
	}
	if p.Sets[4].Weight != 2 || !equalInts(p.Sets[4].Attrs, []int{0, 2}) {
		t.Errorf("product term became %+v", p.Sets[4])
	}
	mx, err := Template{Objective: Max}.Plan(context.Background(), w, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pm := mx.Strategy.Other.(*Plan)
	if pm.Gap > 1e-8 || pm.MaxVariance > p.MaxVariance*(1+1e-12) || mx.Objective < res.Objective*(1-1e-12) {
		t.Errorf("max plan: gap %.3g, max variance %.15g (sum plan %.15g), total %.15g (sum plan %.15g)",
			pm.Gap, pm.MaxVariance, p.MaxVariance, mx.Objective, res.Objective)
	}

	// Pure privacy: the family plan (weighted tables over every attribute
	// subset) when it is lower than the Laplace plan of the workload's own
	// tables, which is one of its starts; its objective is the sum of the
	// term errors and lies between the SVD bound (the Gaussian optimum) and
	// the PurePlan's.
	pr, err := tp.Plan(context.Background(), w, plan.Options{Noise: calibrate.Laplace})
	if err != nil {
		t.Fatal(err)
	}
	sizes, sets, _, err := Sets(w)
	if err != nil {
		t.Fatal(err)
	}
	ppure, err := NewPurePlan(sizes, sets, Sum)
	if err != nil {
		t.Fatal(err)
	}
	if pr.Strategy.Noise != calibrate.Laplace || pr.Objective > ppure.TotalSquaredError*(1+1e-12) ||
		pr.LowerBound > pr.Objective || relDiff(pr.LowerBound, res.LowerBound) > 1e-11 || pr.FamilyBound < pr.LowerBound {
		t.Fatalf("pure plan: %T, privacy %q, objective %.12g (PurePlan %.12g), bound %.12g (Gaussian %.12g), family bound %.12g",
			pr.Strategy.Other, pr.Strategy.Noise, pr.Objective, ppure.TotalSquaredError, pr.LowerBound, res.LowerBound, pr.FamilyBound)
	}
	if fp, ok := pr.Strategy.Other.(*FamilyPlan); !ok || fp.TotalSquaredError != pr.Objective {
		t.Errorf("pure plan's strategy %T", pr.Strategy.Other)
	}
	sumTerms := 0.0
	for _, te := range pr.TermErrors {
		sumTerms += te.Error
	}
	if relDiff(sumTerms, pr.Objective) > 1e-12 {
		t.Errorf("pure plan: terms sum to %.15g, objective %.15g", sumTerms, pr.Objective)
	}
	if _, err := tp.Plan(context.Background(), w, plan.Options{Noise: "renyi"}); !errors.Is(err, ErrInput) {
		t.Errorf("unknown privacy: %v", err)
	}
	other, err := domain.ParseSpec(strings.NewReader(`{"domain": [{"name": "a", "size": 4}],
		"workload": [{"name": "p", "product": {"a": "prefix"}}]}`), ".", workload.Blocks)
	if err != nil {
		t.Fatal(err)
	}
	// A prefix term is planned in the marginals family (the residual
	// closed form), with a family bound and no global one; the max
	// objective takes only marginals.
	if r, err := tp.Plan(context.Background(), other, plan.Options{}); err != nil || r.Strategy.Other.(*FamilyPlan) == nil ||
		!math.IsNaN(r.LowerBound) || r.FamilyBound != r.Objective {
		t.Errorf("prefix term: %+v, %v", r, err)
	}
	if _, err := (Template{Objective: Max}).Plan(context.Background(), other, plan.Options{}); !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), `term "p" is not a marginal`) {
		t.Errorf("prefix term, max objective: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (Template{Objective: Max}).Plan(ctx, w, plan.Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled max plan: %v", err)
	}
}

// The strategy file names attributes, lists every residual with its noise
// variance (their squared sensitivities sum to 1) and marks a non-estimable
// marginal's variance null.
func TestStrategyFile(t *testing.T) {
	p, _ := measureInstance(t, Sum)
	f := p.StrategyFile([]string{"w", "x", "y", "z"})
	data, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back["template"] != "marginals" || back["objective"] != "sum" {
		t.Fatalf("header %v %v", back["template"], back["objective"])
	}
	res := back["residuals"].([]any)
	if len(res) != len(p.Residuals) {
		t.Fatalf("%d residuals in the file, plan has %d", len(res), len(p.Residuals))
	}
	last := res[len(res)-1].(map[string]any)
	if a := last["attributes"].([]any); len(a) != 2 || a[0] != "x" || a[1] != "y" {
		t.Errorf("last residual %v, want [x y]", last)
	}
	if math.Abs(f.Sensitivity2-1) > 1e-12 {
		t.Errorf("squared sensitivity %.15g", f.Sensitivity2)
	}
	ms := back["marginals"].([]any)
	if ms[5].(map[string]any)["cell_variance"] != nil || ms[0].(map[string]any)["cell_variance"] == nil {
		t.Errorf("cell variances %v / %v", ms[0], ms[5])
	}
}

func TestParseObjective(t *testing.T) {
	for in, want := range map[string]Objective{"": Sum, "sum": Sum, "max": Max} {
		if got, err := ParseObjective(in); err != nil || got != want {
			t.Errorf("ParseObjective(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseObjective("median"); !errors.Is(err, ErrInput) {
		t.Errorf("median: %v", err)
	}
}
