package domain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/internal/matio"
)

// maxSpecBytes caps a spec file: specs are hand-written or generated lists
// of terms; 64 MiB is far beyond any real one and keeps a bad file from
// exhausting memory.
const maxSpecBytes = 64 << 20

// LoadSpec reads a workload spec file (JSON; see ParseSpec). Matrix blocks'
// files are resolved relative to the spec file's directory; built-in block
// names are resolved by builtins (workload.Blocks).
func LoadSpec(path string, builtins Builtins) (*Kron, error) {
	if err := matio.CheckRegular(path); err != nil { // a FIFO would block the open
		return nil, inputerr.Errorf("domain", "spec: %v", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, inputerr.Errorf("domain", "spec: %v", err)
	}
	defer f.Close()
	k, err := ParseSpec(f, filepath.Dir(path), builtins)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// ParseSpec reads the JSON workload spec, the one format every
// multi-attribute command reads:
//
//	{"domain":   [{"name": "sex", "size": 2}, {"name": "age", "size": 115}, …],
//	 "workload": [{"name": "t1", "weight": 1, "product": {"sex": "identity", "age": "prefix"}},
//	              {"name": "t2", "product": {"age": {"ranges": [[0, 17], [18, 64]]}}},
//	              {"name": "m", "marginals": {"k": 2}}]}
//
// A domain entry gives "size" when the records hold integer codes
// 0 … size−1, or a codebook that maps the records' values to codes and
// gives the size (see Codebook): "values", a list of labels —
// {"name": "sex", "values": ["Female", "Male"]}, with optional "other" (one
// of the values, which unlisted values go to) and "aliases" ({"spelling":
// "value"}) — or "edges", numeric bins — {"name": "age", "edges": [17, 18,
// …, 91]}, value v in bin i when edges[i] ≤ v < edges[i+1], with optional
// "clamp": true to put values outside the edges in the first or last bin
// instead of refusing them. An attribute may not be named like a column of
// answers.csv (ReservedColumns, CheckColumnNames).
//
// Cells are flattened row-major in domain order (the first attribute varies
// slowest). A product term maps attribute names to 1-D blocks; an attribute
// it does not name is "total". A block is a built-in name (identity, total,
// identitytotal, prefix, allrange, width:k=K, wrange:m=M, …: see NewBlock;
// builtins resolves every name but the first three, and workload.Blocks
// every 1-D workload of workload.Parse), {"matrix": FILE} (a .npy or .csv
// m×size matrix, relative to baseDir) or {"ranges": [[lo, hi], …]}
// (inclusive, 0-based). A marginals term is
// {"sets": [["sex", "age"], …]}, {"k": K} (all K-way marginals) or
// {"upto": K} (all 0…K-way); k and upto list their sets in lexicographic
// order of domain positions, smaller sets first for upto. weight (default 1)
// multiplies the term's queries; name defaults to "t<position>". Unknown
// keys, bad values and the checks of NewKron are errors wrapping ErrInput
// that name the term and attribute.
func ParseSpec(r io.Reader, baseDir string, builtins Builtins) (*Kron, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxSpecBytes+1))
	if err != nil {
		return nil, inputerr.Errorf("domain", "spec: %v", err)
	}
	if len(data) > maxSpecBytes {
		return nil, inputerr.Errorf("domain", "spec is larger than %d bytes", maxSpecBytes)
	}
	var top struct {
		Domain   []json.RawMessage `json:"domain"`
		Workload []json.RawMessage `json:"workload"`
	}
	if err := strictDecode(data, &top, "the spec"); err != nil {
		return nil, err
	}
	if len(top.Domain) == 0 {
		return nil, inputerr.Errorf("domain", "spec: \"domain\" is missing or empty")
	}
	domain := make([]Attribute, len(top.Domain))
	for i, raw := range top.Domain {
		a, err := parseAttribute(i, raw)
		if err != nil {
			return nil, err
		}
		domain[i] = a
	}
	// Validate the domain (names, sizes) before building any block. Its
	// cell count may exceed an int: only the templates that measure every
	// cell need it, and they refuse such domains (Kron.Cells).
	seen := map[string]bool{}
	for _, a := range domain {
		if seen[a.Name] {
			return nil, inputerr.Errorf("domain", "attribute %q is listed twice in the domain", a.Name)
		}
		seen[a.Name] = true
	}
	if err := CheckColumnNames(domain); err != nil {
		return nil, err
	}
	if len(top.Workload) == 0 {
		return nil, inputerr.Errorf("domain", "spec: \"workload\" is missing or empty: the workload has no terms")
	}
	bp := &blockParser{domain: domain, baseDir: baseDir, builtins: builtins, cache: map[string]*Block{}}
	terms := make([]*Term, 0, len(top.Workload))
	for j, raw := range top.Workload {
		t, err := bp.term(j, raw)
		if err != nil {
			return nil, err
		}
		terms = append(terms, t)
	}
	return NewKron(domain, terms)
}

