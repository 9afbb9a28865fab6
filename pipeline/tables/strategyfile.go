package tables

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/matio"
	"github.com/dpsolve/dpsolve/kron"
	"github.com/dpsolve/dpsolve/mechanism/marginals"
	"github.com/dpsolve/dpsolve/mechanism/plan"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

// strategyFile is DIR/strategy.json as `dpsolve plan --out DIR` writes it
// (issues 15 and 16). Keys this reader does not use (objective, bounds,
// timings) are ignored.
type strategyFile struct {
	Template           string             `json:"template"`
	Factors            []factorFile       `json:"factors"`
	Parts              []partFile         `json:"parts"`
	Matrix             string             `json:"matrix"`    // dense: the strategy over all cells
	File               string             `json:"file"`      // dense: accepted as a synonym of matrix
	Objective          json.RawMessage    `json:"objective"` // the plan's objective value; for marginals also "sum" or "max"
	MarginalsObjective string             `json:"marginals_objective"`
	Residuals          []residualRecord   `json:"residuals"`       // marginals: checked against the re-plan
	Privacy            string             `json:"privacy"`         // marginals: "gaussian" (default) or "pure"
	Tables             []tableRecord      `json:"tables"`          // pure marginals: checked against the re-plan
	ResidualCount      *int               `json:"residual_count"`  // marginals, compact: the residuals' count
	ResidualValues     []residualValue    `json:"residual_values"` // marginals, compact: the runs' value rows
	ResidualRuns       []setRun           `json:"residual_runs"`   // marginals, compact: checked against the re-plan
	Domain             []domain.Attribute `json:"domain"`          // when present, must equal the spec's domain
}

type factorFile struct {
	Attribute string `json:"attribute"`
	File      string `json:"file"`
}

type partFile struct {
	Weight  float64      `json:"weight"`
	Terms   []string     `json:"terms"`
	Factors []factorFile `json:"factors"`
}

type tableRecord struct {
	Attributes []json.RawMessage `json:"attributes"` // names or positions
	Scale      float64           `json:"scale"`
}

type residualRecord struct {
	Attributes []json.RawMessage `json:"attributes"` // names or positions
	Variance   float64           `json:"variance"`
}

// maxStrategyJSON caps strategy.json (a list of file names and weights).
const maxStrategyJSON = 64 << 20

// ReadStrategyDir reads the strategy a plan wrote to dir (strategy.json and
// its factor .npy files, paths relative to dir) for the workload w:
//
//   - {"template": "kron", "factors": [{"attribute": "sex", "file": "A_sex.npy"}, …]}
//     (one factor per attribute, in domain order);
//   - {"template": "union", "parts": [{"weight": w, "terms": [...], "factors": [...]}, …]};
//   - {"template": "dense", "matrix": "A.npy"} (an explicit strategy over all cells);
//   - {"template": "marginals", "objective": "sum"|"max", "residuals": [...]}:
//     the residual plan is recomputed from the workload (it is exact and
//     takes milliseconds) and, when the file lists residual variances,
//     checked against them.
//
// A "domain" list in the file (as dpsolve plan writes it) must equal the
// spec's. The sensitivity is always computed from the matrices read, never
// taken from the file.
func ReadStrategyDir(dir string, k *domain.Kron) (Measurement, error) {
	w, err := explicitOf(k)
	if err != nil {
		return nil, err
	}
	return readStrategyDir(dir, w)
}

