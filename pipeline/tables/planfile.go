package tables

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dpsolve/dpsolve/internal/matio"
	"github.com/dpsolve/dpsolve/mechanism/marginals"
	"github.com/dpsolve/dpsolve/mechanism/plan"
	"github.com/dpsolve/dpsolve/mechanism/plan/planner"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

// PlanRequest is one plan of a multi-attribute workload, as `dpsolve plan`
// makes it.
type PlanRequest struct {
	// Workload is the spec's workload.
	Workload *domain.Kron
	// Template is a template's name (planner.Names), "best" for the
	// portfolio.
	Template string
	// Objective is the marginals template's objective; the zero value is
	// marginals.Sum. Only the marginals template takes another.
	Objective marginals.Objective
	// Options are the planner's options; Accept is overridden when
	// Writable is set.
	Options plan.Options
	// Writable restricts the plan to strategies WriteStrategy can write
	// (the portfolio and union fall back to those).
	Writable bool
}

// PlanStrategy plans req.Workload with req.Template through planner.Run, or,
// for the marginals template under an objective other than sum (which the
// portfolio and the dense comparison do not take), through that template
// directly.
func PlanStrategy(ctx context.Context, req PlanRequest) (*plan.Result, error) {
	opt := req.Options
	if req.Writable {
		opt.Accept = Writable
	}
	if req.Template == marginals.TemplateName && req.Objective != "" && req.Objective != marginals.Sum {
		return marginals.Template{Objective: req.Objective}.Plan(ctx, req.Workload, opt)
	}
	return planner.Run(ctx, req.Workload, req.Template, opt)
}

// Writable accepts the strategies WriteStrategy has a file format for:
// Kronecker, dense, unions of Kronecker parts, and the marginals template's
// residual and table plans.
func Writable(s *plan.Plan) error {
	switch s.Kind() {
	case "kron", "dense":
		return nil
	case "union":
		for _, p := range s.Parts {
			if p.Factors == nil {
				return fmt.Errorf("a union with a %s part has no file format", p.Strategy.Template)
			}
		}
		return nil
	}
	switch s.Other.(type) {
	case *marginals.Plan, *marginals.PurePlan:
		return nil
	}
	return fmt.Errorf("template %s's %T has no file format", s.Template, s.Other)
}

// planFile is strategy.json as WriteStrategy writes it and ReadStrategyDir
// reads it: "template" with "factors" (kron), "parts" (union) or "file"
// (dense: the n×n matrix). The expected error is "expected_error", not
// "objective", which the marginals template's file uses for its sum|max
// objective.
type planFile struct {
	Template      string             `json:"template"`
	Privacy       string             `json:"privacy"`
	ExpectedError float64            `json:"expected_error"`
	Cells         json.Number        `json:"cells"`
	Domain        []domain.Attribute `json:"domain"`
	Factors       []factorFile       `json:"factors,omitempty"`
	Parts         []partFile         `json:"parts,omitempty"`
	File          string             `json:"file,omitempty"`
}

// WriteStrategy writes the strategy of res, planned for w, into the
// directory dir (which must exist; files of the same names are replaced):
// strategy.json and one .npy file per factor matrix (kron, union) or the
// dense matrix A.npy; a marginals plan is its strategy file alone (package
// marginals documents that format). ReadStrategyDir reads it back. It
// writes file by file: a caller that needs the directory complete or
// absent writes into a temporary one and renames it.
func WriteStrategy(dir string, w *domain.Kron, res *plan.Result) error {
	s := res.Strategy
	names := attributeNames(w)
	var doc any
	switch other := s.Other.(type) {
	case *marginals.Plan:
		// "template": "marginals", per residual subset its attributes and
		// noise variance (as runs for a large plan).
		data, err := marginalsFileJSON(other, names)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, "strategy.json"), append(data, '\n'), 0o644)
	case *marginals.PurePlan:
		// "privacy": "pure", per measured table its Laplace scale at ε = 1.
		doc = other.StrategyFile(names)
	default:
		if s.Kind() == "other" {
			return fmt.Errorf("template %s has no file format for --out", res.Template)
		}
		sf, err := writeMatrices(dir, w, res)
		if err != nil {
			return err
		}
		doc = sf
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "strategy.json"), append(data, '\n'), 0o644)
}

