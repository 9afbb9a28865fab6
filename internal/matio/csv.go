package matio

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// readCSV parses delimited text: one row per line, fields separated by
// commas (when the line contains one) or else by runs of white space; '#'
// starts a comment; blank lines are skipped. Row and column numbers in errors
// are 1-based line numbers of the file and 1-based field positions, the way a
// person counts them in an editor.
func readCSV(r io.Reader) (*array, error) {
	br := bufio.NewReader(r)
	var (
		data     []float64
		rows     int
		cols     = -1
		firstRow int // line number of the first data row
		lineNo   int
	)
	for {
		line, rerr := br.ReadString('\n')
		if rerr != nil && rerr != io.EOF {
			return nil, fmt.Errorf("csv: %w", rerr)
		}
		if line == "" && rerr == io.EOF {
			break
		}
		lineNo++
		if lineNo == 1 {
			line = strings.TrimPrefix(line, "\uFEFF") // byte-order mark
		}
		if k := strings.IndexByte(line, '#'); k >= 0 {
			line = line[:k]
		}
		line = strings.TrimSpace(line)
		if line != "" {
			var fields []string
			if strings.IndexByte(line, ',') >= 0 {
				fields = strings.Split(line, ",")
			} else {
				fields = strings.Fields(line)
			}
			if cols >= 0 && len(fields) != cols {
				return nil, fmt.Errorf("csv: %w: line %d has %d values but line %d has %d (all rows must have the same length)",
					ErrShape, lineNo, len(fields), firstRow, cols)
			}
			for j, f := range fields {
				f = strings.TrimSpace(f)
				if f == "" {
					return nil, fmt.Errorf("csv: %w: line %d, column %d: empty field", ErrFormat, lineNo, j+1)
				}
				x, err := strconv.ParseFloat(f, 64)
				if err != nil && !errors.Is(err, strconv.ErrRange) {
					return nil, fmt.Errorf("csv: %w: line %d, column %d: %q is not a number", ErrFormat, lineNo, j+1, truncate(f, 40))
				}
				if math.IsNaN(x) || math.IsInf(x, 0) {
					what := fmt.Sprint(x)
					if err != nil {
						what = fmt.Sprintf("%q (out of float64 range)", truncate(f, 40))
					}
					return nil, fmt.Errorf("csv: %w: %s at line %d, column %d (matrix row %d, column %d, 0-based)",
						ErrNonFinite, what, lineNo, j+1, rows, j)
				}
				data = append(data, x)
			}
			if cols < 0 {
				cols, firstRow = len(fields), lineNo
			}
			rows++
		}
		if rerr == io.EOF {
			break
		}
	}
	if rows == 0 {
		return nil, fmt.Errorf("csv: %w: no numbers (only blank lines or comments)", ErrEmpty)
	}
	return &array{shape: []int{rows, cols}, data: data}, nil
}

// writeCSV writes a 2-D array as comma-separated rows, a 1-D array as one
// value per line, each value in the shortest form that parses back exactly.
func writeCSV(w io.Writer, shape []int, chunks int, next func(int) []float64) error {
	cols := 1
	if len(shape) == 2 {
		cols = shape[1]
	}
	bw := bufio.NewWriter(w)
	var buf []byte
	k := 0
	for i := 0; i < chunks; i++ {
		for _, x := range next(i) {
			buf = buf[:0]
			if k%cols != 0 {
				buf = append(buf, ',')
			}
			buf = strconv.AppendFloat(buf, x, 'g', -1, 64)
			if k%cols == cols-1 {
				buf = append(buf, '\n')
			}
			if _, err := bw.Write(buf); err != nil {
				return err
			}
			k++
		}
	}
	return bw.Flush()
}
