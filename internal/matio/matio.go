// Package matio reads and writes the dense matrices and vectors dpsolve works
// with: workloads W, Gram matrices V, strategies A and data histograms x.
//
// Two on-disk formats are supported, chosen by file extension:
//
//   - NumPy .npy (format versions 1, 2 and 3). Reading accepts float64,
//     float32 and every signed/unsigned integer dtype from 8 to 64 bits, in
//     either byte order, in C (row-major) or Fortran (column-major) order.
//     Integers are converted to float64 (exact up to 2⁵³ in magnitude).
//     Writing produces little-endian float64 ('<f8') in C order with a header
//     padded to a multiple of 64 bytes, as the format specification asks.
//   - Text (.csv, .txt): one matrix row per line, numbers separated by commas
//     or by white space; '#' starts a comment that runs to the end of the line;
//     blank lines are ignored; every row must have the same number of entries.
//     Writing uses strconv.FormatFloat(x, 'g', -1, 64), the shortest text that
//     parses back to the same float64, so text files round-trip exactly.
//
// Every value read must be finite: a NaN or ±Inf is reported with its row and
// column. Malformed input of any kind (truncated data, ragged rows, an
// unsupported dtype, wrong dimensionality, an empty array) yields an error
// naming the file and the problem, never a panic; the errors wrap the
// sentinel values below so callers can test for a category with errors.Is.
//
// matio does no privacy accounting of its own: it moves numbers between disk
// and memory exactly, so whatever guarantee the producing mechanism gave
// holds for what is read back.
package matio

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/inputerr"
)

// Format is an on-disk matrix format.
type Format int

const (
	// NPY is the NumPy .npy binary format.
	NPY Format = iota + 1
	// CSV is delimited text: comma- or whitespace-separated numbers, one row
	// per line (extensions .csv and .txt).
	CSV
)

// String returns the format's name.
func (f Format) String() string {
	switch f {
	case NPY:
		return "npy"
	case CSV:
		return "csv"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// ErrInput is wrapped by every error this package returns for a file the
// caller can fix (a missing or unreadable file, a malformed one): it is the
// one dpsolve-wide sentinel (internal/inputerr). Every error category below
// satisfies errors.Is(err, ErrInput) too.
var ErrInput = inputerr.ErrInput

// category is an error category that is also a bad-input error: errors.Is
// matches both the category itself and ErrInput.
type category struct{ msg string }

func (c *category) Error() string        { return c.msg }
func (c *category) Is(target error) bool { return target == inputerr.ErrInput }

// ioInputError is an operating-system error on an input file (missing,
// unreadable): bad input the caller can fix. It reads as before
// ("matio: open x.npy: no such file or directory") and matches both
// ErrInput and the OS error (errors.Is(err, fs.ErrNotExist)).
type ioInputError struct {
	prefix string
	err    error
}

func (e *ioInputError) Error() string   { return e.prefix + e.err.Error() }
func (e *ioInputError) Unwrap() []error { return []error{inputerr.ErrInput, e.err} }

// Error categories. Errors returned for bad input wrap exactly one of them
// (and so ErrInput).
var (
	// ErrFormat: unknown extension or input that is not well-formed npy/CSV.
	ErrFormat error = &category{"malformed or unsupported file"}
	// ErrTruncated: the data ends before the header's shape says it should.
	ErrTruncated error = &category{"truncated data"}
	// ErrEmpty: the file or array holds no numbers.
	ErrEmpty error = &category{"empty"}
	// ErrDType: the npy element type is not a real float or integer type.
	ErrDType error = &category{"unsupported dtype"}
	// ErrShape: ragged text rows or a shape inconsistent with the data.
	ErrShape error = &category{"shape mismatch"}
	// ErrDims: the array has the wrong number of dimensions for the request
	// (a 1-D array for ReadMatrix, a genuine matrix for ReadVector, ...).
	ErrDims error = &category{"wrong dimensionality"}
	// ErrNonFinite: a NaN or infinite entry.
	ErrNonFinite error = &category{"non-finite value"}
)

// FormatOf returns the format implied by path's extension: .npy → NPY,
// .csv/.txt → CSV (case-insensitive). Any other extension is an error.
func FormatOf(path string) (Format, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".npy":
		return NPY, nil
	case ".csv", ".txt":
		return CSV, nil
	}
	return 0, fmt.Errorf("matio: %s: %w: unknown extension %q (want .npy, .csv or .txt)",
		path, ErrFormat, filepath.Ext(path))
}

// ReadMatrix reads a 2-D array from path (format by extension). A 1-D npy
// array is rejected with ErrDims: use ReadVector for vectors.
func ReadMatrix(path string) (*mat.Dense, error) {
	return readFile(path, ReadMatrixFrom)
}

// ReadVector reads a vector from path (format by extension): a 1-D npy array,
// an n×1 or 1×n npy array, or a text file with one column or one row.
func ReadVector(path string) ([]float64, error) {
	return readFile(path, ReadVectorFrom)
}

// readFile opens path, picks the format from its extension and decodes it
// with read, naming the file in any error.
func readFile[T any](path string, read func(io.Reader, Format) (T, error)) (T, error) {
	var zero T
	f, err := FormatOf(path)
	if err != nil {
		return zero, err
	}
	if err := CheckRegular(path); err != nil {
		return zero, err
	}
	fh, err := os.Open(path)
	if err != nil { // a missing or unreadable input file is the caller's to fix
		return zero, &ioInputError{"matio: ", err}
	}
	defer fh.Close()
	v, err := read(fh, f)
	if err != nil {
		if !errors.Is(err, ErrInput) { // an I/O failure while reading the file
			err = &ioInputError{"", err}
		}
		return zero, fmt.Errorf("matio: %s: %w", path, err)
	}
	return v, nil
}

// CheckRegular returns an ErrFormat error when path exists and is not a
// regular file (symbolic links followed): opening a named pipe would block
// until something writes to it, and a directory or device is no input. A
// missing file is left to the open that follows.
func CheckRegular(path string) error {
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().IsRegular() {
		return nil
	}
	kind := "not a regular file"
	switch {
	case fi.IsDir():
		kind = "a directory"
	case fi.Mode()&os.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO)"
	}
	return fmt.Errorf("matio: %s: %w: %s, not a regular file", path, ErrFormat, kind)
}

