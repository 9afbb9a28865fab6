package tables

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"gonum.org/v1/gonum/stat/combin"

	"github.com/dpsolve/dpsolve/mechanism/marginals"
	"github.com/dpsolve/dpsolve/model/domain"
)

// compactAbove is the number of residuals plus marginals above which a
// marginals plan's strategy.json lists them as runs (compactMarginalsFile)
// instead of one object each: all ≤3-way marginals of 100 attributes are
// 333,501 objects, 59 MB, against a few runs.
const compactAbove = 4096

// setRun is a run of consecutive entries of a marginals plan (residuals or
// marginals) of one set size: "all": true when its sets are every
// size-subset of the domain's attributes in lexicographic order (count is
// then C(attributes, size)), else "sets" lists them as domain positions.
// Its entries' values are rows of the file's value table: "value" when
// they all have the same row, else "values", one row index per entry.
// Expanding the runs in order gives the plan's list.
type setRun struct {
	Size   int     `json:"size"`
	Count  int     `json:"count"`
	All    bool    `json:"all,omitempty"`
	Sets   [][]int `json:"sets,omitempty"`
	Value  *int    `json:"value,omitempty"`
	Values []int   `json:"values,omitempty"`
}

// residualValue is a row of the residuals' value table.
type residualValue struct {
	Coords   float64 `json:"coords"`
	Variance float64 `json:"variance"`
}

// marginalValue is a row of the marginals' value table; CellVariance is
// null for a marginal that is not estimable.
type marginalValue struct {
	Weight            float64  `json:"weight"`
	Cells             float64  `json:"cells"`
	CellVariance      *float64 `json:"cell_variance"`
	TotalSquaredError float64  `json:"total_squared_error"`
}

// compactHeader is marginals.StrategyFile's header with the residuals'
// and marginals' counts; compactMarginalsFile adds their value tables and
// runs.
type compactHeader struct {
	Template          string             `json:"template"`
	Objective         string             `json:"objective"`
	Privacy           string             `json:"privacy"`
	Basis             string             `json:"basis"`
	Domain            []domain.Attribute `json:"domain"`
	TotalSquaredError float64            `json:"total_squared_error"`
	MaxVariance       float64            `json:"max_variance"`
	LowerBound        float64            `json:"lower_bound"`
	Gap               float64            `json:"gap"`
	Sensitivity2      float64            `json:"squared_l2_sensitivity"`
	ResidualCount     int                `json:"residual_count"`
	MarginalCount     int                `json:"marginal_count"`
}

// compactMarginalsFile is strategy.json for a large Gaussian marginals
// plan: the header, then "residual_values", "residual_runs",
// "marginal_values" and "marginal_runs".
type compactMarginalsFile struct {
	compactHeader
	ResidualValues []residualValue `json:"residual_values"`
	ResidualRuns   []setRun        `json:"residual_runs"`
	MarginalValues []marginalValue `json:"marginal_values"`
	MarginalRuns   []setRun        `json:"marginal_runs"`
}

// marginalsFileJSON returns strategy.json for a Gaussian marginals plan:
// marginals.StrategyFile, or the compact form when the plan has more than
// compactAbove residuals and marginals.
func marginalsFileJSON(p *marginals.Plan, names []string) ([]byte, error) {
	if len(p.Residuals)+len(p.Marginals) <= compactAbove {
		return json.MarshalIndent(p.StrategyFile(names), "", "  ")
	}
	return compactMarginals(p, names).encode()
}

