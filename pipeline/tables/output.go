package tables

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/model/domain"
)

// WriteAnswersCSV writes one row per workload query:
//
//	term,query,answer,stddev,<attribute 1>,…,<attribute k>,table,<attribute label>,…
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
// blank row. table names the table the row belongs to, TableName: the
// term's name and the attributes its product restricts, "pairs (age,
// sex)". Then, for each attribute with a codebook (domain.Codebook), a
// column "<attribute> label" gives the selection in the codebook's words:
// the value's label ("Male"), a bin "[17, 18)", a run of bins "[17, 30)" or
// of values "Female..Male"; empty where the code column is. Numbers are
// written in the shortest form that reads back to the same double. When the
// noise came from a seeded simulator (res.Private is false) a last column
// "private" says false on every row, so the file cannot pass for a private
// release.
//
// Text a spreadsheet would evaluate as a formula — a name or label that
// starts with =, +, -, @, a tab or a carriage return and is not a number —
// is written with a leading apostrophe ('=x), the usual guard; negative
// numbers stay numbers. Attribute names that would repeat a column name
// are refused (domain.CheckColumnNames).
func WriteAnswersCSV(out io.Writer, k *domain.Kron, res *Result) error {
	w, err := explicitOf(k)
	if err != nil {
		return err
	}
	return writeAnswersCSV(out, w, res)
}

