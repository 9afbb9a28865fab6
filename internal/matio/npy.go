package matio

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"codeberg.org/sbinet/npyio/npy"
)

// npyMagic starts every .npy file.
const npyMagic = "\x93NUMPY"

// maxHeaderLen bounds the npy header dictionary; numpy's own default limit
// (np.load's max_header_size) is 10000 bytes.
const maxHeaderLen = 10000

// maxElems bounds the element count a header may declare (2⁵⁶, far beyond
// any real file), so that byte counts cannot overflow int64.
const maxElems = 1 << 56

// npyHeader is the validated content of an npy header dictionary.
type npyHeader struct {
	dt      dtype
	fortran bool
	shape   []int
}

// dtype is a supported element type: kind 'f' (float), 'i' (signed int) or
// 'u' (unsigned int), size in bytes, and byte order.
type dtype struct {
	kind  byte
	size  int
	order binary.ByteOrder
	descr string // as written in the file, e.g. "<f8"
}

// readNPY reads an npy stream. The header is parsed and validated here (it is
// a Python literal, and npyio's own header parser can panic or silently
// misread malformed ones); the element decoding is then delegated to npyio on
// a canonical header, after checking that exactly the right number of data
// bytes is present (npyio treats a short read as zeros).
func readNPY(r io.Reader) (*array, error) {
	br := bufio.NewReader(r)
	var pre [8]byte
	n, err := io.ReadFull(br, pre[:])
	switch {
	case n == 0 && (err == io.EOF || err == io.ErrUnexpectedEOF):
		return nil, fmt.Errorf("npy: %w file", ErrEmpty)
	case err == io.ErrUnexpectedEOF:
		if string(pre[:n]) == npyMagic[:min(n, len(npyMagic))] {
			return nil, fmt.Errorf("npy: %w: file ends inside the %d-byte preamble after %d bytes", ErrTruncated, len(pre), n)
		}
		return nil, fmt.Errorf("npy: %w: not an npy file (bad magic %q)", ErrFormat, pre[:n])
	case err != nil:
		return nil, fmt.Errorf("npy: %w", err)
	}
	if string(pre[:6]) != npyMagic {
		return nil, fmt.Errorf("npy: %w: not an npy file (bad magic %q)", ErrFormat, pre[:6])
	}
	major, minor := pre[6], pre[7]
	var hlen int
	switch major {
	case 1:
		var b [2]byte
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return nil, fmt.Errorf("npy: %w: file ends inside the header length", ErrTruncated)
		}
		hlen = int(binary.LittleEndian.Uint16(b[:]))
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return nil, fmt.Errorf("npy: %w: file ends inside the header length", ErrTruncated)
		}
		hlen64 := binary.LittleEndian.Uint32(b[:])
		if hlen64 > maxHeaderLen {
			return nil, fmt.Errorf("npy: %w: header length %d exceeds the %d-byte limit", ErrFormat, hlen64, maxHeaderLen)
		}
		hlen = int(hlen64)
	default:
		return nil, fmt.Errorf("npy: %w: unsupported format version %d.%d (want 1.x, 2.x or 3.x)", ErrFormat, major, minor)
	}
	if hlen > maxHeaderLen {
		return nil, fmt.Errorf("npy: %w: header length %d exceeds the %d-byte limit", ErrFormat, hlen, maxHeaderLen)
	}
	hbuf := make([]byte, hlen)
	if _, err := io.ReadFull(br, hbuf); err != nil {
		return nil, fmt.Errorf("npy: %w: file ends inside the %d-byte header", ErrTruncated, hlen)
	}
	h, err := parseNPYHeader(hbuf)
	if err != nil {
		return nil, err
	}

	nelem := 1
	for _, d := range h.shape {
		if d != 0 && nelem > maxElems/d { // keeps nelem·size far from overflow
			return nil, fmt.Errorf("npy: %w: shape %s is too large", ErrShape, shapeString(h.shape))
		}
		nelem *= d
	}
	if nelem == 0 {
		return nil, fmt.Errorf("npy: %w array: shape %s has no elements", ErrEmpty, shapeString(h.shape))
	}
	need := int64(nelem) * int64(h.dt.size)
	// Read at most one byte more than needed, growing the buffer only as data
	// actually arrives, so a header claiming a huge shape costs nothing.
	data, err := io.ReadAll(io.LimitReader(br, need+1))
	if err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	if int64(len(data)) < need {
		return nil, fmt.Errorf("npy: %w: shape %s of %s needs %d data bytes, file has %d",
			ErrTruncated, shapeString(h.shape), h.dt.descr, need, len(data))
	}
	if int64(len(data)) > need {
		return nil, fmt.Errorf("npy: %w: extra bytes after the %d data bytes of shape %s of %s",
			ErrShape, need, shapeString(h.shape), h.dt.descr)
	}
	flat, err := decodeNPYData(h.dt, nelem, data)
	if err != nil {
		return nil, err
	}
	a := &array{shape: h.shape, data: flat}
	if len(h.shape) == 2 && h.fortran {
		// Column-major on disk: transpose into row-major.
		r, c := h.shape[0], h.shape[1]
		rm := make([]float64, len(flat))
		for j := 0; j < c; j++ {
			for i := 0; i < r; i++ {
				rm[i*c+j] = flat[j*r+i]
			}
		}
		a.data = rm
	}
	if err := checkFinite(a); err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	return a, nil
}