// compactMarginals returns the compact form of plan p.
func compactMarginals(p *marginals.Plan, names []string) *compactMarginalsFile {
	head := *p // the header alone: StrategyFile without the lists
	head.Residuals, head.Marginals = nil, nil
	sf := head.StrategyFile(names)
	f := &compactMarginalsFile{compactHeader: compactHeader{Template: sf.Template, Objective: sf.Objective, Privacy: sf.Privacy,
		Basis: sf.Basis, Domain: sf.Domain, TotalSquaredError: sf.TotalSquaredError, MaxVariance: sf.MaxVariance,
		LowerBound: sf.LowerBound, Gap: sf.Gap, ResidualCount: len(p.Residuals), MarginalCount: len(p.Marginals)}}
	n := len(p.Sizes)
	// Consecutive entries mostly share their values: the row of the one
	// before is tried before the map.
	rs := p.Residuals
	rrow := make([]int, len(rs))
	rindex := map[residualValue]int{}
	for i, r := range rs {
		f.Sensitivity2 += r.Sensitivity2 / r.Variance
		v := residualValue{Coords: r.Coords, Variance: r.Variance}
		if i > 0 && f.ResidualValues[rrow[i-1]] == v {
			rrow[i] = rrow[i-1]
			continue
		}
		k, ok := rindex[v]
		if !ok {
			k = len(f.ResidualValues)
			rindex[v] = k
			f.ResidualValues = append(f.ResidualValues, v)
		}
		rrow[i] = k
	}
	f.ResidualRuns = runsOf(n, len(rs), func(i int) []int { return rs[i].Attrs }, rrow)
	ms := p.Marginals
	mrow := make([]int, len(ms))
	type key struct{ w, c, v, e float64 }
	mindex := map[key]int{}
	var last key
	for i, m := range ms {
		kk := key{m.Weight, m.Cells, m.CellVariance, m.TotalSquaredError}
		if i > 0 && kk == last {
			mrow[i] = mrow[i-1]
			continue
		}
		last = kk
		k, ok := mindex[kk]
		if !ok {
			k = len(f.MarginalValues)
			mindex[kk] = k
			v := marginalValue{Weight: m.Weight, Cells: m.Cells, TotalSquaredError: m.TotalSquaredError}
			if !math.IsInf(m.CellVariance, 0) {
				v.CellVariance = &[]float64{m.CellVariance}[0]
			}
			f.MarginalValues = append(f.MarginalValues, v)
		}
		mrow[i] = k
	}
	f.MarginalRuns = runsOf(n, len(ms), func(i int) []int { return ms[i].Attrs }, mrow)
	return f
}

// encode writes the file as indented JSON with each value row and each run
// on one line (a run's sets and row indices would otherwise take a line
// per number).
func (f *compactMarginalsFile) encode() ([]byte, error) {
	head, err := json.MarshalIndent(f.compactHeader, "", "  ")
	if err != nil {
		return nil, err
	}
	buf := bytes.NewBuffer(bytes.TrimSuffix(head, []byte("\n}")))
	list := func(name string, n int, item func(i int) any) error {
		fmt.Fprintf(buf, ",\n  %q: [", name)
		for i := 0; i < n; i++ {
			b, err := json.Marshal(item(i))
			if err != nil {
				return err
			}
			if i > 0 {
				buf.WriteByte(',')
			}
			buf.WriteString("\n    ")
			buf.Write(b)
		}
		buf.WriteString("\n  ]")
		return nil
	}
	for _, l := range []struct {
		name string
		n    int
		item func(i int) any
	}{
		{"residual_values", len(f.ResidualValues), func(i int) any { return f.ResidualValues[i] }},
		{"residual_runs", len(f.ResidualRuns), func(i int) any { return f.ResidualRuns[i] }},
		{"marginal_values", len(f.MarginalValues), func(i int) any { return f.MarginalValues[i] }},
		{"marginal_runs", len(f.MarginalRuns), func(i int) any { return f.MarginalRuns[i] }},
	} {
		if err := list(l.name, l.n, l.item); err != nil {
			return nil, err
		}
	}
	buf.WriteString("\n}")
	return buf.Bytes(), nil
}

// runsOf splits entries 0…count−1 (set(i) their attribute sets over n
// attributes, row[i] their value rows) into runs: every stretch of all
// size-s subsets in lexicographic order is one "all" run; the entries
// between them form runs of one size that list their sets.
func runsOf(n, count int, set func(i int) []int, row []int) []setRun {
	var out []setRun
	for i := 0; i < count; {
		s := len(set(i))
		run := setRun{Size: s}
		if c := allRun(n, count, i, set); c > 0 {
			run.Count, run.All = c, true
		} else {
			j := i
			for j < count && len(set(j)) == s && (j == i || !isFirstSubset(set(j))) {
				run.Sets = append(run.Sets, set(j))
				j++
			}
			run.Count = j - i
		}
		rows := row[i : i+run.Count]
		one := true
		for _, r := range rows {
			one = one && r == rows[0]
		}
		if one {
			run.Value = &[]int{rows[0]}[0]
		} else {
			run.Values = rows
		}
		out = append(out, run)
		i += run.Count
	}
	return out
}

