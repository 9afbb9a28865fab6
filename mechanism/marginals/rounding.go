package marginals

import (
	"math"
	"sort"
)

// roundTables rounds consistent tables in place to integers with grand
// total n (nonneg: keep cells ≥ 0). Every attribute's one-way marginal
// (the same in every table, up to rounding, since the tables are
// consistent) is first rounded to total n by largest remainders. Tables on
// no attribute become n, tables on one attribute its rounded margin, and a
// table on two attributes is rounded by controlled rounding: every cell to
// ⌊t⌋ or ⌊t⌋ + 1 (or, where none exists, within [⌊t⌋ − 1, ⌊t⌋ + 2]) so that
// its row and column sums equal the two rounded margins (a bipartite flow;
// see controlledRound). Then every table of at most two
// attributes agrees exactly with every other on each attribute and the
// total, which for a workload of ≤2-way marginals is every shared
// sub-marginal. Tables of three or more attributes, or when no controlled
// rounding exists, are rounded to the total n alone (largest remainders).
// It returns the numbers of controlled and fallback tables.
func (p *Plan) roundTables(tabs []Table, n float64, nonneg bool) (controlled, fallback int) {
	margin := map[int][]float64{}
	for _, t := range tabs {
		if len(t.Attrs) > 2 {
			continue
		}
		for _, a := range t.Attrs {
			if _, ok := margin[a]; !ok {
				m := p.marginalize(t, []int{a})
				if nonneg {
					for k := range m {
						m[k] = math.Max(m[k], 0)
					}
				}
				roundToTotal(m, n, nonneg)
				margin[a] = m
			}
		}
	}
	for i := range tabs {
		t := &tabs[i]
		switch len(t.Attrs) {
		case 0:
			t.Values[0] = n
			controlled++
			continue
		case 1:
			copy(t.Values, margin[t.Attrs[0]])
			controlled++
			continue
		case 2:
			if v, ok := controlledRound(t.Values, p.Sizes[t.Attrs[0]], p.Sizes[t.Attrs[1]], margin[t.Attrs[0]], margin[t.Attrs[1]]); ok {
				copy(t.Values, v)
				controlled++
				continue
			}
		}
		roundToTotal(t.Values, n, nonneg)
		fallback++
	}
	return controlled, fallback
}

// maxRoundingWork caps the cells controlledRound's augmenting searches
// scan (each scans at most 2rc): a few seconds at worst; beyond it the table
// falls back to rounding to the grand total alone.
const maxRoundingWork = 1 << 30

// controlledRound rounds the r×c row-major table x to integers with row
// sums rows and column sums cols (integers with equal totals), every cell
// to ⌊x⌋ or ⌊x⌋ + 1 (so it moves by less than 1, or by exactly 1 when x is
// an integer) when such a rounding exists, and otherwise to a value in
// [⌊x⌋ − 1, ⌊x⌋ + 2] (moving by less than 2; never below 0 when x ≥ 0),
// and reports whether it found one. Requiring ⌈x⌉ would be too strict: the
// one-way margins are rounded independently, and the unit a row's rounding
// adds may be due in a column where that row's cell is an exact 0. Margins
// rounded independently can also admit no rounding within one unit at all
// (row 0 of [[2.27, 5.95], [0, 5.18]] must become 3 + 6 = 9 when its margin
// rounds up, overfilling column 0 when that margin rounds down), hence the
// second, wider try.
func controlledRound(x []float64, r, c int, rows, cols []float64) ([]float64, bool) {
	if out, ok := boundedRound(x, r, c, rows, cols, 0); ok {
		return out, true
	}
	return boundedRound(x, r, c, rows, cols, 1)
}

// boundedRound is one try of controlledRound: cell k may take a value in
// [lo_k, ⌊x_k⌋ + 1 + slack] with lo_k = ⌊x_k⌋ − slack (but ≥ 0 when x_k ≥ 0).
// Starting from lo, row i must place rows[i] − Σ_j lo_ij units and column j
// receive cols[j] − Σ_i lo_ij, each cell at most its capacity: an integer
// transportation problem, filled greedily (first up to ⌊x⌋, then the
// largest fractional parts) and completed by augmenting paths
// (breadth-first search over cells with spare capacity forward and cells
// holding units backward), which finds a solution whenever one exists
// (max-flow min-cut).
func boundedRound(x []float64, r, c int, rows, cols []float64, slack int) ([]float64, bool) {
	out := make([]float64, len(x))
	needR := make([]int, r)
	needC := make([]int, c)
	for i := 0; i < r; i++ {
		needR[i] = int(rows[i])
	}
	for j := 0; j < c; j++ {
		needC[j] = int(cols[j])
	}
	frac := make([]float64, len(x))
	capacity := make([]int, len(x))
	base := make([]int, len(x)) // ⌊x⌋ − lo: units that bring the cell back to ⌊x⌋
	cand := make([]int, len(x))
	for k, v := range x {
		f := math.Floor(v)
		lo := f - float64(slack)
		if v >= 0 {
			lo = math.Max(lo, 0)
		}
		out[k] = lo
		frac[k] = v - f
		base[k] = int(f - lo)
		capacity[k] = int(f + 1 + float64(slack) - lo)
		needR[k/c] -= int(lo)
		needC[k%c] -= int(lo)
		cand[k] = k
	}
	total, totalC := 0, 0
	for _, v := range needR {
		if v < 0 {
			return nil, false
		}
		total += v
	}
	for _, v := range needC {
		if v < 0 {
			return nil, false
		}
		totalC += v
	}
	if total != totalC {
		return nil, false
	}
	used := make([]int, len(x))
	give := func(k, units int) {
		i, j := k/c, k%c
		u := min(units, needR[i], needC[j], capacity[k]-used[k])
		if u > 0 {
			used[k] += u
			needR[i] -= u
			needC[j] -= u
			total -= u
		}
	}
	for k := range x { // back up to ⌊x⌋ first
		give(k, base[k])
	}
	// Then the largest fractional parts (ties by position).
	sort.SliceStable(cand, func(a, b int) bool { return frac[cand[a]] > frac[cand[b]] })
	for _, k := range cand {
		give(k, 1)
	}
	if !augment(r, c, needR, needC, used, capacity, total) {
		return nil, false
	}
	for k := range out {
		out[k] += float64(used[k])
	}
	return out, true
}

