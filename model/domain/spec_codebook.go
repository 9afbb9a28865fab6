package domain

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/dpsolve/dpsolve/internal/inputerr"
)

// Codebook maps the values a records file holds for one attribute to the
// attribute's codes 0 … Size()−1, and back to labels for output. It is one
// of two kinds:
//
//   - a list of values (labels): code i is Values[i]; a record's value must
//     be one of them (after trimming surrounding spaces), or an alias of one,
//     or — when Other is set — any other value goes to the code of Other;
//   - numeric bins: Edges e₀ < e₁ < … < e_k give k codes, value v is in bin
//     i when eᵢ ≤ v < eᵢ₊₁; a value below e₀ or at or above e_k is an error
//     unless Clamp is set, which puts it in the first or last bin.
//
// Build one with NewValueCodebook or NewBinCodebook (ParseSpec does, from an
// attribute's "values" or "edges"); a Codebook is read-only afterwards and
// safe for concurrent use.
type Codebook struct {
	// Values are the labels of the codes, for a list of values.
	Values []string
	// Other, if non-empty, is one of Values: unlisted values map to it.
	Other string
	// Aliases maps further spellings to one of Values (for example the
	// "<=50K." of the Adult test file to "<=50K").
	Aliases map[string]string
	// Edges are the bin edges, for numeric bins.
	Edges []float64
	// Clamp puts values outside [Edges[0], Edges[last]) in the first or last bin.
	Clamp bool

	index map[string]int // value or alias → code
	other int            // code of Other, −1 when unset
}

// NewValueCodebook returns the codebook of a list of values. Values must be
// non-empty, unique, printable and without surrounding spaces; other, when
// non-empty, must be one of them; every alias must name one of them and not
// itself be a value.
func NewValueCodebook(values []string, other string, aliases map[string]string) (*Codebook, error) {
	if len(values) == 0 {
		return nil, errors.New("\"values\" is empty")
	}
	if len(values) > MaxAttributeSize {
		return nil, fmt.Errorf("\"values\" lists %d values; at most %d", len(values), MaxAttributeSize)
	}
	c := &Codebook{Values: values, Other: other, Aliases: aliases, index: make(map[string]int, len(values)+len(aliases)), other: -1}
	for i, v := range values {
		if err := checkLabel(v); err != nil {
			return nil, fmt.Errorf("value %d: %w", i+1, err)
		}
		if j, dup := c.index[v]; dup {
			return nil, fmt.Errorf("value %s is listed twice (positions %d and %d)", strconv.QuoteToASCII(clip(v)), j+1, i+1)
		}
		c.index[v] = i
	}
	if other != "" {
		i, ok := c.index[other]
		if !ok {
			return nil, fmt.Errorf("\"other\" is %s, which is not one of the values", strconv.QuoteToASCII(clip(other)))
		}
		c.other = i
	}
	keys := make([]string, 0, len(aliases))
	for a := range aliases {
		keys = append(keys, a)
	}
	sort.Strings(keys) // deterministic first error
	for _, a := range keys {
		to := aliases[a]
		if err := checkLabel(a); err != nil {
			return nil, fmt.Errorf("alias %s: %w", strconv.QuoteToASCII(clip(a)), err)
		}
		if _, isValue := c.index[a]; isValue {
			return nil, fmt.Errorf("alias %s is also a value", strconv.QuoteToASCII(clip(a)))
		}
		i, ok := c.index[to]
		if !ok {
			return nil, fmt.Errorf("alias %s names %s, which is not one of the values", strconv.QuoteToASCII(clip(a)), strconv.QuoteToASCII(clip(to)))
		}
		c.index[a] = i
	}
	return c, nil
}

// NewBinCodebook returns the codebook of numeric bins with the given edges:
// at least two, finite and strictly increasing (at most MaxAttributeSize
// bins).
func NewBinCodebook(edges []float64, clamp bool) (*Codebook, error) {
	if len(edges) < 2 {
		return nil, fmt.Errorf("\"edges\" needs at least two numbers (one bin), got %d", len(edges))
	}
	if len(edges)-1 > MaxAttributeSize {
		return nil, fmt.Errorf("\"edges\" makes %d bins; at most %d", len(edges)-1, MaxAttributeSize)
	}
	for i, e := range edges {
		if math.IsNaN(e) || math.IsInf(e, 0) {
			return nil, fmt.Errorf("edge %d is not a finite number", i+1)
		}
		if i > 0 && !(e > edges[i-1]) {
			return nil, fmt.Errorf("edges must increase strictly: edge %d (%s) follows %s", i+1, fmtNum(e), fmtNum(edges[i-1]))
		}
	}
	return &Codebook{Edges: edges, Clamp: clamp, other: -1}, nil
}