// allRun returns C(n, s) when entries i, i+1, … are every s-subset of the
// n attributes in lexicographic order (s = |set(i)|), else 0.
func allRun(n, count, i int, set func(int) []int) int {
	first := set(i)
	if !isFirstSubset(first) {
		return 0
	}
	s := len(first)
	c := binomialCount(n, s)
	if c <= 0 || c > count-i {
		return 0
	}
	gen := combin.NewCombinationGenerator(n, s)
	cur := make([]int, s)
	for k := 0; gen.Next(); k++ {
		gen.Combination(cur)
		got := set(i + k)
		if len(got) != s {
			return 0
		}
		for x := range cur {
			if got[x] != cur[x] {
				return 0
			}
		}
	}
	return c
}

// isFirstSubset reports whether s is 0, 1, …, |s|−1.
func isFirstSubset(s []int) bool {
	for k, a := range s {
		if a != k {
			return false
		}
	}
	return true
}

// binomialCount returns C(n, s), or −1 when it exceeds an int32 (no plan
// has that many entries; the float estimate keeps combin.Binomial, which
// does not check, from overflowing).
func binomialCount(n, s int) int {
	if s < 0 || s > n {
		return 0
	}
	if combin.GeneralizedBinomial(float64(n), float64(s)) > math.MaxInt32 {
		return -1
	}
	return combin.Binomial(n, s)
}

// expandRun calls f with each set of a run over n attributes and its
// value row (< rows), in order; it refuses a run that is malformed (count,
// size, positions or rows).
func expandRun(r setRun, n, rows int, f func(attrs []int, row int) error) error {
	rowOf := func(k int) int { return r.Values[k] }
	switch {
	case r.Value != nil && r.Values == nil:
		if *r.Value < 0 || *r.Value >= rows {
			return errorf("a run's value row %d is not one of the %d rows", *r.Value, rows)
		}
		rowOf = func(int) int { return *r.Value }
	case r.Value == nil && len(r.Values) == r.Count:
		for _, v := range r.Values {
			if v < 0 || v >= rows {
				return errorf("a run's value row %d is not one of the %d rows", v, rows)
			}
		}
	default:
		return errorf("a run needs \"value\" or one of \"values\" per entry (%d entries)", r.Count)
	}
	if r.All {
		c := binomialCount(n, r.Size)
		if r.Size < 0 || c <= 0 || r.Count != c || len(r.Sets) > 0 {
			return errorf("a run of all %d-attribute sets over %d attributes must have count C(%d, %d) and no sets, got count %d", r.Size, n, n, r.Size, r.Count)
		}
		gen := combin.NewCombinationGenerator(n, r.Size)
		cur := make([]int, r.Size)
		for k := 0; gen.Next(); k++ {
			gen.Combination(cur)
			if err := f(cur, rowOf(k)); err != nil {
				return err
			}
		}
		return nil
	}
	if r.Count != len(r.Sets) {
		return errorf("a run lists %d sets but its count is %d", len(r.Sets), r.Count)
	}
	for k, s := range r.Sets {
		if len(s) != r.Size {
			return errorf("a run of %d-attribute sets lists %v", r.Size, s)
		}
		for x, a := range s {
			if a < 0 || a >= n || (x > 0 && s[x-1] >= a) {
				return errorf("set %v is not increasing attribute positions 0…%d", s, n-1)
			}
		}
		if err := f(s, rowOf(k)); err != nil {
			return err
		}
	}
	return nil
}

// setKey is a map key of an attribute set.
func setKey(attrs []int) string {
	b := make([]byte, 0, 4*len(attrs))
	for _, a := range attrs {
		b = strconv.AppendInt(b, int64(a), 10)
		b = append(b, ',')
	}
	return string(b)
}