// termJSON is one entry of "workload".
type termJSON struct {
	Name      *string                    `json:"name"`
	Weight    *json.Number               `json:"weight"`
	Product   map[string]json.RawMessage `json:"product"`
	Marginals json.RawMessage            `json:"marginals"`
}

type blockParser struct {
	domain   []Attribute
	baseDir  string
	builtins Builtins
	cache    map[string]*Block // cacheKey → block, so equal blocks are shared
	entries  int
	marg     *marginalBlocks // the marginals terms' blocks, made on first use
}

// cacheKey is the parser's key of the block with the given key on
// attribute a: "attribute\x00key", or, for the identity and the total,
// "\x00size\x00key", so attributes of one size share those two (a
// marginals term's products then share their block lists' storage, see
// layoutBlocks).
func cacheKey(a Attribute, key string) string {
	if key == "identity" || key == "total" {
		return "\x00" + strconv.Itoa(a.Size) + "\x00" + key
	}
	return a.Name + "\x00" + key
}

// shared returns the parser's block of the given built-in name ("identity"
// or "total") on attribute a, made on first use.
func (bp *blockParser) shared(a Attribute, name string) (*Block, error) {
	key := cacheKey(a, name)
	if c, ok := bp.cache[key]; ok {
		return c, nil
	}
	b, err := NewBlock(name, a.Size, nil)
	if err != nil {
		return nil, inputerr.Errorf("domain", "attribute %q: %v", a.Name, err)
	}
	bp.cache[key] = b
	return b, nil
}

// marginalBlocks returns the parser's identity and total of every
// attribute, which every marginals term's products hold.
func (bp *blockParser) marginalBlocks() (*marginalBlocks, error) {
	if bp.marg != nil {
		return bp.marg, nil
	}
	n := len(bp.domain)
	mb := &marginalBlocks{sizes: make([]int, n), ident: make([]*Block, n), total: make([]*Block, n)}
	for i, a := range bp.domain {
		var err error
		if mb.ident[i], err = bp.shared(a, "identity"); err != nil {
			return nil, err
		}
		if mb.total[i], err = bp.shared(a, "total"); err != nil {
			return nil, err
		}
		mb.sizes[i] = a.Size
	}
	bp.marg = mb
	return mb, nil
}

