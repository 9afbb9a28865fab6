package tables

import (
	"bufio"
	"io"
	"strconv"
	"strings"
)

// WriteAnswersCSV writes one row per workload query:
//
//	term,query,answer,stddev,<attribute 1>,…,<attribute k>
//
// query is the row index within the term (row-major over the Kronecker rows
// of each product, in domain order, products concatenated in the term's
// order). For a query of a marginal (a product of identity and total
// blocks) the column of each identity attribute holds the query's value of
// that attribute and the columns of summed-over attributes are empty; for
// other products every attribute column is empty. Numbers are written in
// the shortest form that reads back to the same double. When the noise came
// from a seeded simulator (res.Private is false) a last column "private"
// says false on every row, so the file cannot pass for a private release.
func WriteAnswersCSV(out io.Writer, w *Workload, res *Result) error {
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
	var line []byte
	for ti := range w.Terms {
		t := &w.Terms[ti]
		name := csvField(t.Name)
		q := 0
		for pi := range t.Products {
			p := &t.Products[pi]
			labelled := p.Set != nil
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
					if labelled && p.Kinds[i] == Identity {
						line = strconv.AppendInt(line, int64(codes[i]), 10)
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

// csvField quotes a field when it needs quoting.
func csvField(s string) string {
	for _, c := range s {
		if c == ',' || c == '"' || c == '\n' || c == '\r' {
			return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
		}
	}
	return s
}
