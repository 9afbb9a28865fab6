package records

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/progress"
)

// randomAccess returns r as an io.ReaderAt with its size: Options.Total, or
// the file's size from Stat or Seek.
func randomAccess(r io.Reader, opt *Options) (io.ReaderAt, int64, error) {
	ra, ok := r.(io.ReaderAt)
	if !ok {
		return nil, 0, errorf("the input is a Parquet file, which needs random access: pass an *os.File, or an io.ReaderAt with Options.Total set to its size")
	}
	size := opt.Total
	if size <= 0 {
		if st, ok := r.(interface{ Stat() (os.FileInfo, error) }); ok {
			if fi, err := st.Stat(); err == nil {
				size = fi.Size()
			}
		}
	}
	if size <= 0 {
		if sk, ok := r.(io.Seeker); ok {
			if n, err := sk.Seek(0, io.SeekEnd); err == nil {
				size = n
			}
		}
	}
	if size <= 0 {
		return nil, 0, errorf("the input is a Parquet file of unknown size: set Options.Total")
	}
	return ra, size, nil
}

// parquetRows is how many rows one read from a row group returns.
const parquetRows = 1024

// scanParquet reads the records of a Parquet file row group by row group,
// mapping each attribute's column through its codebook (or reading codes),
// and calls visit with each record's codes in domain order. A malformed
// file is an error wrapping ErrInput, never a panic.
func scanParquet(ra io.ReaderAt, size int64, attrs []domain.Attribute, opt *Options, visit func(codes []int)) (st Stats, err error) {
	start := time.Now()
	last := start
	w := &watchedReaderAt{r: ra}
	defer func() {
		if p := recover(); p != nil {
			err = w.fail("the Parquet file is malformed: %v", p)
		}
	}()
	f, err := parquet.OpenFile(w, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return Stats{}, w.fail("the Parquet file cannot be read: %v", err)
	}
	byCol := map[int]int{} // leaf column index → attribute
	var missing []string
	for i, a := range attrs {
		leaf, ok := f.Schema().Lookup(a.Name)
		if !ok || leaf.Node == nil || !leaf.Node.Leaf() {
			missing = append(missing, strconv.Quote(a.Name))
			continue
		}
		if leaf.Node.Repeated() || leaf.MaxRepetitionLevel > 0 {
			return Stats{}, errorf("the Parquet column %q is repeated (a list); each attribute needs one value a record", a.Name)
		}
		byCol[leaf.ColumnIndex] = i
	}
	if len(missing) > 0 {
		var cols []string
		for _, c := range f.Schema().Columns() {
			cols = append(cols, fmt.Sprint(c))
		}
		return Stats{}, errorf("the Parquet file lacks the column(s) %s (columns: %s)", strings.Join(missing, ", "), quoteClip(fmt.Sprint(cols)))
	}
	total := f.NumRows()
	every := opt.ProgressEvery
	if every <= 0 {
		every = 1_000_000
	}
	codes := make([]int, len(attrs))
	seen := make([]bool, len(attrs))
	rows := make([]parquet.Row, parquetRows)
	for _, rg := range f.RowGroups() {
		rr := rg.Rows()
		for {
			n, rerr := rr.ReadRows(rows)
			for _, row := range rows[:n] {
				clear(seen)
				for _, v := range row {
					i, ok := byCol[v.Column()]
					if !ok {
						continue
					}
					c, err := parquetCode(attrs[i], v)
					if err != nil {
						rr.Close()
						return st, errorf("record %d, column %q: value %s %v", st.Records+1, attrs[i].Name, quoteClip(parquetText(v)), err)
					}
					codes[i], seen[i] = c, true
				}
				for i, ok := range seen {
					if !ok {
						rr.Close()
						return st, errorf("record %d, column %q: no value", st.Records+1, attrs[i].Name)
					}
				}
				visit(codes)
				st.Records++
				// Every ProgressEvery records, and at least every progressGap once
				// a read is slow (codebook lookups, a slow disk): the first event
				// comes within a second.
				if opt.Progress.Enabled() && (st.Records%every == 0 || st.Records%64 == 0 && time.Since(last) >= progressGap) {
					last = time.Now()
					opt.Progress(parquetEvent(st.Records, total, start, false))
				}
			}
			if errors.Is(rerr, io.EOF) {
				break
			}
			if rerr != nil {
				rr.Close()
				return st, w.fail("the Parquet file cannot be read at record %d: %v", st.Records+1, rerr)
			}
			if n == 0 {
				break
			}
		}
		if err := rr.Close(); err != nil && !errors.Is(err, io.EOF) {
			return st, w.fail("the Parquet file cannot be read: %v", err)
		}
	}
	st.Bytes = size
	if st.Records == 0 {
		return st, errorf("the Parquet file has no records")
	}
	opt.Progress.Report(parquetEvent(st.Records, total, start, true))
	return st, nil
}

