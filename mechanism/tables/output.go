package tables

import (
	"bufio"
	"io"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/mechanism/domain"
)

// WriteAnswersCSV writes one row per workload query:
//
//	term,query,answer,stddev,<attribute 1>,…,<attribute k>
//
// query is the row index within the term: the products' rows in the term's
// order, each product's rows row-major over its blocks in domain order —
// the last attribute varies fastest, the first slowest (AnswerOrder). Each
// attribute column names what the query selects of that attribute (see
// QueryLabel): a value ("3") for an identity block, an inclusive range
// ("0..34"; row i of a prefix block is "0..i") for a row that sums a run of
// consecutive values, "row i of F" for any other row of block F (a matrix
// block's file, or a built-in such as wdiscrete:m=4), and empty for an
// attribute the query sums over (a total block). The grand-total query (a
// product of total blocks only, e.g. the empty marginal of an upto term)
// says "total" in every attribute column, so it is not mistaken for a
// blank row. Numbers are written in the shortest form that reads back to
// the same double. When the noise came from a seeded simulator
// (res.Private is false) a last column "private" says false on every row,
// so the file cannot pass for a private release.
func WriteAnswersCSV(out io.Writer, k *domain.Kron, res *Result) error {
	w, err := explicitOf(k)
	if err != nil {
		return err
	}
	return writeAnswersCSV(out, w, res)
}

// writeAnswersCSV is WriteAnswersCSV on the explicit workload.
func writeAnswersCSV(out io.Writer, w *explicitWorkload, res *Result) error {
	bw := bufio.NewWriterSize(out, 1<<16)
	header := "term,query,answer,stddev"
	for _, a := range w.Domain {
		header += "," + csvField(a.Name)
	}
	if !res.Private {
		header += ",private"
	}
	bw.WriteString(header + "\n")
	codes := make([]int, len(w.Domain))
	labels := map[*mat.Dense][]string{} // per block, per row (blocks are shared)
	var line []byte
	for ti := range w.Terms {
		t := &w.Terms[ti]
		name := csvField(t.Name)
		q := 0
		for pi := range t.Products {
			p := &t.Products[pi]
			cols := productLabels(p, labels)
			// Odometer over the rows of each block, last attribute fastest.
			rows := make([]int, len(p.Blocks))
			for i, b := range p.Blocks {
				rows[i], _ = b.Dims()
			}
			clear(codes)
			for n := p.Queries(); n > 0; n-- {
				line = append(line[:0], name...)
				line = append(line, ',')
				line = strconv.AppendInt(line, int64(q), 10)
				line = append(line, ',')
				line = strconv.AppendFloat(line, res.Answers[ti][q], 'g', -1, 64)
				line = append(line, ',')
				line = strconv.AppendFloat(line, res.Std[ti][q], 'g', -1, 64)
				for i := range w.Domain {
					line = append(line, ',')
					line = append(line, cols[i][codes[i]]...)
				}
				if !res.Private {
					line = append(line, ",false"...)
				}
				line = append(line, '\n')
				if _, err := bw.Write(line); err != nil {
					return err
				}
				q++
				for i := len(codes) - 1; i >= 0; i-- {
					if codes[i]++; codes[i] < rows[i] {
						break
					}
					codes[i] = 0
				}
			}
		}
	}
	return bw.Flush()
}

// productLabels returns, per attribute, the (CSV-quoted) label of every row
// of the product's block, from cache when the block was seen.
func productLabels(p *explicitProduct, cache map[*mat.Dense][]string) [][]string {
	grand := true
	for _, k := range p.Kinds {
		grand = grand && k == domain.BlockTotal
	}
	out := make([][]string, len(p.Blocks))
	for i, b := range p.Blocks {
		if grand {
			out[i] = []string{"total"}
			continue
		}
		if l, ok := cache[b]; ok && p.Kinds[i] != domain.BlockIdentity {
			out[i] = l
			continue
		}
		src := ""
		if i < len(p.Sources) {
			src = p.Sources[i]
		}
		r, _ := b.Dims()
		l := make([]string, r)
		for row := range l {
			l[row] = csvField(QueryLabel(b, p.Kinds[i], src, row))
		}
		if p.Kinds[i] != domain.BlockIdentity {
			cache[b] = l
		}
		out[i] = l
	}
	return out
}

// QueryLabel names what row row of a block selects of its attribute: the
// value for an identity block, "" for a total block (summed over), "lo..hi"
// for a row that is the indicator of the inclusive run of values lo…hi
// (row i of a prefix block is "0..i"), and otherwise "row i of SOURCE"
// (source the block's description or file; "the block" when unknown).
func QueryLabel(b *mat.Dense, kind domain.BlockKind, source string, row int) string {
	switch kind {
	case domain.BlockIdentity:
		return strconv.Itoa(row)
	case domain.BlockTotal:
		return ""
	}
	if lo, hi, ok := indicatorRun(b.RawRowView(row)); ok {
		return strconv.Itoa(lo) + ".." + strconv.Itoa(hi)
	}
	if source == "" {
		source = "the block"
	}
	return "row " + strconv.Itoa(row) + " of " + source
}

// indicatorRun reports whether v is 1 on one run of consecutive positions
// lo…hi and 0 elsewhere.
func indicatorRun(v []float64) (lo, hi int, ok bool) {
	lo, hi = -1, -1
	for j, x := range v {
		switch {
		case x == 1 && (hi == -1 || hi == j-1):
			if lo < 0 {
				lo = j
			}
			hi = j
		case x != 0:
			return 0, 0, false
		}
	}
	return lo, hi, lo >= 0
}

// csvField quotes a field when it needs quoting.
func csvField(s string) string {
	for _, c := range s {
		if c == ',' || c == '"' || c == '\n' || c == '\r' {
			return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
		}
	}
	return s
}

// AnswerOrder documents the rows and columns of answers.csv (for dpsolve
// release -h and the docs).
const AnswerOrder = `answers.csv: one row per query — term,query,answer,stddev, then one column per attribute
(domain order), then private=false on every row of a seeded simulation.
  order    a term's rows are its products in the spec's order (a marginals term: its attribute sets
           in lexicographic order, smaller sets first for upto); within a product the queries are
           row-major over the attributes in domain order: the LAST attribute varies fastest, the
           first slowest. {"age": "prefix", "sex": "identity"} on age (85) and sex (2) gives
           age≤0 & sex=0, age≤0 & sex=1, age≤1 & sex=0, …, age≤84 & sex=1 (170 rows).
  columns  what the query selects of each attribute its product restricts:
             3          a value (identity block)
             0..34      the inclusive range of values 0…34 (row i of a prefix block is 0..i;
                        ranges, allrange and width blocks alike)
             row 5 of F row 5 of block F (a matrix block's file, or a built-in such as wdiscrete)
             (empty)    summed over the attribute (total block, attributes outside a marginal)
             total      in every column: the grand total (e.g. the empty marginal of an upto term)`
