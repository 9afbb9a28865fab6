// Package records turns a file of records — CSV (optionally
// gzip-compressed) or Parquet, one row per person, one column per
// attribute, every value an integer code or a value the attribute's codebook
// maps to one — into the data a
// private release measures: the full histogram over the attributes' domain
// when it fits in memory, or the marginal tables a plan needs read directly
// from the records (so a domain of 6.4·10¹⁷ cells, far beyond any vector,
// still works).
//
// # Input format
//
// The domain is a list of domain.Attribute: each one's name is its column in
// the header, its size the number of codes 0 … Size−1.
//
// An attribute with a Codebook (domain.Codebook: a list of values, or
// numeric bins) reads its column's values through it: a value the codebook
// does not list, a number outside its bins (unless it clamps) or not a
// number is an error naming the row, the column and the value. Without one,
// the column holds the codes.
//
// The input's first bytes choose the format: "PAR1" is a Parquet file
// (which needs random access: an *os.File, or an io.ReaderAt with
// Options.Total its size), the gzip magic a gzip-compressed CSV, anything
// else CSV. Either is read as a stream, one record at a time (Parquet one
// page at a time): memory holds the output tables, not the records.
//
// In a Parquet file each attribute is a top-level, non-repeated column of
// that name; strings, integers, floating-point numbers and booleans are
// read as their text (a float 3.0 is the code "3"), except that a binned
// attribute reads numbers directly; a null is an empty value.
//
// The first line of a CSV file is a header naming the columns. Every attribute of the
// domain must appear in it exactly once; other columns are ignored (so a
// file with extra identifiers or unused attributes is read as is). Each data
// row must have as many fields as the header, and each field of an
// attribute's column without a codebook must be a decimal integer code in
// [0, size) —
// surrounding spaces are allowed, anything else ("3.0", "-1", "12a", a value
// beyond the size) is an error naming the row, the column and the value. A
// file with no header, or a header and no records, is an error. Blank lines
// are skipped.
//
// The histogram is row-major in domain order: the first attribute varies
// slowest, so the cell of codes (c₁,…,c_k) is Σᵢ cᵢ·Πⱼ₍ⱼ₎>ᵢ dⱼ — the order in
// which a product term's query matrix kron(W₁,…,W_k) reads it.
//
// Errors for bad input wrap ErrInput.
package records

import (
	"math"
	"math/bits"

	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/model/domain"
)

// ErrInput is wrapped by every error returned for bad input (a malformed
// file, a code out of range, a domain too large for memory).
var ErrInput = inputerr.ErrInput

// errorf returns a bad-input error of this package.
func errorf(format string, a ...any) error { return inputerr.Errorf("records", format, a...) }

// checkDomain validates the attribute list: non-empty, distinct non-empty
// names, positive sizes.
func checkDomain(attrs []domain.Attribute) error {
	if len(attrs) == 0 {
		return errorf("the domain has no attributes")
	}
	seen := make(map[string]bool, len(attrs))
	for i, a := range attrs {
		if a.Name == "" {
			return errorf("attribute %d has an empty name", i+1)
		}
		if seen[a.Name] {
			return errorf("attribute %q is listed twice", a.Name)
		}
		seen[a.Name] = true
		if a.Size < 1 {
			return errorf("attribute %q has size %d; sizes must be at least 1", a.Name, a.Size)
		}
		if a.Codebook != nil && a.Codebook.Size() != a.Size {
			return errorf("attribute %q has size %d but its codebook has %d codes", a.Name, a.Size, a.Codebook.Size())
		}
	}
	return nil
}

// Cells returns the number of cells Π sizes of the domain, or an error when
// the domain is invalid or the count overflows an int.
func Cells(attrs []domain.Attribute) (int, error) {
	if err := checkDomain(attrs); err != nil {
		return 0, err
	}
	n := uint64(1)
	for _, a := range attrs {
		hi, lo := bits.Mul64(n, uint64(a.Size))
		if hi != 0 || lo > math.MaxInt {
			return 0, errorf("the domain has more than %d cells (overflow at attribute %q)", math.MaxInt, a.Name)
		}
		n = lo
	}
	return int(n), nil
}

// CellsFloat returns Π sizes as a float64 (approximate beyond 2^53), for
// reporting domains whose cell count overflows an int.
func CellsFloat(attrs []domain.Attribute) float64 {
	n := 1.0
	for _, a := range attrs {
		n *= float64(a.Size)
	}
	return n
}

// Index returns the row-major cell index of codes (one per attribute, in
// domain order). It does not validate the codes.
func Index(attrs []domain.Attribute, codes []int) int {
	idx := 0
	for i, a := range attrs {
		idx = idx*a.Size + codes[i]
	}
	return idx
}