func (bp *blockParser) term(j int, raw json.RawMessage) (*Term, error) {
	var t termJSON
	where := fmt.Sprintf("workload term %d", j+1)
	if err := strictDecode(raw, &t, where); err != nil {
		return nil, err
	}
	name := fmt.Sprintf("t%d", j+1)
	if t.Name != nil {
		if strings.TrimSpace(*t.Name) == "" {
			return nil, inputerr.Errorf("domain", "%s: \"name\" is empty", where)
		}
		if err := printableName(*t.Name, where); err != nil {
			return nil, err
		}
		name = *t.Name
	}
	weight := 1.0
	if t.Weight != nil {
		w, err := t.Weight.Float64()
		if err != nil || math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
			return nil, inputerr.Errorf("domain", "term %q: weight must be a finite number ≥ 0, got %s", name, t.Weight.String())
		}
		weight = w
	}
	hasP, hasM := t.Product != nil, len(t.Marginals) > 0 && string(t.Marginals) != "null"
	switch {
	case hasP && hasM:
		return nil, inputerr.Errorf("domain", "term %q: give \"product\" or \"marginals\", not both", name)
	case !hasP && !hasM:
		return nil, inputerr.Errorf("domain", "term %q: needs \"product\" or \"marginals\"", name)
	case hasP:
		if dup := duplicateKey(t.productRaw(raw)); dup != "" {
			return nil, inputerr.Errorf("domain", "term %q: attribute %q is named twice in the product", name, dup)
		}
		blocks := map[string]*Block{}
		pos := map[string]int{}
		for i, a := range bp.domain {
			pos[a.Name] = i
		}
		names := make([]string, 0, len(t.Product))
		for an := range t.Product {
			names = append(names, an)
		}
		sort.Strings(names) // deterministic first error
		for _, an := range names {
			i, ok := pos[an]
			if !ok {
				return nil, inputerr.Errorf("domain", "term %q: unknown attribute %q (domain: %s)", name, an, attrNames(bp.domain))
			}
			b, err := bp.block(name, bp.domain[i], t.Product[an])
			if err != nil {
				return nil, err
			}
			blocks[an] = b
		}
		bp.entries += len(bp.domain)
		if bp.entries > maxProductEntries {
			return nil, inputerr.Errorf("domain", "the workload has too many Kronecker products")
		}
		tm, err := NewProductTerm(name, weight, bp.domain, blocks)
		if err != nil {
			return nil, err
		}
		bp.shareTotals(tm)
		return tm, nil
	}
	sets, sorted, err := bp.marginalSets(name, t.Marginals)
	if err != nil {
		return nil, err
	}
	mb, err := bp.marginalBlocks()
	if err != nil {
		return nil, err
	}
	return newMarginalsTerm(name, weight, bp.domain, sets, mb, sorted)
}

// shareTotals replaces the fresh totals NewProductTerm made with the
// parser's shared blocks, so equal blocks are one object (the error
// evaluation and the planners cache per block, and an attribute with one
// block in every product needs no descent).
func (bp *blockParser) shareTotals(t *Term) {
	for _, p := range t.Products {
		for i, b := range p.Blocks {
			key := cacheKey(bp.domain[i], b.key)
			c, ok := bp.cache[key]
			if !ok {
				bp.cache[key], c = b, b
			}
			p.Blocks[i] = c
		}
	}
}

func (bp *blockParser) block(term string, a Attribute, raw json.RawMessage) (*Block, error) {
	where := fmt.Sprintf("term %q, attribute %q", term, a.Name)
	var b *Block
	var err error
	switch {
	case len(raw) > 0 && raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, inputerr.Errorf("domain", "%s: bad block name", where)
		}
		if c, ok := bp.cache[cacheKey(a, strings.ToLower(strings.TrimSpace(s)))]; ok {
			return c, nil
		}
		b, err = NewBlock(s, a.Size, bp.builtins)
	case len(raw) > 0 && raw[0] == '{':
		var o struct {
			Matrix *string          `json:"matrix"`
			Ranges *json.RawMessage `json:"ranges"`
		}
		if err := strictDecode(raw, &o, where); err != nil {
			return nil, err
		}
		switch {
		case o.Matrix != nil && o.Ranges != nil:
			return nil, inputerr.Errorf("domain", "%s: give \"matrix\" or \"ranges\", not both", where)
		case o.Matrix != nil:
			b, err = bp.matrixFile(*o.Matrix, a)
		case o.Ranges != nil:
			var rs [][]json.Number
			if err := json.Unmarshal(*o.Ranges, &rs); err != nil {
				return nil, inputerr.Errorf("domain", "%s: \"ranges\" must be a list of [lo, hi] pairs of integers", where)
			}
			ranges := make([][2]int, len(rs))
			for r, pair := range rs {
				if len(pair) != 2 {
					return nil, inputerr.Errorf("domain", "%s: range %d must be a pair [lo, hi], got %d numbers", where, r+1, len(pair))
				}
				lo, err1 := intValue(pair[0])
				hi, err2 := intValue(pair[1])
				if err1 != nil || err2 != nil {
					return nil, inputerr.Errorf("domain", "%s: range %d: [%s, %s] are not integers", where, r+1, pair[0], pair[1])
				}
				if lo < 0 || hi >= a.Size || lo > hi {
					return nil, inputerr.Errorf("domain", "%s: range %d, [%d, %d], is outside the domain 0…%d or empty", where, r+1, lo, hi, a.Size-1)
				}
				ranges[r] = [2]int{lo, hi}
			}
			b, err = RangesBlock(a.Size, ranges)
		default:
			return nil, inputerr.Errorf("domain", "%s: a block object needs \"matrix\" or \"ranges\"", where)
		}
	default:
		return nil, inputerr.Errorf("domain", "%s: a block is a name (\"prefix\") or an object ({\"matrix\": FILE} or {\"ranges\": [[lo, hi], …]})", where)
	}
	if err != nil {
		return nil, inputerr.Errorf("domain", "%s: %w", where, stripPkg(err))
	}
	key := cacheKey(a, b.key)
	if c, ok := bp.cache[key]; ok {
		return c, nil
	}
	bp.cache[key] = b
	return b, nil
}

