package domain

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/inputerr"
)

// QuerySet is the 1-D query matrix W (m×d) behind a block: its number of
// queries, its Gram WᵀW and W itself. Every workload.Explicit is one.
type QuerySet interface {
	// Queries returns m.
	Queries() int
	// Gram returns WᵀW (d×d).
	Gram() *mat.SymDense
	// Matrix returns W.
	Matrix() *mat.Dense
}

// Builtins resolves a built-in block name ("prefix", "width:k=4", …) to its
// query set on an attribute of the given size. The domain does not know the
// 1-D workloads: workload.Blocks resolves every name workload.Parse accepts,
// so the spec dialect's block names are Parse's.
type Builtins func(name string, size int) (QuerySet, error)

// marginalQueries is the identity (one query per value) or the total (one
// query over all values) of an attribute of size d: the blocks of every
// marginal, which the domain builds itself.
type marginalQueries struct {
	d     int
	total bool
}

func (q marginalQueries) Queries() int {
	if q.total {
		return 1
	}
	return q.d
}

// Gram returns I or J (all ones).
func (q marginalQueries) Gram() *mat.SymDense {
	if q.total {
		data := make([]float64, q.d*q.d)
		for i := range data {
			data[i] = 1
		}
		return mat.NewSymDense(q.d, data)
	}
	v := mat.NewSymDense(q.d, nil)
	for i := 0; i < q.d; i++ {
		v.SetSym(i, i, 1)
	}
	return v
}

// Matrix returns I or the all-ones row.
func (q marginalQueries) Matrix() *mat.Dense {
	if q.total {
		data := make([]float64, q.d)
		for i := range data {
			data[i] = 1
		}
		return mat.NewDense(1, q.d, data)
	}
	w := mat.NewDense(q.d, q.d, nil)
	for i := 0; i < q.d; i++ {
		w.Set(i, i, 1)
	}
	return w
}

// BlockKind says how a Block was described.
type BlockKind string

const (
	// BlockIdentity is the identity (every value); V = I.
	BlockIdentity BlockKind = "identity"
	// BlockTotal is the sum over the attribute; V = J (all ones).
	BlockTotal BlockKind = "total"
	// BlockIdentityTotal is the identity stacked on the total; V = I + J.
	BlockIdentityTotal BlockKind = "identitytotal"
	// BlockBuiltin is any other name the Builtins resolve (workload.Blocks:
	// prefix, allrange, width:k=K, wrange:m=M, …).
	BlockBuiltin BlockKind = "builtin"
	// BlockMatrix is a user query matrix (m×size).
	BlockMatrix BlockKind = "matrix"
	// BlockRanges is a list of inclusive ranges [lo, hi] of attribute values.
	BlockRanges BlockKind = "ranges"
)

// Block is the 1-D query matrix of one attribute in one Kronecker product.
// Blocks are immutable once built; the Gram they return is shared and must
// not be modified.
type Block struct {
	// Kind says how the block was described.
	Kind BlockKind
	// Spec is the description as given: the built-in name ("prefix",
	// "width:k=4"), or the matrix file as written in the spec.
	Spec string
	// Path is the resolved file of a BlockMatrix read from disk ("" otherwise).
	Path string
	// Ranges are the inclusive, 0-based ranges of a BlockRanges.
	Ranges [][2]int
	// Size is the attribute's size d (the block has d columns).
	Size int

	queries int
	gram    *mat.SymDense // nil while lazy holds it unbuilt
	lazy    *lazyGram
	w       *mat.Dense // explicit W of a matrix, ranges or identitytotal block
	qs      QuerySet   // the query set behind an identity, total or built-in block
	key     string
}

// Queries returns the block's number of rows m.
func (b *Block) Queries() int { return b.queries }