// readStrategyDir is ReadStrategyDir on the explicit workload.
func readStrategyDir(dir string, w *explicitWorkload) (Measurement, error) {
	path := filepath.Join(dir, "strategy.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, errorf("plan directory: %v", err)
	}
	if len(b) > maxStrategyJSON {
		return nil, errorf("%s is larger than %d bytes", path, maxStrategyJSON)
	}
	var f strategyFile
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&f); err != nil {
		return nil, errorf("%s: %v", path, err)
	}
	if f.Domain != nil {
		if err := sameDomainRecords(f.Domain, w); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	switch f.Template {
	case "kron":
		a, err := readFactors(dir, f.Factors, w)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return KronStrategy{A: a}, nil
	case "union":
		if len(f.Parts) == 0 {
			return nil, errorf("%s: a union strategy needs parts", path)
		}
		u := UnionStrategy{}
		for k, p := range f.Parts {
			a, err := readFactors(dir, p.Factors, w)
			if err != nil {
				return nil, fmt.Errorf("%s: part %d: %w", path, k+1, err)
			}
			u.Parts = append(u.Parts, UnionPart{Weight: p.Weight, A: a, Terms: p.Terms})
		}
		return u, nil
	case "dense":
		name := f.Matrix
		if name == "" {
			name = f.File
		}
		if name == "" {
			return nil, errorf("%s: a dense strategy needs \"matrix\"", path)
		}
		a, err := readMatrix(dir, name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return DenseStrategy{A: a}, nil
	case "marginals":
		obj := f.MarginalsObjective
		var named string
		if json.Unmarshal(f.Objective, &named) == nil {
			obj = named // "objective": "sum" | "max"
		}
		ms := MarginalsStrategy{Objective: marginals.Objective(obj)}
		if obj != "" && ms.Objective != marginals.Sum && ms.Objective != marginals.Max {
			return nil, errorf("%s: unknown marginals objective %q", path, obj)
		}
		switch f.Privacy {
		case "", "gaussian":
		case "pure":
			ms.Pure = true
			if len(f.Tables) > 0 {
				if err := checkPureTables(f.Tables, w, ms); err != nil {
					return nil, fmt.Errorf("%s: %w", path, err)
				}
			}
			return ms, nil
		default:
			return nil, errorf("%s: unknown marginals privacy %q (want gaussian or pure)", path, f.Privacy)
		}
		if len(f.Residuals) > 0 {
			if err := checkResiduals(f.Residuals, w, ms); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
		}
		if f.ResidualCount != nil || len(f.ResidualRuns) > 0 {
			if err := checkResidualRuns(f.ResidualRuns, f.ResidualValues, f.ResidualCount, w, ms); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
		}
		return ms, nil
	}
	return nil, errorf("%s: unknown template %q (want kron, union, dense or marginals)", path, f.Template)
}

// sameDomainRecords checks that a plan was made for the spec's domain.
func sameDomainRecords(d []domain.Attribute, w *explicitWorkload) error {
	if len(d) != len(w.Domain) {
		return errorf("the plan is for %d attributes but the spec has %d: was it made for another spec?", len(d), len(w.Domain))
	}
	for i, a := range d {
		if a.Name != w.Domain[i].Name || a.Size != w.Domain[i].Size {
			return errorf("the plan's attribute %d is %q of size %d but the spec's is %q of size %d: was it made for another spec?",
				i+1, a.Name, a.Size, w.Domain[i].Name, w.Domain[i].Size)
		}
	}
	return nil
}

// readFactors reads one factor per attribute, in domain order.
func readFactors(dir string, fs []factorFile, w *explicitWorkload) (*kron.Product, error) {
	if len(fs) != len(w.Domain) {
		return nil, errorf("%d factors for the %d attributes of the spec", len(fs), len(w.Domain))
	}
	ms := make([]mat.Matrix, len(fs))
	for i, f := range fs {
		if f.Attribute != w.Domain[i].Name {
			return nil, errorf("factor %d is for attribute %q but the spec's attribute %d is %q (factors are in domain order)", i+1, f.Attribute, i+1, w.Domain[i].Name)
		}
		a, err := readMatrix(dir, f.File)
		if err != nil {
			return nil, err
		}
		if _, c := a.Dims(); c != w.Domain[i].Size {
			return nil, errorf("factor %s has %d columns but attribute %q has %d values", f.File, c, f.Attribute, w.Domain[i].Size)
		}
		ms[i] = a
	}
	return kron.New(ms...)
}

// readMatrix reads a matrix file named relative to dir; it refuses paths
// that leave dir.
func readMatrix(dir, name string) (*mat.Dense, error) {
	if name == "" || filepath.IsAbs(name) || strings.HasPrefix(filepath.Clean(name), "..") {
		return nil, errorf("matrix file %q must be a relative path inside the plan directory", name)
	}
	return matio.ReadMatrix(filepath.Join(dir, name))
}

// attrPositions reads a list of attribute names or positions.
func attrPositions(raw []json.RawMessage, w *explicitWorkload) ([]int, error) {
	pos := map[string]int{}
	for i, a := range w.Domain {
		pos[a.Name] = i
	}
	attrs := make([]int, len(raw))
	for k, r := range raw {
		var name string
		var idx int
		if json.Unmarshal(r, &name) == nil {
			i, ok := pos[name]
			if !ok {
				return nil, errorf("the plan names attribute %q, which is not in the spec", name)
			}
			attrs[k] = i
		} else if json.Unmarshal(r, &idx) == nil {
			attrs[k] = idx
		} else {
			return nil, errorf("a plan attribute is neither a name nor a position: %s", r)
		}
	}
	return attrs, nil
}

// checkPureTables compares a pure marginals strategy file's table scales
// with the plan recomputed for w (relative 1e-12: closed form from the
// same inputs).
func checkPureTables(ts []tableRecord, w *explicitWorkload, ms MarginalsStrategy) error {
	unit, err := calibrate.PureDP(1) // a placeholder: the table scales do not depend on ε
	if err != nil {
		return err
	}
	r := &Release{w: w, b: unit}
	if err := r.prepareMarginals(ms); err != nil {
		return err
	}
	want := map[string]float64{}
	for _, tb := range r.mplan.pure.Tables {
		want[fmt.Sprint(tb.Attrs)] = tb.Scale
	}
	if len(ts) != len(want) {
		return errorf("the plan measures %d tables but the plan for this spec measures %d: was it made for another spec?", len(ts), len(want))
	}
	for _, rec := range ts {
		attrs, err := attrPositions(rec.Attributes, w)
		if err != nil {
			return err
		}
		v, ok := want[fmt.Sprint(attrs)]
		if !ok || math.Abs(v-rec.Scale) > 1e-12*math.Max(v, rec.Scale) {
			return errorf("the pure marginals plan in the file (table %v, scale %g) differs from the plan for this spec (%g): was it made for another spec?", attrs, rec.Scale, v)
		}
	}
	return nil
}

// checkResiduals compares a marginals strategy file's residual variances
// with the plan recomputed for w (relative 1e-9: both are closed-form or
// certified to 1e-8 gap, computed from the same inputs).
func checkResiduals(rs []residualRecord, w *explicitWorkload, ms MarginalsStrategy) error {
	want, err := plannedResiduals(w, ms)
	if err != nil {
		return err
	}
	pos := map[string]int{}
	for i, a := range w.Domain {
		pos[a.Name] = i
	}
	for _, rec := range rs {
		attrs := make([]int, len(rec.Attributes))
		for k, raw := range rec.Attributes {
			var name string
			var idx int
			if json.Unmarshal(raw, &name) == nil {
				i, ok := pos[name]
				if !ok {
					return errorf("a residual names attribute %q, which is not in the spec", name)
				}
				attrs[k] = i
			} else if json.Unmarshal(raw, &idx) == nil {
				attrs[k] = idx
			} else {
				return errorf("a residual attribute is neither a name nor a position: %s", raw)
			}
		}
		if err := sameResidual(want, attrs, rec.Variance); err != nil {
			return err
		}
	}
	return nil
}

// checkResidualRuns compares a compact marginals strategy file's residual
// runs with the plan recomputed for w: every residual subset the runs
// expand to has the re-plan's variance (relative 1e-9, as checkResiduals),
// and they are as many as the re-plan's and the file's count.
func checkResidualRuns(runs []setRun, values []residualValue, count *int, w *explicitWorkload, ms MarginalsStrategy) error {
	want, err := plannedResiduals(w, ms)
	if err != nil {
		return err
	}
	seen := 0
	for _, r := range runs {
		err := expandRun(r, len(w.Domain), len(values), func(attrs []int, row int) error {
			seen++
			return sameResidual(want, attrs, values[row].Variance)
		})
		if err != nil {
			return err
		}
	}
	if count == nil || *count != seen {
		return errorf("the residual runs hold %d subsets but residual_count says %v", seen, countText(count))
	}
	if seen != len(want) {
		return errorf("the plan measures %d residual subsets but the plan for this spec measures %d: was it made for another spec?", seen, len(want))
	}
	return nil
}

func countText(c *int) string {
	if c == nil {
		return "nothing"
	}
	return strconv.Itoa(*c)
}

// plannedResiduals re-plans the marginals of w and returns each residual
// subset's variance by setKey.
func plannedResiduals(w *explicitWorkload, ms MarginalsStrategy) (map[string]float64, error) {
	unit, err := calibrate.ZCDP(0.5) // a placeholder: the residual variances do not depend on ρ
	if err != nil {
		return nil, err
	}
	r := &Release{w: w, b: unit}
	if err := r.prepareMarginals(ms); err != nil {
		return nil, err
	}
	p := r.mplan.plan
	want := make(map[string]float64, len(p.Residuals))
	for _, res := range p.Residuals {
		want[setKey(res.Attrs)] = res.Variance
	}
	return want, nil
}

// sameResidual checks one residual subset's variance against the re-plan's.
func sameResidual(want map[string]float64, attrs []int, variance float64) error {
	v, ok := want[setKey(attrs)]
	if !ok || math.Abs(v-variance) > 1e-9*math.Max(v, variance) {
		return errorf("the residual plan in the file (subset %v, variance %g) differs from the plan for this spec (%g): was it made for another spec?", attrs, variance, v)
	}
	return nil
}

// FromPlan converts a strategy planned in-process (package plan) into a
// release strategy. A template-specific strategy (Other) is accepted when
// it is a residual plan of package marginals.
func FromPlan(s *plan.Plan, k *domain.Kron) (Measurement, error) {
	if s == nil {
		return nil, errorf("no strategy")
	}
	if k == nil {
		return nil, errorf("no workload")
	}
	attrs := k.Attributes()
	factors := func(fs []plan.Factor) (*kron.Product, error) {
		if len(fs) != len(attrs) {
			return nil, errorf("%d factors for %d attributes", len(fs), len(attrs))
		}
		ms := make([]mat.Matrix, len(fs))
		for i, f := range fs {
			if f.Attribute != attrs[i].Name {
				return nil, errorf("factor %d is for %q, attribute %d is %q", i+1, f.Attribute, i+1, attrs[i].Name)
			}
			ms[i] = f.A
		}
		return kron.New(ms...)
	}
	switch s.Kind() {
	case "kron":
		a, err := factors(s.Factors)
		if err != nil {
			return nil, err
		}
		return KronStrategy{A: a}, nil
	case "union":
		u := UnionStrategy{}
		for _, p := range s.Parts {
			a, err := factors(p.Factors)
			if err != nil {
				return nil, err
			}
			u.Parts = append(u.Parts, UnionPart{Weight: p.Weight, A: a, Terms: p.Terms})
		}
		return u, nil
	case "dense":
		return DenseStrategy{A: s.Matrix}, nil
	}
	if mp, ok := s.Other.(*marginals.Plan); ok {
		return MarginalsStrategy{Objective: mp.Objective}, nil
	}
	if pp, ok := s.Other.(*marginals.PurePlan); ok {
		return MarginalsStrategy{Objective: pp.Objective, Pure: true}, nil
	}
	return nil, errorf("template %q made a strategy this release cannot measure (%T)", s.Template, s.Other)
}