func (bp *blockParser) matrixFile(file string, a Attribute) (*Block, error) {
	if strings.TrimSpace(file) == "" {
		return nil, inputerr.Errorf("domain", "the matrix file name is empty")
	}
	path := file
	if !filepath.IsAbs(path) {
		path = filepath.Join(bp.baseDir, file)
	}
	if c, ok := bp.cache[cacheKey(a, "matrix:"+path)]; ok {
		return c, nil
	}
	w, err := matio.ReadMatrix(path)
	if err != nil {
		return nil, inputerr.Errorf("domain", "matrix %q: %v", file, err)
	}
	m, d := w.Dims()
	if d != a.Size {
		return nil, inputerr.Errorf("domain", "matrix %q is %d×%d: it needs %d columns, one per value of the attribute", file, m, d, a.Size)
	}
	b, err := MatrixBlock(path, w)
	if err != nil {
		return nil, err
	}
	b.Spec, b.Path = file, path
	return b, nil
}

// marginalSets returns a marginals term's sets; sorted is true for the k
// and upto forms, whose sets are generated increasing and distinct.
func (bp *blockParser) marginalSets(term string, raw json.RawMessage) (sets [][]int, sorted bool, err error) {
	var o struct {
		Sets *[][]string  `json:"sets"`
		K    *json.Number `json:"k"`
		Upto *json.Number `json:"upto"`
	}
	where := fmt.Sprintf("term %q, marginals", term)
	if err := strictDecode(raw, &o, where); err != nil {
		return nil, false, err
	}
	given := 0
	for _, g := range []bool{o.Sets != nil, o.K != nil, o.Upto != nil} {
		if g {
			given++
		}
	}
	if given != 1 {
		return nil, false, inputerr.Errorf("domain", "%s: give exactly one of \"sets\", \"k\", \"upto\"", where)
	}
	na := len(bp.domain)
	if o.Sets != nil {
		pos := map[string]int{}
		for i, a := range bp.domain {
			pos[a.Name] = i
		}
		if len(*o.Sets) == 0 {
			return nil, false, inputerr.Errorf("domain", "%s: \"sets\" is empty", where)
		}
		if len(*o.Sets) > maxProductEntries/na {
			return nil, false, inputerr.Errorf("domain", "%s: too many sets", where)
		}
		sets = make([][]int, len(*o.Sets))
		for s, names := range *o.Sets {
			for _, an := range names {
				i, ok := pos[an]
				if !ok {
					return nil, false, inputerr.Errorf("domain", "%s: unknown attribute %q (domain: %s)", where, an, attrNames(bp.domain))
				}
				sets[s] = append(sets[s], i)
			}
		}
		return sets, false, nil
	}
	kn, upto := o.K, false
	if o.Upto != nil {
		kn, upto = o.Upto, true
	}
	k, kerr := intValue(*kn)
	if kerr != nil || k < 0 || k > na {
		return nil, false, inputerr.Errorf("domain", "%s: %s must be an integer in 0…%d (the number of attributes), got %s", where, map[bool]string{false: "k", true: "upto"}[upto], na, kn.String())
	}
	lo := k
	if upto {
		lo = 0
	}
	count := 0.0
	for s := lo; s <= k; s++ {
		count += binomial(na, s)
	}
	if count*float64(na) > maxProductEntries {
		return nil, false, inputerr.Errorf("domain", "%s: %.0f marginals are too many (at most %d)", where, count, maxProductEntries/na)
	}
	return marginalSetsOf(na, lo, k), true, nil
}