// augment places the total units rows still need by augmenting paths: from
// a row with units left to a column with room, along cells with spare
// capacity (row → column) and cells holding units (column → row).
func augment(r, c int, needR, needC, used, capacity []int, total int) bool {
	prevCol := make([]int, c) // the row that reached column j
	prevRow := make([]int, r) // the column that reached row i (−1: a source row)
	work := 0                 // cells scanned by the searches; capped (then: no rounding found)
	for total > 0 {
		if work += 2 * r * c; work > maxRoundingWork {
			return false
		}
		for j := range prevCol {
			prevCol[j] = -2
		}
		for i := range prevRow {
			prevRow[i] = -2
		}
		var queue []int
		for i := 0; i < r; i++ {
			if needR[i] > 0 {
				prevRow[i] = -1
				queue = append(queue, i)
			}
		}
		end := -1
		for len(queue) > 0 && end < 0 {
			i := queue[0]
			queue = queue[1:]
			for j := 0; j < c && end < 0; j++ {
				k := i*c + j
				if used[k] >= capacity[k] || prevCol[j] != -2 {
					continue
				}
				prevCol[j] = i
				if needC[j] > 0 {
					end = j
					break
				}
				for i2 := 0; i2 < r; i2++ { // cells holding units lead back to their rows
					if used[i2*c+j] > 0 && prevRow[i2] == -2 {
						prevRow[i2] = j
						queue = append(queue, i2)
					}
				}
			}
		}
		if end < 0 {
			return false // no augmenting path: no rounding within these bounds
		}
		// Flip the path: column end ← row i ← column j' ← row … ← source row.
		j := end
		needC[j]--
		for {
			i := prevCol[j]
			used[i*c+j]++
			back := prevRow[i]
			if back == -1 {
				needR[i]--
				break
			}
			used[i*c+back]--
			j = back
		}
		total--
	}
	return true
}

// roundToTotal rounds v in place to integers summing to n by largest
// remainders; nonneg keeps every cell ≥ 0 (v must then be ≥ 0 and n ≥ 0).
func roundToTotal(v []float64, n float64, nonneg bool) {
	frac := make([]float64, len(v))
	sum := 0.0
	for i, x := range v {
		f := math.Floor(x)
		frac[i] = x - f
		v[i] = f
		sum += f
	}
	order := make([]int, len(v))
	for i := range order {
		order[i] = i
	}
	// Largest fractional part first; ties by position, for reproducibility.
	sort.SliceStable(order, func(a, b int) bool { return frac[order[a]] > frac[order[b]] })
	d := n - sum
	for d > 0 && len(v) > 0 {
		for _, i := range order {
			if d <= 0 {
				break
			}
			v[i]++
			d--
		}
	}
	for d < 0 {
		moved := false
		for k := len(order) - 1; k >= 0 && d < 0; k-- { // smallest fractional part first
			i := order[k]
			if nonneg && v[i] < 1 {
				continue
			}
			v[i]--
			d++
			moved = true
		}
		if !moved {
			return // every cell is 0: the total cannot shrink further
		}
	}
}

// RoundTables rounds consistent tables on the attribute sets of a domain
// with the given sizes in place, exactly as MakeConsistent's Integer step
// does (see roundTables): to integers with grand total n (an integer; nonneg
// keeps cells ≥ 0, and needs them ≥ 0 on input), tables of at most two
// attributes to common rounded one-way margins by controlled rounding. It
// returns the numbers of controlled and fallback tables and the largest
// remaining inconsistency between two tables on a shared sub-marginal.
func RoundTables(sizes []int, tabs []Table, n float64, nonneg bool) (controlled, fallback int, inconsistency float64, err error) {
	if n != math.Round(n) || math.IsInf(n, 0) || (nonneg && n < 0) {
		return 0, 0, 0, errorf("rounding: the grand total must be an integer (non-negative with nonneg), got %v", n)
	}
	for i, t := range tabs {
		c := 1
		for k, a := range t.Attrs {
			if a < 0 || a >= len(sizes) || (k > 0 && a <= t.Attrs[k-1]) {
				return 0, 0, 0, errorf("rounding: table %d has attributes %v; they must be increasing positions of the %d attributes", i, t.Attrs, len(sizes))
			}
			c *= sizes[a]
		}
		if c != len(t.Values) {
			return 0, 0, 0, errorf("rounding: table %d has %d cells, its attributes %d", i, len(t.Values), c)
		}
	}
	p := &Plan{Sizes: sizes}
	controlled, fallback = p.roundTables(tabs, n, nonneg)
	return controlled, fallback, maxInconsistency(sizes, tabs), nil
}