// watchedReaderAt remembers the first error, other than io.EOF, of the
// caller's reader, so that a failed read or an interrupt (a cancelled
// context reaching the read through the caller's reader) is returned as it
// is rather than as a malformed file.
type watchedReaderAt struct {
	r   io.ReaderAt
	err error
}

func (w *watchedReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := w.r.ReadAt(p, off)
	if err != nil && !errors.Is(err, io.EOF) && w.err == nil {
		w.err = err
	}
	return n, err
}

// fail is the error to return for a failure of the Parquet library: the
// reader's own error when it had one, else a bad-input error.
func (w *watchedReaderAt) fail(format string, a ...any) error {
	if w.err != nil {
		return fmt.Errorf("records: reading the Parquet file: %w", w.err)
	}
	return errorf(format, a...)
}

// parquetCode is the code of one attribute's value: through the codebook
// (numbers directly for bins), or the integer code itself.
func parquetCode(a domain.Attribute, v parquet.Value) (int, error) {
	if cb := a.Codebook; cb != nil && cb.Binned() && !v.IsNull() {
		switch v.Kind() {
		case parquet.Int32, parquet.Int64:
			return cb.CodeNumber(float64(v.Int64()))
		case parquet.Float:
			return cb.CodeNumber(float64(v.Float()))
		case parquet.Double:
			return cb.CodeNumber(v.Double())
		}
	}
	s := parquetText(v)
	if cb := a.Codebook; cb != nil {
		return cb.Code(s)
	}
	c, ok := parseCode(s)
	if !ok || c >= a.Size {
		return 0, fmt.Errorf("is not an integer code in [0, %d)", a.Size)
	}
	return c, nil
}

// parquetText is a value as the text a CSV file would hold: strings as they
// are, numbers in their shortest decimal form, null as "".
func parquetText(v parquet.Value) string {
	if v.IsNull() {
		return ""
	}
	switch v.Kind() {
	case parquet.ByteArray, parquet.FixedLenByteArray:
		return string(v.ByteArray())
	case parquet.Boolean:
		return strconv.FormatBool(v.Boolean())
	case parquet.Int32, parquet.Int64:
		return strconv.FormatInt(v.Int64(), 10)
	case parquet.Float:
		return strconv.FormatFloat(float64(v.Float()), 'g', -1, 32)
	case parquet.Double:
		return strconv.FormatFloat(v.Double(), 'g', -1, 64)
	}
	return v.String()
}

// parquetEvent is the progress event after records of total rows.
func parquetEvent(records, total int64, start time.Time, done bool) progress.Event {
	e := progress.Event{Stage: "records", Count: records, Unit: "records", Objective: math.NaN(), Bound: math.NaN(),
		Gap: math.NaN(), Seconds: time.Since(start).Seconds(), Done: done}
	if total > 0 {
		e.Fraction = math.Min(1, float64(records)/float64(total))
	}
	return e
}