// productRaw returns the raw "product" object of a term (for the
// duplicate-key check encoding/json does not do).
func (t *termJSON) productRaw(raw json.RawMessage) json.RawMessage {
	var o map[string]json.RawMessage
	if json.Unmarshal(raw, &o) != nil {
		return nil
	}
	return o["product"]
}

// duplicateKey returns a key that occurs twice in the JSON object raw, or "".
func duplicateKey(raw json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return ""
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		k, _ := tok.(string)
		if seen[k] {
			return k
		}
		seen[k] = true
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return ""
		}
	}
	return ""
}

// binomial returns C(a, b) as a float64 for small a.
func binomial(a, b int) float64 {
	if b < 0 || b > a {
		return 0
	}
	c := 1.0
	for i := 0; i < b; i++ {
		c = c * float64(a-i) / float64(i+1)
	}
	return c
}

// strictDecode unmarshals one JSON value, rejecting unknown keys and
// trailing data, and turns encoding/json's messages (which name Go types)
// into ones that name the spec's fields.
func strictDecode(data []byte, v any, where string) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return inputerr.Errorf("domain", "%s: malformed JSON at byte %d: %v", where, se.Offset, se)
		case errors.As(err, &te):
			return inputerr.Errorf("domain", "%s: field %q must be %s, got a JSON %s", where, te.Field, jsonKind(te.Type.Kind().String()), te.Value)
		case errors.Is(err, io.ErrUnexpectedEOF):
			return inputerr.Errorf("domain", "%s: malformed JSON: it ends too early", where)
		case strings.Contains(err.Error(), "invalid number literal"):
			return inputerr.Errorf("domain", "%s: a numeric field (size, weight, k, upto) holds a string that is not a number", where)
		case errors.Is(err, io.EOF):
			return inputerr.Errorf("domain", "%s: empty", where)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			return inputerr.Errorf("domain", "%s: unknown key %s", where, strings.TrimPrefix(err.Error(), "json: unknown field "))
		}
		return inputerr.Errorf("domain", "%s: %v", where, err)
	}
	if dec.More() {
		return inputerr.Errorf("domain", "%s: unexpected data after the JSON value", where)
	}
	if _, err := dec.Token(); err != io.EOF {
		return inputerr.Errorf("domain", "%s: unexpected data after the JSON value", where)
	}
	return nil
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "slice", "array":
		return "a list"
	case "map", "struct", "ptr":
		return "an object"
	}
	return "a number"
}

// intValue parses a JSON number that must be an integer (1e2 is accepted;
// 2.5 is not).
func intValue(n json.Number) (int, error) {
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, fmt.Errorf("not an integer")
	}
	return int(f), nil
}

// stripPkg removes a leading "domain: invalid input: " (or workload's) so nested messages
// read once.
func stripPkg(err error) error {
	msg := err.Error()
	for _, p := range []string{"domain: invalid input: ", "domain: ", "workload: invalid input: ", "workload: "} {
		if strings.HasPrefix(msg, p) {
			return errors.New(strings.TrimPrefix(msg, p))
		}
	}
	return err
}

// printableName refuses a name with control characters: names are echoed
// in messages and written to CSV headers, where an escape sequence would
// reach the terminal.
func printableName(name, where string) error {
	for _, r := range name {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return inputerr.Errorf("domain", "%s: the name %s has a control character or invalid UTF-8; names must be printable", where, strconv.QuoteToASCII(clip(name)))
		}
	}
	return nil
}

// clip keeps the first 60 bytes of s for a message.
func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}