// Gram returns the block's d×d Gram WᵀW. It is shared: do not modify it.
// Identity and total blocks build it on the first call (safe for
// concurrent callers).
func (b *Block) Gram() *mat.SymDense {
	if b.gram != nil || b.lazy == nil {
		return b.gram
	}
	b.lazy.once.Do(func() { b.lazy.g = b.lazy.build() })
	return b.lazy.g
}

// lazyGram builds a block's Gram once, on demand.
type lazyGram struct {
	once  sync.Once
	build func() *mat.SymDense
	g     *mat.SymDense
}

// Key is a canonical description of the block: two blocks of the same size
// with equal keys have the same query matrix (a matrix block is keyed by its
// resolved file, or by its label for one built in code).
func (b *Block) Key() string { return b.key }

// String returns the block's description, e.g. "prefix" or "ranges[[0,17],[18,64]]".
func (b *Block) String() string { return b.key }

// Matrix returns the block's explicit query matrix W (m×d), a copy.
func (b *Block) Matrix() (*mat.Dense, error) {
	if b.w != nil {
		return mat.DenseCopyOf(b.w), nil
	}
	if b.qs != nil {
		return b.qs.Matrix(), nil
	}
	return nil, inputerr.Errorf("domain", "block %s has no explicit query matrix", b.key)
}

// touches reports whether value v of the attribute is in some query of the block.
func (b *Block) touches(v int) bool {
	if b.Kind == BlockIdentity || b.Kind == BlockTotal {
		return true
	}
	return b.Gram().At(v, v) > 0
}

// NewBlock returns the built-in 1-D block of the given name on an attribute
// of the given size: "identity", "total" and "identitytotal" (the domain's
// own), or any name builtins resolves ("prefix", "allrange", "width:k=K",
// "wrange:m=M,seed=S", …: workload.Blocks resolves every 1-D workload
// workload.Parse knows). builtins may be nil when only the domain's own
// names are used.
func NewBlock(name string, size int, builtins Builtins) (*Block, error) {
	if size < 1 || size > MaxAttributeSize {
		return nil, inputerr.Errorf("domain", "attribute size must be in 1…%d, got %d", MaxAttributeSize, size)
	}
	clean := strings.ToLower(strings.TrimSpace(name))
	base, _, _ := strings.Cut(clean, ":")
	base = strings.TrimSpace(base)
	switch base {
	case "identitytotal":
		if clean != "identitytotal" {
			return nil, inputerr.Errorf("domain", "block %q takes no parameters", name)
		}
		w := mat.NewDense(size+1, size, nil)
		for i := 0; i < size; i++ {
			w.Set(i, i, 1)
			w.Set(size, i, 1)
		}
		return matrixBlock(BlockIdentityTotal, "identitytotal", "identitytotal", w), nil
	case "marginals", "marginal":
		return nil, inputerr.Errorf("domain", "%q is not a 1-D block: use a marginals term", name)
	}
	qs, err := resolve(name, clean, base, size, builtins)
	if err != nil {
		return nil, err
	}
	b := &Block{Kind: BlockBuiltin, Spec: name, Size: size, queries: qs.Queries(), qs: qs, key: clean}
	switch base {
	case "identity":
		b.Kind = BlockIdentity
	case "total":
		b.Kind = BlockTotal
	}
	if b.Kind == BlockBuiltin {
		b.gram = qs.Gram()
	} else {
		// Identity and total blocks are known structurally (they touch
		// every value); their d×d Grams — 128 MiB each at d = 4096, and the
		// parser makes both for every attribute — are built on first use.
		b.lazy = &lazyGram{build: qs.Gram}
	}
	return b, nil
}

// resolve returns the query set of a block name: the domain's own identity
// and total, or what builtins makes of any other name.
func resolve(name, clean, base string, size int, builtins Builtins) (QuerySet, error) {
	switch clean {
	case "identity":
		return marginalQueries{d: size}, nil
	case "total":
		return marginalQueries{d: size, total: true}, nil
	}
	if err := checkRandomSize(clean, base, size); err != nil {
		return nil, err
	}
	if builtins == nil {
		return nil, inputerr.Errorf("domain", "block %q: unknown block (want identity, total, identitytotal, a matrix or ranges; no built-in 1-D workloads were given)", name)
	}
	qs, err := builtins(name, size)
	if err == nil && qs == nil {
		err = fmt.Errorf("no query set")
	}
	if err != nil {
		return nil, inputerr.Errorf("domain", "block %q: %v", name, err)
	}
	return qs, nil
}

