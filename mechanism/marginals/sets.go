package marginals

import (
	"math"
	"slices"

	"github.com/dpsolve/dpsolve/internal/inputerr"
)

// ErrInput is wrapped by every error this package returns for input the
// caller can fix; it is the project-wide sentinel of package inputerr.
var ErrInput = inputerr.ErrInput

// MaxSubsets bounds the number of residual subsets (and of marginals) a plan
// may hold. Each costs about a hundred bytes and a few table entries, so 2²²
// keeps a plan within a few hundred megabytes; larger requests are refused
// with their count before anything is allocated.
const MaxSubsets = 1 << 22

// Set is one marginal of a workload: the attribute positions it covers
// (increasing, in domain order) and the weight multiplying its queries (the
// Gram gains Weight²·W_SᵀW_S).
type Set struct {
	Attrs  []int
	Weight float64
}

func errorf(format string, a ...any) error { return inputerr.Errorf("marginals", format, a...) }

// binomialCapped returns C(n, k), or cap+1 when it exceeds cap.
func binomialCapped(n, k int, cap int64) int64 {
	if k < 0 || k > n {
		return 0
	}
	if k > n-k {
		k = n - k
	}
	c := int64(1)
	for i := 1; i <= k; i++ {
		// c·(n−k+i)/i is exact at every step (a product of i consecutive
		// integers is divisible by i!); guard the multiplication.
		f := int64(n - k + i)
		if c > (cap+1)*int64(i)/f+1 {
			return cap + 1
		}
		c = c * f / int64(i)
		if c > cap {
			return cap + 1
		}
	}
	return c
}

// checkChoose validates numAttrs and k for the set builders and returns the
// number of sets C(numAttrs, j) summed over j in [lo, k].
func checkChoose(what string, numAttrs, k, lo int) (int, error) {
	if numAttrs <= 0 {
		return 0, errorf("the domain needs at least one attribute, got %d", numAttrs)
	}
	if k < 0 {
		return 0, errorf("%s must be non-negative, got %d", what, k)
	}
	if k > numAttrs {
		return 0, errorf("%s = %d is larger than the number of attributes (%d)", what, k, numAttrs)
	}
	var total int64
	for j := lo; j <= k; j++ {
		total += binomialCapped(numAttrs, j, MaxSubsets)
		if total > MaxSubsets {
			return 0, errorf("%s = %d over %d attributes needs more than %d marginals (C(%d, %d) = %s alone); the limit is %d",
				what, k, numAttrs, MaxSubsets, numAttrs, j, chooseString(numAttrs, j), MaxSubsets)
		}
	}
	return int(total), nil
}

// chooseString formats C(n, k) in floating point for messages about counts
// too large for an int64.
func chooseString(n, k int) string {
	lg, _ := math.Lgamma(float64(n + 1))
	a, _ := math.Lgamma(float64(k + 1))
	b, _ := math.Lgamma(float64(n - k + 1))
	return formatG(math.Exp(lg - a - b))
}

// KWay returns all k-attribute sets of a domain with numAttrs attributes, in
// lexicographic order of their positions (the order of the issue's
// {"k": K} spec and of workload.Marginals.Subsets). It refuses, before
// allocating, a count above MaxSubsets.
func KWay(numAttrs, k int) ([][]int, error) {
	count, err := checkChoose("k", numAttrs, k, k)
	if err != nil {
		return nil, err
	}
	out := make([][]int, 0, count)
	return appendCombinations(out, numAttrs, k), nil
}

// UpTo returns all sets of at most k attributes, smaller sets first and
// lexicographic within a size (the order of the {"upto": K} spec). The
// empty set (the grand total) comes first.
func UpTo(numAttrs, k int) ([][]int, error) {
	count, err := checkChoose("upto", numAttrs, k, 0)
	if err != nil {
		return nil, err
	}
	out := make([][]int, 0, count)
	for j := 0; j <= k; j++ {
		out = appendCombinations(out, numAttrs, j)
	}
	return out, nil
}

// appendCombinations appends the k-subsets of {0…n−1} in lexicographic order.
func appendCombinations(out [][]int, n, k int) [][]int {
	c := make([]int, k)
	for i := range c {
		c[i] = i
	}
	for {
		out = append(out, slices.Clone(c))
		i := k - 1
		for i >= 0 && c[i] == n-k+i {
			i--
		}
		if i < 0 {
			return out
		}
		c[i]++
		for j := i + 1; j < k; j++ {
			c[j] = c[j-1] + 1
		}
	}
}

// Weighted pairs every set with the same weight w.
func Weighted(sets [][]int, w float64) []Set {
	out := make([]Set, len(sets))
	for i, s := range sets {
		out[i] = Set{Attrs: s, Weight: w}
	}
	return out
}

// validate checks sizes and sets and returns the sets with sorted copies of
// their attributes. It also refuses, before the lattice is built, a workload
// whose residual subsets certainly exceed MaxSubsets.
func validate(sizes []int, sets []Set) ([]Set, error) {
	if len(sizes) == 0 {
		return nil, errorf("the domain needs at least one attribute")
	}
	for a, d := range sizes {
		if d < 1 {
			return nil, errorf("attribute %d has size %d; every size must be at least 1", a, d)
		}
	}
	if len(sets) == 0 {
		return nil, errorf("the workload lists no marginals")
	}
	if len(sets) > MaxSubsets {
		return nil, errorf("the workload lists %d marginals; the limit is %d", len(sets), MaxSubsets)
	}
	out := make([]Set, len(sets))
	total := 0
	for _, s := range sets {
		total += len(s.Attrs)
	}
	arena := make([]int, 0, total) // one allocation for every set's sorted copy
	positive := false
	for i, s := range sets {
		if math.IsNaN(s.Weight) || math.IsInf(s.Weight, 0) || s.Weight < 0 {
			return nil, errorf("marginal %d has weight %v; weights must be finite and non-negative", i, s.Weight)
		}
		if s.Weight > 0 {
			positive = true
		}
		arena = append(arena, s.Attrs...)
		attrs := arena[len(arena)-len(s.Attrs) : len(arena) : len(arena)]
		slices.Sort(attrs)
		for j, a := range attrs {
			if a < 0 || a >= len(sizes) {
				return nil, errorf("marginal %d names attribute %d; the domain has attributes 0…%d", i, a, len(sizes)-1)
			}
			if j > 0 && attrs[j-1] == a {
				return nil, errorf("marginal %d names attribute %d twice", i, a)
			}
		}
		if len(attrs) > 62 {
			return nil, errorf("marginal %d covers %d attributes; its 2^%d residual subsets cannot be planned", i, len(attrs), len(attrs))
		}
		out[i] = Set{Attrs: attrs, Weight: s.Weight}
	}
	if !positive {
		return nil, errorf("every marginal has weight 0; nothing to plan")
	}
	return out, nil
}