// writeMatrices writes the matrices of a kron, union or dense strategy
// into dir and returns the strategy.json that names them.
func writeMatrices(dir string, w *domain.Kron, res *plan.Result) (*planFile, error) {
	s := res.Strategy
	sf := &planFile{Template: s.Kind(), Privacy: privacyName(s.Noise), ExpectedError: res.Objective,
		Cells: json.Number(w.CellCount().String()), Domain: w.Attributes()}
	used := map[string]bool{}
	writeFactors := func(prefix string, fs []plan.Factor) ([]factorFile, error) {
		var out []factorFile
		for _, f := range fs {
			name := uniqueName(used, prefix+"A_"+safeName(f.Attribute)+".npy")
			if err := matio.WriteMatrix(filepath.Join(dir, name), f.A); err != nil {
				return nil, err
			}
			out = append(out, factorFile{Attribute: f.Attribute, File: name})
		}
		return out, nil
	}
	var err error
	switch s.Kind() {
	case "kron":
		sf.Factors, err = writeFactors("", s.Factors)
	case "union":
		for pi, p := range s.Parts {
			ff, ferr := writeFactors(fmt.Sprintf("P%d_", pi+1), p.Factors)
			if ferr != nil {
				return nil, ferr
			}
			sf.Parts = append(sf.Parts, partFile{Weight: p.Weight, Terms: p.Terms, Factors: ff})
		}
	case "dense":
		sf.File = "A.npy"
		err = matio.WriteMatrix(filepath.Join(dir, sf.File), s.Matrix)
	}
	return sf, err
}

// attributeNames returns the domain's attribute names in order.
func attributeNames(w *domain.Kron) []string {
	var names []string
	for _, a := range w.Attributes() {
		names = append(names, a.Name)
	}
	return names
}

// safeName keeps letters, digits, '-' and '_' of an attribute name for a
// file name; other characters become '_'.
func safeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 128 && (r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// uniqueName returns name, or name with a _2, _3, … suffix when an earlier
// factor took it (two attribute names can map to one safe name).
func uniqueName(used map[string]bool, name string) string {
	base := strings.TrimSuffix(name, ".npy")
	for i := 2; used[name]; i++ {
		name = fmt.Sprintf("%s_%d.npy", base, i)
	}
	used[name] = true
	return name
}

// PlanInfo reads the template and the privacy model ("gaussian" or
// "pure") a plan directory's strategy.json was made for, without its
// matrices, so a release can refuse a plan for the wrong budget before
// planning or reading anything. A marginals file that names no privacy is
// "gaussian" (ReadStrategyDir's default); either is "" when the file does
// not say, and both are when it cannot be read (ReadStrategyDir then
// reports why).
func PlanInfo(dir string) (template, privacy string) {
	b, err := os.ReadFile(filepath.Join(dir, "strategy.json"))
	if err != nil {
		return "", ""
	}
	var sf struct {
		Template string `json:"template"`
		Privacy  string `json:"privacy"`
	}
	if json.Unmarshal(b, &sf) != nil {
		return "", ""
	}
	if sf.Template == "marginals" && sf.Privacy == "" {
		sf.Privacy = "gaussian"
	}
	return sf.Template, sf.Privacy
}

// privacyName is the "privacy" value strategy.json stores for a plan's
// noise model: "pure" for calibrate.Laplace (pure ε-DP) and "gaussian" for
// calibrate.Gaussian, the values plan files have always held and PlanInfo
// and ReadStrategyDir read.
func privacyName(k calibrate.NoiseKind) string {
	if k == calibrate.Laplace {
		return "pure"
	}
	return string(k)
}