// maxRandomEntries caps m·size of a random built-in block (workload.Parse's
// wrange, wdiscrete and wrelated), which the resolver builds in memory: 2²⁶
// entries is 512 MiB.
const maxRandomEntries = 1 << 26

// checkRandomSize refuses random built-in blocks whose query count would not
// fit in memory, before the resolver allocates them.
func checkRandomSize(clean, base string, size int) error {
	switch base {
	case "wrange", "wdiscrete", "wrelated":
	default:
		return nil
	}
	_, rest, _ := strings.Cut(clean, ":")
	for _, f := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(f, "=")
		if strings.TrimSpace(k) != "m" {
			continue
		}
		m, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err == nil && m > 0 && m > maxRandomEntries/int64(size) {
			return inputerr.Errorf("domain", "block %q: %d queries over %d values are too many (at most %d entries)", clean, m, size, maxRandomEntries)
		}
	}
	return nil
}

// MatrixBlock returns a block with the user's query matrix W (m×d, finite
// entries); label names it in reports and keys it (blocks with the same
// label are taken to be the same matrix). W is copied.
func MatrixBlock(label string, w *mat.Dense) (*Block, error) {
	if w == nil || w.IsEmpty() {
		return nil, inputerr.Errorf("domain", "matrix block %q is empty", label)
	}
	m, d := w.Dims()
	if d > MaxAttributeSize {
		return nil, inputerr.Errorf("domain", "matrix block %q has %d columns; at most %d are supported", label, d, MaxAttributeSize)
	}
	for i := 0; i < m; i++ {
		for j := 0; j < d; j++ {
			if v := w.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, inputerr.Errorf("domain", "matrix block %q: entry (%d,%d) is %v; entries must be finite", label, i, j, v)
			}
		}
	}
	return matrixBlock(BlockMatrix, label, "matrix:"+label, mat.DenseCopyOf(w)), nil
}

func matrixBlock(kind BlockKind, spec, key string, w *mat.Dense) *Block {
	m, d := w.Dims()
	g := mat.NewSymDense(d, nil)
	g.SymOuterK(1, w.T())
	return &Block{Kind: kind, Spec: spec, Size: d, queries: m, gram: g, w: w, key: key}
}

// RangesBlock returns the block of the inclusive, 0-based ranges [lo, hi]
// (0 ≤ lo ≤ hi < size), one query each.
func RangesBlock(size int, ranges [][2]int) (*Block, error) {
	if size < 1 || size > MaxAttributeSize {
		return nil, inputerr.Errorf("domain", "attribute size must be in 1…%d, got %d", MaxAttributeSize, size)
	}
	if len(ranges) == 0 {
		return nil, inputerr.Errorf("domain", "a ranges block needs at least one range")
	}
	w := mat.NewDense(len(ranges), size, nil)
	var sb strings.Builder
	sb.WriteString("ranges[")
	for r, lh := range ranges {
		lo, hi := lh[0], lh[1]
		if lo < 0 || hi >= size || lo > hi {
			return nil, inputerr.Errorf("domain", "range [%d, %d] is outside the domain 0…%d (or empty)", lo, hi, size-1)
		}
		for c := lo; c <= hi; c++ {
			w.Set(r, c, 1)
		}
		if r > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, "[%d,%d]", lo, hi)
	}
	sb.WriteByte(']')
	b := matrixBlock(BlockRanges, sb.String(), sb.String(), w)
	b.Ranges = append([][2]int(nil), ranges...)
	return b, nil
}
