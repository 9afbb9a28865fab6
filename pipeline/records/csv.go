package records

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/progress"
)

// Options configures a read. The zero value (or nil) is usable.
type Options struct {
	// Progress, if non-nil, receives dpsolve's progress events (Stage
	// "records", Count the records read so far, Unit "records", Fraction
	// the share of Total bytes consumed when Total is known) every
	// ProgressEvery records and once more at the end with Done set. It runs
	// on the reading goroutine.
	Progress progress.Func
	// ProgressEvery is the number of records between progress reports;
	// 0 means 1,000,000.
	ProgressEvery int64
	// Total is the input's size in bytes, from which progress events
	// carry the fraction read; 0 if unknown.
	Total int64
	// MemoryLimit, if positive, replaces AvailableMemory as the limit the
	// output tables must fit in (tests use it; so can a caller that wants
	// to leave room for other work).
	MemoryLimit uint64
}

// Stats describes a completed read.
type Stats struct {
	// Records is the number of data rows.
	Records int64
	// Bytes is the number of input bytes read.
	Bytes int64
}

// Table is a marginal table: the counts of the records over the cells of a
// set of attributes, row-major over the set in domain order.
type Table struct {
	// Attrs are the set's attribute positions in the domain, increasing.
	Attrs []int
	// Sizes are the attributes' sizes, in the same order.
	Sizes []int
	// Counts has Π Sizes entries (1 for the empty set: the total).
	Counts []float64
}

// ReadHistogram reads records from r and returns the full histogram over the
// domain (length Π sizes, row-major, first attribute slowest). Before
// allocating it checks that the histogram fits (8 bytes a cell) in the
// available memory and refuses with both figures when it does not.
func ReadHistogram(r io.Reader, attrs []domain.Attribute, opt *Options) ([]float64, Stats, error) {
	n, err := Cells(attrs)
	if err != nil {
		return nil, Stats{}, err
	}
	if err := checkFits(8*float64(n), fmt.Sprintf("the full histogram over %d cells", n), opt); err != nil {
		return nil, Stats{}, err
	}
	hist := make([]float64, n)
	st, err := scan(r, attrs, opt, func(codes []int) {
		hist[Index(attrs, codes)]++
	})
	if err != nil {
		return nil, st, err
	}
	return hist, st, nil
}

// ReadMarginals reads records from r and returns one marginal table per set
// of attribute positions (each set's positions are sorted into domain order;
// a position may not repeat; the empty set gives the total). It never forms
// the full histogram, so it works for domains of any size; the tables must
// fit in memory together, which is checked before allocating.
func ReadMarginals(r io.Reader, attrs []domain.Attribute, sets [][]int, opt *Options) ([]Table, Stats, error) {
	if err := checkDomain(attrs); err != nil {
		return nil, Stats{}, err
	}
	tables, err := newTables(attrs, sets, opt)
	if err != nil {
		return nil, Stats{}, err
	}
	st, err := scan(r, attrs, opt, func(codes []int) {
		for t := range tables {
			tb := &tables[t]
			idx := 0
			for i, a := range tb.Attrs {
				idx = idx*tb.Sizes[i] + codes[a]
			}
			tb.Counts[idx]++
		}
	})
	if err != nil {
		return nil, st, err
	}
	return tables, st, nil
}

// SetsByName converts sets of attribute names into sets of domain positions.
func SetsByName(attrs []domain.Attribute, sets [][]string) ([][]int, error) {
	pos := make(map[string]int, len(attrs))
	for i, a := range attrs {
		pos[a.Name] = i
	}
	out := make([][]int, len(sets))
	for s, names := range sets {
		out[s] = make([]int, len(names))
		for k, name := range names {
			i, ok := pos[name]
			if !ok {
				return nil, errorf("marginal %d names attribute %q, which is not in the domain", s+1, name)
			}
			out[s][k] = i
		}
	}
	return out, nil
}

