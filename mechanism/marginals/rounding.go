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
// ⌊t⌋ or ⌊t⌋ + 1 so that its row and column sums equal the two rounded margins
// (a bipartite flow; see controlledRound). Then every table of at most two
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

// controlledRound rounds the r×c row-major table x to integers, each cell
// to ⌊x⌋ or ⌊x⌋ + 1 (so it moves by less than 1, or by exactly 1 when x is
// an integer), with row sums rows and column sums cols (integers with equal
// totals), and reports whether such a rounding exists. Requiring ⌈x⌉ would
// be too strict: the one-way margins are rounded independently, and the
// unit a row's rounding adds may be due in a column where that row's cell
// is an exact 0. It starts from the floors; every cell may take one more
// unit, row i must place rows[i] − Σ_j ⌊x_ij⌋ units and column j receive
// cols[j] − Σ_i ⌊x_ij⌋: a bipartite b-matching, found greedily (largest
// fractional parts first) and completed by augmenting paths (breadth-first
// search over unused cells forward and used cells backward), which finds
// one whenever one exists (max-flow min-cut).
func controlledRound(x []float64, r, c int, rows, cols []float64) ([]float64, bool) {
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
	cand := make([]int, len(x)) // every cell may take one unit
	for k, v := range x {
		f := math.Floor(v)
		out[k] = f
		frac[k] = v - f
		needR[k/c] -= int(f)
		needC[k%c] -= int(f)
		cand[k] = k
	}
	total := 0
	for _, v := range needR {
		if v < 0 {
			return nil, false
		}
		total += v
	}
	totalC := 0
	for _, v := range needC {
		if v < 0 {
			return nil, false
		}
		totalC += v
	}
	if total != totalC || total > len(cand) {
		return nil, false
	}
	// Greedy: largest fractional parts first (ties by position).
	sort.SliceStable(cand, func(a, b int) bool { return frac[cand[a]] > frac[cand[b]] })
	used := make([]bool, len(x))
	for _, k := range cand {
		i, j := k/c, k%c
		if needR[i] > 0 && needC[j] > 0 {
			used[k] = true
			needR[i]--
			needC[j]--
			total--
		}
	}
	// Augment: from a row with units left to a column with room, along
	// unused candidate cells (row → column) and used cells (column → row).
	prevCol := make([]int, c) // the row that reached column j
	prevRow := make([]int, r) // the column that reached row i (−1: a source row)
	work := 0                 // cells scanned by the searches; capped (then: no rounding found)
	for total > 0 {
		if work += 2 * r * c; work > maxRoundingWork {
			return nil, false
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
				if used[k] || prevCol[j] != -2 {
					continue
				}
				prevCol[j] = i
				if needC[j] > 0 {
					end = j
					break
				}
				for i2 := 0; i2 < r; i2++ { // used cells lead back to their rows
					if used[i2*c+j] && prevRow[i2] == -2 {
						prevRow[i2] = j
						queue = append(queue, i2)
					}
				}
			}
		}
		if end < 0 {
			return nil, false // no augmenting path: no controlled rounding
		}
		// Flip the path: column end ← row i ← column j' ← row … ← source row.
		j := end
		needC[j]--
		for {
			i := prevCol[j]
			used[i*c+j] = true
			back := prevRow[i]
			if back == -1 {
				needR[i]--
				break
			}
			used[i*c+back] = false
			j = back
		}
		total--
	}
	for k := range out {
		if used[k] {
			out[k]++
		}
	}
	return out, true
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
