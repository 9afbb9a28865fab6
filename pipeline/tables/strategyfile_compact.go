package tables

import (
	"math"
	"strconv"

	"github.com/dpsolve/dpsolve/mechanism/marginals"
	"github.com/dpsolve/dpsolve/model/domain"
)

// compactAbove is the number of residuals plus marginals above which a
// marginals plan's strategy.json lists them as runs (compactMarginalsFile)
// instead of one object each: all ≤3-way marginals of 100 attributes are
// 333,501 objects, 59 MB, against a few runs.
const compactAbove = 4096

// setRun is a run of consecutive entries of a marginals plan (residuals or
// marginals) of one set size that share their values: "all": true when its
// sets are every size-subset of the domain's attributes in lexicographic
// order (count is then C(attributes, size)), else "sets" lists them as
// domain positions. Expanding the runs in order gives the plan's list.
type setRun struct {
	Size  int     `json:"size"`
	Count int     `json:"count"`
	All   bool    `json:"all,omitempty"`
	Sets  [][]int `json:"sets,omitempty"`
}

// residualRun is a run of residual subsets measured with one variance.
type residualRun struct {
	setRun
	Coords   float64 `json:"coords"`
	Variance float64 `json:"variance"`
}

// marginalRun is a run of workload marginals with one weight, cell count
// and error.
type marginalRun struct {
	setRun
	Weight            float64  `json:"weight"`
	Cells             float64  `json:"cells"`
	CellVariance      *float64 `json:"cell_variance"`
	TotalSquaredError float64  `json:"total_squared_error"`
}

// compactMarginalsFile is strategy.json for a large Gaussian marginals
// plan: marginals.StrategyFile's header, with the residuals and marginals
// as runs (setRun) and their counts.
type compactMarginalsFile struct {
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
	ResidualRuns      []residualRun      `json:"residual_runs"`
	MarginalCount     int                `json:"marginal_count"`
	MarginalRuns      []marginalRun      `json:"marginal_runs"`
}

// marginalsDoc returns the strategy.json document of a Gaussian marginals
// plan: marginals.StrategyFile, or its compact form when the plan has more
// than compactAbove residuals and marginals.
func marginalsDoc(p *marginals.Plan, names []string) any {
	if len(p.Residuals)+len(p.Marginals) <= compactAbove {
		return p.StrategyFile(names)
	}
	head := *p // the header alone: StrategyFile without the lists
	head.Residuals, head.Marginals = nil, nil
	sf := head.StrategyFile(names)
	f := &compactMarginalsFile{Template: sf.Template, Objective: sf.Objective, Privacy: sf.Privacy, Basis: sf.Basis,
		Domain: sf.Domain, TotalSquaredError: sf.TotalSquaredError, MaxVariance: sf.MaxVariance, LowerBound: sf.LowerBound,
		Gap: sf.Gap, ResidualCount: len(p.Residuals), MarginalCount: len(p.Marginals)}
	n := len(p.Sizes)
	for _, r := range p.Residuals {
		f.Sensitivity2 += r.Sensitivity2 / r.Variance
	}
	rs := p.Residuals
	for _, run := range runsOf(n, len(rs), func(i int) []int { return rs[i].Attrs }, func(i, j int) bool {
		return rs[i].Coords == rs[j].Coords && rs[i].Variance == rs[j].Variance
	}) {
		r := rs[run.start]
		f.ResidualRuns = append(f.ResidualRuns, residualRun{setRun: run.setRun, Coords: r.Coords, Variance: r.Variance})
	}
	ms := p.Marginals
	for _, run := range runsOf(n, len(ms), func(i int) []int { return ms[i].Attrs }, func(i, j int) bool {
		a, b := ms[i], ms[j]
		return a.Weight == b.Weight && a.Cells == b.Cells && a.CellVariance == b.CellVariance && a.TotalSquaredError == b.TotalSquaredError
	}) {
		m := ms[run.start]
		mr := marginalRun{setRun: run.setRun, Weight: m.Weight, Cells: m.Cells, TotalSquaredError: m.TotalSquaredError}
		if !math.IsInf(m.CellVariance, 0) {
			mr.CellVariance = &[]float64{m.CellVariance}[0]
		}
		f.MarginalRuns = append(f.MarginalRuns, mr)
	}
	return f
}