// newTables validates the sets and allocates their zeroed tables.
func newTables(attrs []domain.Attribute, sets [][]int, opt *Options) ([]Table, error) {
	tables := make([]Table, len(sets))
	var bytes float64
	for s, set := range sets {
		as := append([]int(nil), set...)
		sort.Ints(as)
		cells := 1.0
		sizes := make([]int, len(as))
		for k, a := range as {
			if a < 0 || a >= len(attrs) {
				return nil, errorf("marginal %d: attribute position %d is outside the domain of %d attributes", s+1, a, len(attrs))
			}
			if k > 0 && as[k-1] == a {
				return nil, errorf("marginal %d names attribute %q twice", s+1, attrs[a].Name)
			}
			sizes[k] = attrs[a].Size
			cells *= float64(attrs[a].Size)
		}
		bytes += 8 * cells
		tables[s] = Table{Attrs: as, Sizes: sizes}
	}
	if err := checkFits(bytes, fmt.Sprintf("%d marginal tables", len(sets)), opt); err != nil {
		return nil, err
	}
	for s := range tables {
		cells := 1
		for _, d := range tables[s].Sizes {
			cells *= d // fits: the float total above passed the memory check
		}
		tables[s].Counts = make([]float64, cells)
	}
	return tables, nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n += int64(k)
	return k, err
}

// scan reads the header and every record, validating each attribute code,
// and calls visit with the codes of each record in domain order (the slice
// is reused between calls).
func scan(r io.Reader, attrs []domain.Attribute, opt *Options, visit func(codes []int)) (Stats, error) {
	if opt == nil {
		opt = &Options{}
	}
	every := opt.ProgressEvery
	if every <= 0 {
		every = 1_000_000
	}
	start := time.Now()
	last := start
	cr := &countingReader{r: r}
	br := bufio.NewReaderSize(cr, 64<<10)
	magic, _ := br.Peek(4)
	var in io.Reader = br
	switch {
	case string(magic) == "PAR1":
		ra, size, err := randomAccess(r, opt)
		if err != nil {
			return Stats{}, err
		}
		return scanParquet(ra, size, attrs, opt, visit)
	case len(magic) >= 2 && magic[0] == 0x1f && magic[1] == 0x8b:
		gz, err := gzip.NewReader(br)
		if err != nil {
			return Stats{}, gzipError(err)
		}
		defer gz.Close()
		in = gzipReader{gz}
	}
	rd := csv.NewReader(in)
	rd.ReuseRecord = true
	rd.TrimLeadingSpace = true
	col, width, err := csvColumns(rd, attrs)
	if err != nil {
		return Stats{}, err
	}
	rd.FieldsPerRecord = width
	codes := make([]int, len(attrs))
	var st Stats
	for {
		rec, err := rd.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return st, csvError(err)
		}
		for i, c := range col {
			if cb := attrs[i].Codebook; cb != nil {
				v, err := cb.Code(rec[c])
				if err != nil {
					line, _ := rd.FieldPos(c)
					return st, errorf("record %d (line %d), column %q: value %s %v", st.Records+1, line, attrs[i].Name, quoteClip(rec[c]), err)
				}
				codes[i] = v
				continue
			}
			v, ok := parseCode(rec[c])
			if !ok || v >= attrs[i].Size {
				line, _ := rd.FieldPos(c)
				return st, errorf("record %d (line %d), column %q: value %s is not an integer code in [0, %d)",
					st.Records+1, line, attrs[i].Name, quoteClip(rec[c]), attrs[i].Size)
			}
			codes[i] = v
		}
		visit(codes)
		st.Records++
		// Every ProgressEvery records, and at least every progressGap once
		// a read is slow (codebook lookups, a slow disk): the first event
		// comes within a second.
		if opt.Progress.Enabled() && (st.Records%every == 0 || st.Records%64 == 0 && time.Since(last) >= progressGap) {
			last = time.Now()
			opt.Progress(readEvent(st.Records, cr.n, opt.Total, start, false))
		}
	}
	st.Bytes = cr.n
	if st.Records == 0 {
		return st, errorf("the CSV file has a header but no records")
	}
	opt.Progress.Report(readEvent(st.Records, cr.n, opt.Total, start, true))
	return st, nil
}

