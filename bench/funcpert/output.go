package funcpert

import (
	"encoding/csv"
	"io"
	"strconv"
)

// WriteCSV writes the rows with the header eps,coeffs,method,rep,error.
func WriteCSV(w io.Writer, rows []Row) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"eps", "coeffs", "method", "rep", "error"}); err != nil {
		return err
	}
	for _, r := range rows {
		rec := []string{
			strconv.FormatFloat(r.Eps, 'g', -1, 64),
			strconv.Itoa(r.Coeffs),
			r.Method,
			strconv.Itoa(r.Rep),
			strconv.FormatFloat(r.Error, 'g', -1, 64),
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
