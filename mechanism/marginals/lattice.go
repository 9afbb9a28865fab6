package marginals

import (
	"cmp"
	"encoding/binary"
	"slices"
)

// MaxPairs bounds Σ_S 2^|S|, the number of (marginal, subset) pairs a plan
// enumerates and stores (12 bytes each); requests above it are refused with
// the count before the lattice is built.
const MaxPairs = 1 << 25

// lattice is the down-closure of a workload's positive-weight marginals:
// every residual subset T with dim_T > 0 contained in one of them, sorted by
// size and then lexicographically, and for every marginal S (weight 0
// included) the residuals T ⊆ S with their coefficients p_{S,T} in var_S.
type lattice struct {
	sizes []int
	res   [][]int // residual subsets, sorted by (size, lexicographic)
	// CSR rows, one per marginal: res indices idx[ptr[i]:ptr[i+1]] and p_{S,T}.
	ptr  []int32
	idx  []int32
	coef []float64
	// estimable[i] is false when some T ⊆ S_i with dim_T > 0 is not measured
	// (possible only for marginals of weight 0).
	estimable []bool
	// lookup returns the index in res of a residual subset.
	lookup func(t []int) (int, bool)
}

// pairCount returns Σ_S 2^|S| capped at MaxPairs+1.
func pairCount(sets []Set) int64 {
	var n int64
	for _, s := range sets {
		if len(s.Attrs) > 25 {
			return MaxPairs + 1
		}
		n += int64(1) << len(s.Attrs)
		if n > MaxPairs {
			return MaxPairs + 1
		}
	}
	return n
}

// keyer maps an attribute set to a map key. The packed form (one uint64,
// 16 bits per attribute) is used when every set has at most 4 attributes and
// the domain fewer than 2¹⁶ − 1 attributes; otherwise a byte string.
type keyer[K comparable] func(buf []byte, t []int) K

func packedKey(_ []byte, t []int) uint64 {
	var k uint64
	for _, a := range t {
		k = k<<16 | uint64(a+1)
	}
	return k
}

func stringKey(buf []byte, t []int) string {
	buf = buf[:0]
	for _, a := range t {
		buf = binary.AppendUvarint(buf, uint64(a))
	}
	return string(buf)
}

func buildLattice(sizes []int, sets []Set) (*lattice, error) {
	if p := pairCount(sets); p > MaxPairs {
		return nil, errorf("the marginals have more than %d (marginal, subset) pairs (Σ 2^|S|); the limit is %d", MaxPairs, MaxPairs)
	}
	small := len(sizes) < 1<<16-1
	for _, s := range sets {
		if len(s.Attrs) > 4 {
			small = false
		}
	}
	if small {
		return buildLatticeKeyed(sizes, sets, packedKey)
	}
	return buildLatticeKeyed(sizes, sets, stringKey)
}

// forSubsets calls f with every subset T of s (in a reused buffer) whose
// residual is non-empty (no attribute of size 1 in T), and the mask of T.
func forSubsets(sizes, s []int, buf []int, f func(t []int, mask uint64) bool) bool {
	live := uint64(0) // attributes of s that may enter T
	for j, a := range s {
		if sizes[a] > 1 {
			live |= 1 << j
		}
	}
	// Enumerate the submasks of live in increasing order.
	for m := uint64(0); ; m = (m - live) & live {
		t := buf[:0]
		for j := range s {
			if m&(1<<j) != 0 {
				t = append(t, s[j])
			}
		}
		if !f(t, m) {
			return false
		}
		if m == live {
			return true
		}
	}
}

func buildLatticeKeyed[K comparable](sizes []int, sets []Set, key keyer[K]) (*lattice, error) {
	var kbuf []byte
	tbuf := make([]int, 0, 64)
	index := make(map[K]int32)
	var res [][]int
	var overflow bool
	for _, s := range sets {
		if s.Weight == 0 {
			continue
		}
		forSubsets(sizes, s.Attrs, tbuf, func(t []int, _ uint64) bool {
			k := key(kbuf, t)
			if _, ok := index[k]; !ok {
				if len(res) >= MaxSubsets {
					overflow = true
					return false
				}
				index[k] = int32(len(res))
				res = append(res, slices.Clone(t))
			}
			return true
		})
		if overflow {
			return nil, errorf("the marginals have more than %d residual subsets; the limit is %d", MaxSubsets, MaxSubsets)
		}
	}
	// Sort the residuals and renumber the index.
	order := make([]int32, len(res))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(x, y int32) int {
		a, b := res[x], res[y]
		if c := cmp.Compare(len(a), len(b)); c != 0 {
			return c
		}
		return slices.Compare(a, b)
	})
	renum := make([]int32, len(res))
	sorted := make([][]int, len(res))
	for newI, oldI := range order {
		renum[oldI] = int32(newI)
		sorted[newI] = res[oldI]
	}
	l := &lattice{sizes: sizes, res: sorted, ptr: make([]int32, 1, len(sets)+1), estimable: make([]bool, len(sets))}
	l.lookup = func(t []int) (int, bool) {
		j, ok := index[key(nil, t)]
		if !ok {
			return 0, false
		}
		return int(renum[j]), true
	}
	for i, s := range sets {
		ok := true
		forSubsets(sizes, s.Attrs, tbuf, func(t []int, mask uint64) bool {
			j, found := index[key(kbuf, t)]
			if !found {
				ok = false
				return true
			}
			p := 1.0
			for b, a := range s.Attrs {
				d := float64(sizes[a])
				if mask&(1<<b) != 0 {
					p *= (d - 1) / d
				} else {
					p /= d * d
				}
			}
			l.idx = append(l.idx, renum[j])
			l.coef = append(l.coef, p)
			return true
		})
		l.estimable[i] = ok
		l.ptr = append(l.ptr, int32(len(l.idx)))
	}
	return l, nil
}