// indexedRun is a setRun and the index of its first entry.
type indexedRun struct {
	setRun
	start int
}

// runsOf splits entries 0…count−1 (set(i) their attribute sets over n
// attributes, same(i, j) whether two entries have equal values) into
// runs: every run of all size-s subsets in lexicographic order with equal
// values is one "all" run; the entries between them form runs of equal
// values and size that list their sets.
func runsOf(n, count int, set func(i int) []int, same func(i, j int) bool) []indexedRun {
	var out []indexedRun
	for i := 0; i < count; {
		s := len(set(i))
		if c := allRun(n, count, i, set, same); c > 0 {
			out = append(out, indexedRun{setRun: setRun{Size: s, Count: c, All: true}, start: i})
			i += c
			continue
		}
		run := indexedRun{setRun: setRun{Size: s}, start: i}
		j := i
		for j < count && len(set(j)) == s && same(i, j) && (j == i || !isFirstSubset(set(j))) {
			run.Sets = append(run.Sets, set(j))
			j++
		}
		run.Count = j - i
		out = append(out, run)
		i = j
	}
	return out
}

// allRun returns C(n, s) when entries i, i+1, … are every s-subset of the
// n attributes in lexicographic order with equal values (s = |set(i)|),
// else 0.
func allRun(n, count, i int, set func(int) []int, same func(i, j int) bool) int {
	first := set(i)
	if !isFirstSubset(first) {
		return 0
	}
	s := len(first)
	c := binomialCount(n, s)
	if c <= 0 || c > count-i {
		return 0
	}
	cur := append([]int(nil), first...)
	for k := 0; k < c; k++ {
		if k > 0 && !nextSubset(cur, n) {
			return 0
		}
		got := set(i + k)
		if len(got) != s || !same(i, i+k) {
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

// nextSubset advances the increasing s-subset cur of 0…n−1 to the next in
// lexicographic order; false after the last.
func nextSubset(cur []int, n int) bool {
	s := len(cur)
	k := s - 1
	for k >= 0 && cur[k] == n-s+k {
		k--
	}
	if k < 0 {
		return false
	}
	cur[k]++
	for x := k + 1; x < s; x++ {
		cur[x] = cur[x-1] + 1
	}
	return true
}

// binomialCount returns C(n, s), or −1 when it exceeds an int32 (no plan
// has that many entries).
func binomialCount(n, s int) int {
	if s < 0 || s > n {
		return 0
	}
	c := 1
	for k := 0; k < s; k++ {
		c = c * (n - k) / (k + 1)
		if c > math.MaxInt32 {
			return -1
		}
	}
	return c
}

// expandRun calls f with each set of a run over n attributes, in order;
// it refuses a run that is malformed (count, size or positions).
func expandRun(r setRun, n int, f func(attrs []int) error) error {
	if r.All {
		c := binomialCount(n, r.Size)
		if r.Size < 0 || c <= 0 || r.Count != c || len(r.Sets) > 0 {
			return errorf("a run of all %d-attribute sets over %d attributes must have count C(%d, %d) and no sets, got count %d", r.Size, n, n, r.Size, r.Count)
		}
		cur := make([]int, r.Size)
		for k := range cur {
			cur[k] = k
		}
		for k := 0; k < c; k++ {
			if k > 0 {
				nextSubset(cur, n)
			}
			if err := f(cur); err != nil {
				return err
			}
		}
		return nil
	}
	if r.Count != len(r.Sets) {
		return errorf("a run lists %d sets but its count is %d", len(r.Sets), r.Count)
	}
	for _, s := range r.Sets {
		if len(s) != r.Size {
			return errorf("a run of %d-attribute sets lists %v", r.Size, s)
		}
		for k, a := range s {
			if a < 0 || a >= n || (k > 0 && s[k-1] >= a) {
				return errorf("set %v is not increasing attribute positions 0…%d", s, n-1)
			}
		}
		if err := f(s); err != nil {
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