// checkLabel refuses an empty label, one with surrounding spaces (record
// fields are trimmed, so it could never match) or a control character.
func checkLabel(s string) error {
	switch {
	case s == "":
		return errors.New("a value may not be empty")
	case strings.TrimSpace(s) != s:
		return fmt.Errorf("%s has surrounding spaces (record fields are trimmed before matching)", strconv.QuoteToASCII(clip(s)))
	}
	return printableName(s, "value")
}

// Size returns the number of codes.
func (c *Codebook) Size() int {
	if c.Edges != nil {
		return len(c.Edges) - 1
	}
	return len(c.Values)
}

// Binned reports whether the codebook is numeric bins.
func (c *Codebook) Binned() bool { return c.Edges != nil }

// Code returns the code of a record's field (surrounding spaces ignored):
// its position in the values (or its alias's, or Other's), or the bin of the
// number it holds. The error says what was wrong with the value; callers add
// the row and column.
func (c *Codebook) Code(field string) (int, error) {
	s := strings.TrimSpace(field)
	if c.Edges != nil {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(v) {
			return 0, fmt.Errorf("is not a number (the attribute is binned by \"edges\")")
		}
		return c.CodeNumber(v)
	}
	if i, ok := c.index[s]; ok {
		return i, nil
	}
	if c.other >= 0 {
		return c.other, nil
	}
	if len(c.Values) <= 12 {
		q := make([]string, len(c.Values))
		for i, v := range c.Values {
			q[i] = strconv.Quote(v)
		}
		return 0, fmt.Errorf("is not one of the values %s (add it, an alias, or an \"other\" value to the spec)", strings.Join(q, ", "))
	}
	return 0, fmt.Errorf("is not one of the attribute's %d values (add it, an alias, or an \"other\" value to the spec)", len(c.Values))
}

// CodeNumber returns the bin of v for a binned codebook. Outside
// [Edges[0], Edges[last]) it is an error unless Clamp is set; NaN is always
// an error. For a list of values, v is looked up as its shortest decimal
// form ("3", "2.5").
func (c *Codebook) CodeNumber(v float64) (int, error) {
	if c.Edges == nil {
		return c.Code(fmtNum(v))
	}
	if math.IsNaN(v) {
		return 0, fmt.Errorf("is not a number")
	}
	k := len(c.Edges) - 1
	lo, hi := c.Edges[0], c.Edges[k]
	switch {
	case v < lo:
		if c.Clamp {
			return 0, nil
		}
		return 0, fmt.Errorf("is below the first edge %s (bins cover [%s, %s); \"clamp\": true puts it in the first bin)", fmtNum(lo), fmtNum(lo), fmtNum(hi))
	case v >= hi:
		if c.Clamp {
			return k - 1, nil
		}
		return 0, fmt.Errorf("is at or above the last edge %s (bins cover [%s, %s); \"clamp\": true puts it in the last bin)", fmtNum(hi), fmtNum(lo), fmtNum(hi))
	}
	// The first edge > v, minus one: eᵢ ≤ v < eᵢ₊₁.
	return sort.Search(len(c.Edges), func(i int) bool { return c.Edges[i] > v }) - 1, nil
}

// Label returns the label of code i: the value, or the bin "[lo, hi)".
func (c *Codebook) Label(i int) string { return c.RangeLabel(i, i) }

// RangeLabel names the inclusive run of codes lo … hi: for values the label
// (lo = hi) or "first..last", for bins the half-open interval they cover,
// "[e_lo, e_hi+1)".
func (c *Codebook) RangeLabel(lo, hi int) string {
	if c.Edges != nil {
		return "[" + fmtNum(c.Edges[lo]) + ", " + fmtNum(c.Edges[hi+1]) + ")"
	}
	if lo == hi {
		return c.Values[lo]
	}
	return c.Values[lo] + ".." + c.Values[hi]
}