// decodeNPYData decodes nelem elements of type dt from data (whose length
// has been checked) using npyio, and converts them to float64.
func decodeNPYData(dt dtype, nelem int, data []byte) (out []float64, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("npy: %w: decoder failed on %s data: %v", ErrFormat, dt.descr, p)
		}
	}()
	// A canonical one-dimensional header over the same bytes: npyio then only
	// has to decode elements.
	hdr := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }", dt.descr, nelem)
	var buf bytes.Buffer
	writePreamble(&buf, hdr)
	buf.Write(data)
	rd, err := npy.NewReader(&buf)
	if err != nil {
		return nil, fmt.Errorf("npy: %w: %v", ErrFormat, err)
	}
	out = make([]float64, nelem)
	var rerr error
	switch {
	case dt.kind == 'f' && dt.size == 8:
		rerr = rd.Read(&out)
	case dt.kind == 'f' && dt.size == 4:
		rerr = readConv[float32](rd, out)
	case dt.kind == 'i' && dt.size == 1:
		rerr = readConv[int8](rd, out)
	case dt.kind == 'i' && dt.size == 2:
		rerr = readConv[int16](rd, out)
	case dt.kind == 'i' && dt.size == 4:
		rerr = readConv[int32](rd, out)
	case dt.kind == 'i' && dt.size == 8:
		rerr = readConv[int64](rd, out)
	case dt.kind == 'u' && dt.size == 1:
		rerr = readConv[uint8](rd, out)
	case dt.kind == 'u' && dt.size == 2:
		rerr = readConv[uint16](rd, out)
	case dt.kind == 'u' && dt.size == 4:
		rerr = readConv[uint32](rd, out)
	case dt.kind == 'u' && dt.size == 8:
		rerr = readConv[uint64](rd, out)
	default:
		return nil, fmt.Errorf("npy: %w %q", ErrDType, dt.descr)
	}
	if rerr != nil && !errors.Is(rerr, io.EOF) {
		return nil, fmt.Errorf("npy: decoding %s data: %w", dt.descr, rerr)
	}
	return out, nil
}