// ReadMatrixFrom reads a 2-D array in format f from r. Errors do not name a
// file (ReadMatrix adds the path).
func ReadMatrixFrom(r io.Reader, f Format) (*mat.Dense, error) {
	a, err := readArray(r, f)
	if err != nil {
		return nil, err
	}
	if len(a.shape) != 2 {
		return nil, fmt.Errorf("%w: want a 2-D array, got %d-D shape %v", ErrDims, len(a.shape), a.shape)
	}
	return mat.NewDense(a.shape[0], a.shape[1], a.data), nil
}

// ReadVectorFrom reads a vector in format f from r: a 1-D array, or a 2-D
// array with one row or one column.
func ReadVectorFrom(r io.Reader, f Format) ([]float64, error) {
	a, err := readArray(r, f)
	if err != nil {
		return nil, err
	}
	switch {
	case len(a.shape) == 1:
	case len(a.shape) == 2 && (a.shape[0] == 1 || a.shape[1] == 1):
	default:
		return nil, fmt.Errorf("%w: want a vector (1-D, n×1 or 1×n), got shape %v", ErrDims, a.shape)
	}
	return a.data, nil
}

// array is a decoded, validated array: row-major data and a 1-D or 2-D shape
// with every extent positive.
type array struct {
	shape []int
	data  []float64
}

func readArray(r io.Reader, f Format) (*array, error) {
	switch f {
	case NPY:
		return readNPY(r)
	case CSV:
		return readCSV(r)
	}
	return nil, fmt.Errorf("%w: unknown format %v", ErrFormat, f)
}

// WriteMatrix writes m to path in the format implied by the extension.
// Non-finite entries are rejected (they could not be read back).
func WriteMatrix(path string, m mat.Matrix) error {
	f, err := FormatOf(path)
	if err != nil {
		return err
	}
	return writeFile(path, func(w io.Writer) error { return WriteMatrixTo(w, m, f) })
}

// WriteVector writes v to path in the format implied by the extension: a 1-D
// npy array, or a one-column text file.
func WriteVector(path string, v []float64) error {
	f, err := FormatOf(path)
	if err != nil {
		return err
	}
	return writeFile(path, func(w io.Writer) error { return WriteVectorTo(w, v, f) })
}

// WriteMatrixTo writes m to w in format f. The rows are streamed, one
// copied at a time, so writing an n×n matrix needs O(n) memory beyond it;
// a NaN or Inf is reported before anything is written.
func WriteMatrixTo(w io.Writer, m mat.Matrix, f Format) error {
	if m == nil {
		return fmt.Errorf("%w: nil matrix", ErrEmpty)
	}
	r, c := m.Dims()
	if r == 0 || c == 0 {
		return fmt.Errorf("%w: %d×%d matrix", ErrEmpty, r, c)
	}
	row := make([]float64, c)
	next := func(i int) []float64 {
		for j := range row {
			row[j] = m.At(i, j)
		}
		return row
	}
	for i := 0; i < r; i++ {
		for j, x := range next(i) {
			if x-x != 0 { // true exactly for NaN and ±Inf
				return fmt.Errorf("%w: %v at row %d, column %d (0-based)", ErrNonFinite, x, i, j)
			}
		}
	}
	return writeRows(w, []int{r, c}, r, next, f)
}

// WriteVectorTo writes v to w in format f (1-D npy, or one value per line).
func WriteVectorTo(w io.Writer, v []float64, f Format) error {
	if len(v) == 0 {
		return fmt.Errorf("%w: zero-length vector", ErrEmpty)
	}
	return writeArray(w, &array{shape: []int{len(v)}, data: v}, f)
}

func writeArray(w io.Writer, a *array, f Format) error {
	if err := checkFinite(a); err != nil {
		return err
	}
	return writeRows(w, a.shape, 1, func(int) []float64 { return a.data }, f)
}

// writeRows writes an array of the given shape whose data, in row-major
// order, is the concatenation of next(0), …, next(chunks−1).
func writeRows(w io.Writer, shape []int, chunks int, next func(int) []float64, f Format) error {
	switch f {
	case NPY:
		return writeNPY(w, shape, chunks, next)
	case CSV:
		return writeCSV(w, shape, chunks, next)
	}
	return fmt.Errorf("%w: unknown format %v", ErrFormat, f)
}

// writeFile writes through a temporary file in the same directory and renames
// it into place, so a failed write never leaves a partial file at path.
func writeFile(path string, write func(io.Writer) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("matio: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = write(tmp); err != nil {
		return fmt.Errorf("matio: write %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("matio: write %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("matio: %w", err)
	}
	return nil
}

// checkFinite reports the first NaN or Inf with its (0-based) position.
func checkFinite(a *array) error {
	cols := 1
	if len(a.shape) == 2 {
		cols = a.shape[1]
	}
	for k, x := range a.data {
		if x-x != 0 { // true exactly for NaN and ±Inf
			if len(a.shape) == 2 {
				return fmt.Errorf("%w: %v at row %d, column %d (0-based)", ErrNonFinite, x, k/cols, k%cols)
			}
			return fmt.Errorf("%w: %v at index %d (0-based)", ErrNonFinite, x, k)
		}
	}
	return nil
}