// writeAnswersCSV is WriteAnswersCSV on the explicit workload.
func writeAnswersCSV(out io.Writer, w *explicitWorkload, res *Result) error {
	if err := domain.CheckColumnNames(w.Domain); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(out, 1<<16)
	header := "term,query,answer,stddev"
	for _, a := range w.Domain {
		header += "," + cell(a.Name)
	}
	header += ",table"
	for _, a := range w.Domain {
		if a.Codebook != nil {
			header += "," + cell(domain.LabelColumn(a.Name))
		}
	}
	if !res.Private {
		header += ",private"
	}
	bw.WriteString(header + "\n")
	codes := make([]int, len(w.Domain))
	labels := map[*mat.Dense][]string{} // per block, per row (blocks are shared)
	var line []byte
	// Reused for every product (166,751 marginals of 100 attributes
	// allocated 1.6 GB of them).
	var scratch explicitProduct
	var cols, words [][]string
	var rows []int
	for ti := range w.Terms {
		t := &w.Terms[ti]
		name := cell(t.Name)
		q := 0
		for pi := range t.Products {
			p := t.Products[pi].expandTo(&scratch)
			cols = productLabelsTo(cols, p, labels)
			words = productWordsTo(words, w.Domain, p)
			table := cell(TableName(t.Name, w.Domain, p.Kinds))
			// Odometer over the rows of each block, last attribute fastest.
			rows = resize(rows, len(p.Blocks))
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
				line = append(line, ',')
				line = append(line, table...)
				for i := range w.Domain {
					if words[i] != nil {
						line = append(line, ',')
						line = append(line, words[i][codes[i]]...)
					}
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

// WriteTableFiles writes one CSV file per table of the release into the
// existing directory dir and returns the files' names in workload order. A
// table is one product of a term (one marginal of a marginals term); its
// file is named after TableName ("pairs (age, sex)" → "pairs_age_sex.csv",
// made unique). A table over two attributes is a crosstab: the first
// attribute's selections down the first column, the second's across the
// header, the answers in the cells, and beside it NAME.stddev.csv, the same
// crosstab of standard deviations. Any other table is a list: one column
// per attribute it restricts (the code or range, and the codebook's label
// when the attribute has one), then answer and stddev. Labels are written as
// in answers.csv (WriteAnswersCSV), formula guard included; a seeded
// simulation says "NOT PRIVATE" in the corner cell of a crosstab and has a
// private=false column in a list.
func WriteTableFiles(dir string, k *domain.Kron, res *Result) ([]string, error) {
	w, err := explicitOf(k)
	if err != nil {
		return nil, err
	}
	return writeTableFiles(dir, w, res)
}

func writeTableFiles(dir string, w *explicitWorkload, res *Result) ([]string, error) {
	if err := domain.CheckColumnNames(w.Domain); err != nil {
		return nil, err
	}
	used := map[string]bool{}
	var names []string
	labels := map[*mat.Dense][]string{}
	for ti := range w.Terms {
		t := &w.Terms[ti]
		q0 := 0
		for pi := range t.Products {
			p := t.Products[pi].expanded()
			n := p.Queries()
			ans, std := res.Answers[ti][q0:q0+n], res.Std[ti][q0:q0+n]
			q0 += n
			name := uniqueTableName(used, fileStem(TableName(t.Name, w.Domain, p.Kinds)))
			var on []int // attributes the table restricts
			for i, kd := range p.Kinds {
				if kd != domain.BlockTotal {
					on = append(on, i)
				}
			}
			tf := tableFile{dir: dir, name: name, w: w, p: p, on: on,
				cols: productLabels(p, labels), words: productWords(w.Domain, p), private: res.Private}
			if len(on) == 2 {
				var err error
				if names, err = tf.writeCrosstab(names, ans, std); err != nil {
					return names, err
				}
				continue
			}
			if err := tf.writeList(n, ans, std); err != nil {
				return names, err
			}
			names = append(names, name+".csv")
		}
	}
	return names, nil
}

// uniqueTableName returns base, or base-2, base-3, ... when an earlier table
// of this call already took that name case-insensitively (so that the files
// do not collide on a case-insensitive file system), and records the name
// it returns as taken.
func uniqueTableName(used map[string]bool, base string) string {
	name := base
	for i := 2; used[strings.ToLower(name)]; i++ {
		name = base + "-" + strconv.Itoa(i)
	}
	used[strings.ToLower(name)] = true
	return name
}

// tableFile is what writing one product's table needs: kept together so
// that the crosstab and list layouts, which share the naming and labels of
// rows, can each live in their own function.
type tableFile struct {
	dir, name string
	w         *explicitWorkload
	p         *explicitProduct
	on        []int      // attributes the table restricts
	cols      [][]string // codes or ranges of each attribute's rows
	words     [][]string // codebook labels of each attribute's rows, nil when none
	private   bool
}

// sel names row r of attribute i: the codebook's label when it has one,
// else the code or range.
func (tf *tableFile) sel(i, r int) string {
	if tf.words[i] != nil && tf.words[i][r] != "" {
		return tf.words[i][r]
	}
	return tf.cols[i][r]
}

// writeCrosstab writes a table restricting two attributes as two crosstabs,
// NAME.csv of answers then NAME.stddev.csv of standard deviations, and
// appends each file's name to names once it is written, so that on an error
// names still lists exactly the files already made.
func (tf *tableFile) writeCrosstab(names []string, ans, std []float64) ([]string, error) {
	a, b := tf.on[0], tf.on[1]
	ra, _ := tf.p.Blocks[a].Dims()
	rb, _ := tf.p.Blocks[b].Dims()
	for _, part := range []struct {
		suffix string
		v      []float64
	}{{".csv", ans}, {".stddev.csv", std}} {
		err := writeFile(filepath.Join(tf.dir, tf.name+part.suffix), func(bw *bufio.Writer) {
			corner := tf.w.Domain[a].Name + " \\ " + tf.w.Domain[b].Name
			if part.suffix != ".csv" {
				corner += " (stddev)"
			}
			if !tf.private {
				corner += " (NOT PRIVATE: seeded simulation)"
			}
			bw.WriteString(cell(corner))
			for c := 0; c < rb; c++ {
				bw.WriteString("," + tf.sel(b, c))
			}
			bw.WriteString("\n")
			var line []byte
			for r := 0; r < ra; r++ {
				line = append(line[:0], tf.sel(a, r)...)
				for c := 0; c < rb; c++ {
					line = append(line, ',')
					// Total blocks have one row: the query index is
					// row-major over a and b alone.
					line = strconv.AppendFloat(line, part.v[r*rb+c], 'g', -1, 64)
				}
				bw.Write(append(line, '\n'))
			}
		})
		if err != nil {
			return names, err
		}
		names = append(names, tf.name+part.suffix)
	}
	return names, nil
}

// writeList writes any other table as NAME.csv, a list of its n queries:
// one column per restricted attribute (and its label column when the
// codebook has labels), then answer and stddev, and private=false for a
// seeded simulation. Rows run over the blocks' rows in row-major order.
func (tf *tableFile) writeList(n int, ans, std []float64) error {
	p, words, cols := tf.p, tf.words, tf.cols
	return writeFile(filepath.Join(tf.dir, tf.name+".csv"), func(bw *bufio.Writer) {
		var head []string
		for _, i := range tf.on {
			head = append(head, cell(tf.w.Domain[i].Name))
			if words[i] != nil {
				head = append(head, cell(domain.LabelColumn(tf.w.Domain[i].Name)))
			}
		}
		head = append(head, "answer", "stddev")
		if !tf.private {
			head = append(head, "private")
		}
		bw.WriteString(strings.Join(head, ",") + "\n")
		idx := make([]int, len(p.Blocks))
		rows := make([]int, len(p.Blocks))
		for i, bl := range p.Blocks {
			rows[i], _ = bl.Dims()
		}
		var line []byte
		for q := 0; q < n; q++ {
			line = line[:0]
			for _, i := range tf.on {
				line = append(line, cols[i][idx[i]]...)
				line = append(line, ',')
				if words[i] != nil {
					line = append(line, words[i][idx[i]]...)
					line = append(line, ',')
				}
			}
			line = strconv.AppendFloat(line, ans[q], 'g', -1, 64)
			line = append(line, ',')
			line = strconv.AppendFloat(line, std[q], 'g', -1, 64)
			if !tf.private {
				line = append(line, ",false"...)
			}
			bw.Write(append(line, '\n'))
			for i := len(idx) - 1; i >= 0; i-- {
				if idx[i]++; idx[i] < rows[i] {
					break
				}
				idx[i] = 0
			}
		}
	})
}

// writeFile creates path, fills it through a buffer and syncs it.
func writeFile(path string, fill func(*bufio.Writer)) error {
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(fh, 1<<16)
	fill(bw)
	if err := bw.Flush(); err != nil {
		fh.Close()
		return err
	}
	if err := fh.Sync(); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

// fileStem turns a table name into a portable file name: letters, digits,
// '.', '-' and '_' kept, every other run of characters one '_', at most 100
// bytes, never starting with '.' or '-'.
func fileStem(s string) string {
	var b strings.Builder
	under := false
	for _, r := range s {
		ok := r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_')
		if ok {
			b.WriteRune(r)
			under = false
		} else if !under {
			b.WriteByte('_')
			under = true
		}
	}
	out := strings.Trim(b.String(), "_")
	if len(out) > 100 {
		out = out[:100]
	}
	if out == "" || out[0] == '.' || out[0] == '-' {
		out = "t" + out
	}
	return out
}

// TableName names the table a product of a term answers: the term's name
// and the attributes whose block is not a total, "pairs (age, sex)", or
// "u (total)" for the grand total.
func TableName(term string, attrs []domain.Attribute, kinds []domain.BlockKind) string {
	var as []string
	for i, k := range kinds {
		if k != domain.BlockTotal {
			as = append(as, attrs[i].Name)
		}
	}
	if len(as) == 0 {
		return term + " (total)"
	}
	return term + " (" + strings.Join(as, ", ") + ")"
}

// productLabels returns, per attribute, the (CSV-quoted) label of every row
// of the product's block, from cache when the block was seen.
func productLabels(p *explicitProduct, cache map[*mat.Dense][]string) [][]string {
	return productLabelsTo(nil, p, cache)
}

// productLabelsTo is productLabels reusing out's array.
func productLabelsTo(out [][]string, p *explicitProduct, cache map[*mat.Dense][]string) [][]string {
	grand := true
	for _, k := range p.Kinds {
		grand = grand && k == domain.BlockTotal
	}
	out = resize(out, len(p.Blocks))
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
			l[row] = cell(QueryLabel(b, p.Kinds[i], src, row))
		}
		if p.Kinds[i] != domain.BlockIdentity {
			cache[b] = l
		}
		out[i] = l
	}
	return out
}

// productWords returns, per attribute with a codebook, the (CSV-quoted)
// codebook label of every row of the product's block (CodebookLabel); nil
// for an attribute without one.
func productWords(attrs []domain.Attribute, p *explicitProduct) [][]string {
	return productWordsTo(nil, attrs, p)
}

// productWordsTo is productWords reusing out's array.
func productWordsTo(out [][]string, attrs []domain.Attribute, p *explicitProduct) [][]string {
	grand := true
	for _, k := range p.Kinds {
		grand = grand && k == domain.BlockTotal
	}
	out = resize(out, len(p.Blocks))
	for i, b := range p.Blocks {
		cb := attrs[i].Codebook
		if cb == nil {
			out[i] = nil
			continue
		}
		if grand {
			out[i] = []string{"total"}
			continue
		}
		r, _ := b.Dims()
		out[i] = make([]string, r)
		for row := range out[i] {
			out[i][row] = cell(CodebookLabel(cb, b, p.Kinds[i], row))
		}
	}
	return out
}

// CodebookLabel names what row row of a block selects of an attribute with
// codebook cb, in the codebook's words: the value's label or bin for an
// identity block, the run's labels or bins for a row that sums consecutive
// values ("Female..Male", "[17, 30)"), and "" for a total block or any other
// row.
func CodebookLabel(cb *domain.Codebook, b *mat.Dense, kind domain.BlockKind, row int) string {
	switch kind {
	case domain.BlockIdentity:
		return cb.Label(row)
	case domain.BlockTotal:
		return ""
	}
	if lo, hi, ok := indicatorRun(b.RawRowView(row)); ok {
		return cb.RangeLabel(lo, hi)
	}
	return ""
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

// cell is a text field for a CSV a spreadsheet may open: FormulaSafe, then
// quoted when it needs quoting.
func cell(s string) string { return csvField(FormulaSafe(s)) }

// FormulaSafe returns s with a leading apostrophe when a spreadsheet would
// read it as a formula: it starts with =, +, -, @, a tab or a carriage
// return and is not a number (so "-3" and "+2.5e-3" stay numbers, "=SUM(A1)"
// and "-x" become "'=SUM(A1)" and "'-x").
func FormulaSafe(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		if _, err := strconv.ParseFloat(s, 64); err == nil && s[0] != '\t' && s[0] != '\r' {
			return s
		}
		return "'" + s
	}
	return s
}

// AnswerOrder documents the rows and columns of answers.csv (for dpsolve
// release -h and the docs).
const AnswerOrder = `answers.csv: one row per query — term,query,answer,stddev, then one column per attribute
(domain order), then table (the term and the attributes of its table, "pairs (age, sex)"), then
"<attribute> label" for each attribute with values or edges in the spec ("Male", "[17, 18)"), then
private=false on every row of a seeded simulation. Text starting =, +, -, @ that is not a number is
written with a leading apostrophe so spreadsheets do not evaluate it.
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