type number interface {
	~float32 | ~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// readConv decodes len(out) elements of type T with rd and widens them.
func readConv[T number](rd *npy.Reader, out []float64) error {
	tmp := make([]T, len(out))
	if err := rd.Read(&tmp); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	for i, x := range tmp {
		out[i] = float64(x)
	}
	return nil
}

// parseNPYHeader parses and validates the header dictionary.
func parseNPYHeader(b []byte) (*npyHeader, error) {
	p := &litParser{s: string(b)}
	d, err := p.dict()
	if err != nil {
		return nil, fmt.Errorf("npy: %w: header %q: %v", ErrFormat, truncate(string(b), 120), err)
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if _, ok := d[k]; !ok {
			return nil, fmt.Errorf("npy: %w: header has no %q key", ErrFormat, k)
		}
	}
	if len(d) != 3 {
		for k := range d {
			if k != "descr" && k != "fortran_order" && k != "shape" {
				return nil, fmt.Errorf("npy: %w: header has unexpected key %q", ErrFormat, k)
			}
		}
	}
	h := &npyHeader{}
	switch v := d["descr"].(type) {
	case string:
		dt, err := parseDType(v)
		if err != nil {
			return nil, err
		}
		h.dt = dt
	case structured:
		return nil, fmt.Errorf("npy: %w: structured (record) dtypes are not supported", ErrDType)
	default:
		return nil, fmt.Errorf("npy: %w: 'descr' must be a string", ErrFormat)
	}
	fo, ok := d["fortran_order"].(bool)
	if !ok {
		return nil, fmt.Errorf("npy: %w: 'fortran_order' must be True or False", ErrFormat)
	}
	h.fortran = fo
	sh, ok := d["shape"].([]int)
	if !ok {
		return nil, fmt.Errorf("npy: %w: 'shape' must be a tuple of non-negative integers", ErrFormat)
	}
	if len(sh) == 0 || len(sh) > 2 {
		return nil, fmt.Errorf("npy: %w: %d-D array (shape %s); only 1-D and 2-D arrays are supported",
			ErrDims, len(sh), shapeString(sh))
	}
	h.shape = sh
	return h, nil
}

// parseDType accepts float32/64 and (u)int8..64 in an explicit byte order.
func parseDType(s string) (dtype, error) {
	bad := func(why string) (dtype, error) {
		return dtype{}, fmt.Errorf("npy: %w %q: %s (want float64, float32 or an integer type)", ErrDType, s, why)
	}
	if len(s) < 2 {
		return bad("not a dtype")
	}
	var order binary.ByteOrder
	rest := s
	switch s[0] {
	case '<':
		order, rest = binary.LittleEndian, s[1:]
	case '>':
		order, rest = binary.BigEndian, s[1:]
	case '|', '=':
		rest = s[1:]
	}
	if len(rest) < 2 {
		return bad("not a dtype")
	}
	kind := rest[0]
	size, err := strconv.Atoi(rest[1:])
	if err != nil || strings.ContainsAny(rest[1:], "+-") {
		return bad("not a dtype")
	}
	switch kind {
	case 'f':
		if size != 4 && size != 8 {
			return bad(fmt.Sprintf("%d-byte floats are not supported", size))
		}
	case 'i', 'u':
		if size != 1 && size != 2 && size != 4 && size != 8 {
			return bad(fmt.Sprintf("%d-byte integers do not exist", size))
		}
	default:
		return bad(fmt.Sprintf("element kind %q is not a real number type", kind))
	}
	if size > 1 && order == nil {
		return bad("multi-byte type without an explicit byte order ('<' or '>')")
	}
	if order == nil {
		order = binary.LittleEndian
	}
	// Canonical spelling for npyio.
	canon := string(kind) + strconv.Itoa(size)
	switch {
	case size == 1:
		canon = "|" + canon
	case order == binary.BigEndian:
		canon = ">" + canon
	default:
		canon = "<" + canon
	}
	return dtype{kind: kind, size: size, order: order, descr: canon}, nil
}

// structured marks a list-valued descr (a record dtype).
type structured struct{}

// litParser parses the subset of Python literals that npy headers use:
// a dict with string keys whose values are strings, booleans or tuples of
// non-negative integers. A list value is recognised (and skipped) only to
// report structured dtypes clearly.
type litParser struct {
	s string
	i int
}

func (p *litParser) ws() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n' || p.s[p.i] == '\r') {
		p.i++
	}
}

func (p *litParser) peek() byte {
	p.ws()
	if p.i >= len(p.s) {
		return 0
	}
	return p.s[p.i]
}

func (p *litParser) expect(c byte) error {
	if p.peek() != c {
		return p.errf("expected %q", c)
	}
	p.i++
	return nil
}

func (p *litParser) errf(format string, a ...any) error {
	return fmt.Errorf("at offset %d: %s", p.i, fmt.Sprintf(format, a...))
}