// fmtNum is the shortest decimal form of x that reads back to it.
func fmtNum(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// attrJSON is one entry of "domain": a size, or a codebook.
type attrJSON struct {
	Name    *string           `json:"name"`
	Size    *json.Number      `json:"size"`
	Values  []string          `json:"values"`
	Other   *string           `json:"other"`
	Aliases map[string]string `json:"aliases"`
	Edges   []json.Number     `json:"edges"`
	Clamp   *bool             `json:"clamp"`
}

// parseAttribute reads one entry of "domain": {"name", "size"} for integer
// codes, or a codebook ("values" with optional "other" and "aliases", or
// "edges" with optional "clamp"), whose count gives the size ("size" may
// repeat it).
func parseAttribute(i int, raw json.RawMessage) (Attribute, error) {
	var a attrJSON
	where := fmt.Sprintf("domain entry %d", i+1)
	if err := strictDecode(raw, &a, where); err != nil {
		return Attribute{}, err
	}
	if a.Name == nil || strings.TrimSpace(*a.Name) == "" {
		return Attribute{}, inputerr.Errorf("domain", "%s: needs a non-empty \"name\"", where)
	}
	if err := printableName(*a.Name, where); err != nil {
		return Attribute{}, err
	}
	name := *a.Name
	fail := func(format string, args ...any) (Attribute, error) {
		return Attribute{}, inputerr.Errorf("domain", "attribute %q: "+format, append([]any{name}, args...)...)
	}
	hasV, hasE := a.Values != nil, a.Edges != nil
	var cb *Codebook
	var err error
	switch {
	case hasV && hasE:
		return fail("give \"values\" or \"edges\", not both")
	case hasV:
		if a.Clamp != nil {
			return fail("\"clamp\" applies to \"edges\", not to \"values\"")
		}
		other := ""
		if a.Other != nil {
			if *a.Other == "" {
				return fail("\"other\" is empty")
			}
			other = *a.Other
		}
		cb, err = NewValueCodebook(a.Values, other, a.Aliases)
	case hasE:
		if a.Other != nil || a.Aliases != nil {
			return fail("\"other\" and \"aliases\" apply to \"values\", not to \"edges\"")
		}
		edges := make([]float64, len(a.Edges))
		for j, e := range a.Edges {
			f, perr := e.Float64()
			if perr != nil || math.IsInf(f, 0) {
				return fail("edge %d (%s) is not a finite number", j+1, clip(e.String()))
			}
			edges[j] = f
		}
		cb, err = NewBinCodebook(edges, a.Clamp != nil && *a.Clamp)
	default:
		if a.Other != nil || a.Aliases != nil || a.Clamp != nil {
			return fail("\"other\", \"aliases\" and \"clamp\" need \"values\" or \"edges\"")
		}
	}
	if err != nil {
		return fail("%v", err)
	}
	if cb == nil && a.Size == nil {
		return fail("needs a \"size\" (integer codes), \"values\" (a list of labels) or \"edges\" (numeric bins)")
	}
	size := 0
	if a.Size != nil {
		size, err = intValue(*a.Size)
		if err != nil || size < 1 || size > MaxAttributeSize {
			return fail("size must be an integer in 1…%d, got %s", MaxAttributeSize, a.Size.String())
		}
	}
	if cb != nil {
		if a.Size != nil && size != cb.Size() {
			return fail("\"size\" is %d but the codebook has %d codes", size, cb.Size())
		}
		size = cb.Size()
	}
	return Attribute{Name: name, Size: size, Codebook: cb}, nil
}

// ReservedColumns are the column names answers.csv writes besides the
// attributes'; an attribute may not take one of them, so a CSV reader never
// finds two columns of one name.
var ReservedColumns = []string{"term", "query", "answer", "stddev", "table", "private"}

// LabelColumn is the answers.csv column that holds the labels of an
// attribute with a codebook: "<name> label".
func LabelColumn(name string) string { return name + " label" }

// CheckColumnNames refuses a domain whose attributes would give answers.csv
// two columns of one name: an attribute named like a reserved column, or
// like the label column of an attribute with a codebook.
func CheckColumnNames(attrs []Attribute) error {
	taken := map[string]string{}
	for _, r := range ReservedColumns {
		taken[r] = "a column dpsolve writes in answers.csv"
	}
	for _, a := range attrs {
		if a.Codebook != nil {
			taken[LabelColumn(a.Name)] = fmt.Sprintf("the label column of attribute %q", a.Name)
		}
	}
	for _, a := range attrs {
		if what, ok := taken[a.Name]; ok {
			return inputerr.Errorf("domain", "attribute %q: the name is reserved (%s; reserved: %s, and \"<attribute> label\" for an attribute with values or edges); rename the attribute and its column in the records",
				a.Name, what, strings.Join(ReservedColumns, ", "))
		}
	}
	return nil
}