// csvColumns reads the CSV header and maps each attribute to its column
// (col[i] is the header column of attribute i), refusing an empty file, a
// column named twice and a missing attribute. It also returns the header's
// width, which every record must match. Kept apart from scan so that scan
// is the per-record loop alone.
func csvColumns(rd *csv.Reader, attrs []domain.Attribute) (col []int, width int, err error) {
	header, err := rd.Read()
	if errors.Is(err, io.EOF) {
		return nil, 0, errorf("the CSV file is empty: it needs a header naming the attributes (%s)", names(attrs))
	}
	if err != nil {
		return nil, 0, csvError(err)
	}
	header = append([]string(nil), header...) // ReuseRecord: keep our copy
	col = make([]int, len(attrs))
	for i := range col {
		col[i] = -1
	}
	pos := make(map[string]int, len(attrs))
	for i, a := range attrs {
		pos[a.Name] = i
	}
	for c, h := range header {
		if c == 0 {
			h = strings.TrimPrefix(h, "\ufeff") // a UTF-8 byte-order mark
		}
		h = strings.TrimSpace(h)
		header[c] = h
		if i, ok := pos[h]; ok {
			if col[i] >= 0 {
				return nil, 0, errorf("the CSV header names column %s twice (columns %d and %d)", quoteClip(h), col[i]+1, c+1)
			}
			col[i] = c
		}
	}
	var missing []string
	for i, c := range col {
		if c < 0 {
			missing = append(missing, fmt.Sprintf("%q", attrs[i].Name))
		}
	}
	if len(missing) > 0 {
		return nil, 0, errorf("the CSV header lacks the attribute(s) %s (header: %s)", strings.Join(missing, ", "), quoteClip(strings.Join(header, ",")))
	}
	return col, len(header), nil
}

// gzipReader turns the decompressor's errors for a corrupt stream into
// bad-input errors; other errors (a failed read, a cancellation) pass as they
// are.
type gzipReader struct{ r io.Reader }

func (g gzipReader) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	if err != nil && err != io.EOF {
		err = gzipError(err)
	}
	return n, err
}

// gzipError marks a corrupt or truncated gzip stream as bad input.
func gzipError(err error) error {
	var ce flate.CorruptInputError
	if errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &ce) {
		return errorf("the gzip-compressed input is corrupt or truncated: %v", err)
	}
	return err
}

// progressGap is the longest a read goes without a progress event (checked
// every 64 records).
const progressGap = 500 * time.Millisecond

// readEvent is the progress event after records rows and bytes of total
// input bytes (0: unknown).
func readEvent(records, bytes, total int64, start time.Time, done bool) progress.Event {
	e := progress.Event{Stage: "records", Count: records, Unit: "records", Objective: math.NaN(), Bound: math.NaN(),
		Gap: math.NaN(), Seconds: time.Since(start).Seconds(), Done: done}
	if total > 0 {
		// The CSV reader reads ahead of the row it returns: cap at 1.
		e.Fraction = math.Min(1, float64(bytes)/float64(total))
	}
	return e
}

// csvError converts a parse error of encoding/csv (wrong number of fields,
// a bare quote, …) into a bad-input error; read failures stay as they are.
func csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		if errors.Is(pe.Err, csv.ErrFieldCount) {
			return errorf("line %d: the row has a different number of fields than the header", pe.Line)
		}
		return errorf("line %d, column %d: %v", pe.Line, pe.Column, pe.Err)
	}
	return fmt.Errorf("records: reading the CSV: %w", err)
}

// parseCode parses a non-negative decimal integer, allowing surrounding
// spaces; it rejects signs, fractions, exponents and values above 2^31.
func parseCode(s string) (int, bool) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 10 {
		return 0, false
	}
	v := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, v <= 1<<31
}

// names lists the attribute names for messages.
func names(attrs []domain.Attribute) string {
	s := make([]string, len(attrs))
	for i, a := range attrs {
		s[i] = a.Name
	}
	return strings.Join(s, ",")
}

// maxEcho is the most bytes of a file's content an error message repeats.
const maxEcho = 60

// quoteClip quotes text read from a file for an error message: Go-quoted
// with non-printable and non-ASCII bytes escaped (a binary file's NUL and
// 0xFF bytes never reach the terminal raw) and at most maxEcho bytes of it,
// saying how long it was when cut.
func quoteClip(s string) string {
	if len(s) <= maxEcho {
		return strconv.QuoteToASCII(s)
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.QuoteToASCII(s[:maxEcho]), len(s))
}