func (p *litParser) dict() (map[string]any, error) {
	if err := p.expect('{'); err != nil {
		return nil, err
	}
	d := map[string]any{}
	for {
		if p.peek() == '}' {
			p.i++
			break
		}
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		if _, dup := d[k]; dup {
			return nil, p.errf("duplicate key %q", k)
		}
		if err := p.expect(':'); err != nil {
			return nil, err
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		d[k] = v
		switch p.peek() {
		case ',':
			p.i++
		case '}':
		default:
			return nil, p.errf("expected ',' or '}'")
		}
	}
	if p.peek() != 0 {
		return nil, p.errf("unexpected text after the dictionary")
	}
	return d, nil
}

func (p *litParser) value() (any, error) {
	switch c := p.peek(); {
	case c == '\'' || c == '"':
		return p.str()
	case c == '(':
		return p.tuple()
	case c == '[':
		return structured{}, p.skipList() // never decoded; parseNPYHeader reports it
	case strings.HasPrefix(p.s[p.i:], "True"):
		p.i += 4
		return true, nil
	case strings.HasPrefix(p.s[p.i:], "False"):
		p.i += 5
		return false, nil
	}
	return nil, p.errf("unsupported value")
}

// skipList skips a bracketed list literal (nested brackets and quoted
// strings included).
func (p *litParser) skipList() error {
	depth := 0
	for p.i < len(p.s) {
		switch c := p.s[p.i]; c {
		case '[', '(':
			depth++
		case ']', ')':
			depth--
			if depth == 0 {
				p.i++
				return nil
			}
		case '\'', '"':
			if _, err := p.str(); err != nil {
				return err
			}
			continue
		}
		p.i++
	}
	return p.errf("unterminated list")
}

func (p *litParser) str() (string, error) {
	q := p.peek()
	if q != '\'' && q != '"' {
		return "", p.errf("expected a quoted string")
	}
	j := strings.IndexByte(p.s[p.i+1:], q)
	if j < 0 {
		return "", p.errf("unterminated string")
	}
	s := p.s[p.i+1 : p.i+1+j]
	if strings.ContainsAny(s, "\\\n") {
		return "", p.errf("escape sequences are not supported in strings")
	}
	p.i += j + 2
	return s, nil
}

// tuple parses "(a, b, ...)" of non-negative integers; "(a)" is a plain
// integer in Python, not a tuple, and is rejected.
func (p *litParser) tuple() ([]int, error) {
	if err := p.expect('('); err != nil {
		return nil, err
	}
	out := []int{}
	trailingComma := false
	for {
		if p.peek() == ')' {
			p.i++
			break
		}
		start := p.i
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
		}
		if p.i == start {
			return nil, p.errf("expected a non-negative integer")
		}
		v, err := strconv.ParseInt(p.s[start:p.i], 10, 64)
		if err != nil || v > math.MaxInt32*int64(math.MaxInt32) {
			return nil, p.errf("dimension %q out of range", p.s[start:p.i])
		}
		if p.i < len(p.s) && p.s[p.i] == 'L' { // Python 2 long literal
			p.i++
		}
		out = append(out, int(v))
		trailingComma = false
		switch p.peek() {
		case ',':
			p.i++
			trailingComma = true
		case ')':
		default:
			return nil, p.errf("expected ',' or ')'")
		}
	}
	if len(out) == 1 && !trailingComma {
		return nil, p.errf("'(%d)' is an integer, not a tuple; write '(%d,)'", out[0], out[0])
	}
	return out, nil
}

func shapeString(sh []int) string {
	switch len(sh) {
	case 0:
		return "()"
	case 1:
		return fmt.Sprintf("(%d,)", sh[0])
	}
	parts := make([]string, len(sh))
	for i, d := range sh {
		parts[i] = strconv.Itoa(d)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// writePreamble writes the magic, version 1.0, the header length and the
// header dict padded with spaces and a final newline so that the data starts
// at a multiple of 64 bytes, as the npy format specification asks.
func writePreamble(w io.Writer, dict string) error {
	const fixed = len(npyMagic) + 2 + 2
	total := fixed + len(dict) + 1
	pad := (64 - total%64) % 64
	hdr := dict + strings.Repeat(" ", pad) + "\n"
	var b [fixed]byte
	copy(b[:], npyMagic)
	b[6], b[7] = 1, 0
	binary.LittleEndian.PutUint16(b[8:], uint16(len(hdr)))
	if _, err := w.Write(b[:]); err != nil {
		return err
	}
	_, err := io.WriteString(w, hdr)
	return err
}

// writeNPY writes a as little-endian float64 in C order.
func writeNPY(w io.Writer, shape []int, chunks int, next func(int) []float64) error {
	dict := fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': %s, }", shapeString(shape))
	bw := bufio.NewWriter(w)
	if err := writePreamble(bw, dict); err != nil {
		return err
	}
	var b [8]byte
	for i := 0; i < chunks; i++ {
		for _, x := range next(i) {
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(x))
			if _, err := bw.Write(b[:]); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}
