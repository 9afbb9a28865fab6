package synth

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

// cells returns Π_{a∈attrs} sizes[a] (1 for no attributes).
func cells(sizes, attrs []int) int {
	n := 1
	for _, a := range attrs {
		n *= sizes[a]
	}
	return n
}

// cellsFloat is cells in floating point, for size checks that must not
// overflow.
func cellsFloat(sizes, attrs []int) float64 {
	n := 1.0
	for _, a := range attrs {
		n *= float64(sizes[a])
	}
	return n
}

// subIndex maps every cell of the row-major table over big (increasing
// attribute positions, the last varying fastest) to its cell in the table
// over small ⊆ big.
func subIndex(sizes, big, small []int) []int32 {
	n := cells(sizes, big)
	strides := make([]int, len(big))
	st := 1
	for k := len(small) - 1; k >= 0; k-- {
		pos := slices.Index(big, small[k])
		strides[pos] = st
		st *= sizes[small[k]]
	}
	out := make([]int32, n)
	counter := make([]int, len(big))
	idx := 0
	for i := 0; i < n; i++ {
		out[i] = int32(idx)
		for k := len(big) - 1; k >= 0; k-- {
			counter[k]++
			idx += strides[k]
			if counter[k] < sizes[big[k]] {
				break
			}
			idx -= strides[k] * sizes[big[k]]
			counter[k] = 0
		}
	}
	return out
}

// indexCache keeps the subIndex maps in use, keyed by both sets.
type indexCache struct {
	sizes []int
	m     map[string][]int32
	held  int // entries cached
}

// maxCached bounds the entries a cache holds (64 MiB of int32); maps beyond
// it are computed on every use.
const maxCached = 1 << 24

func newIndexCache(sizes []int) *indexCache {
	return &indexCache{sizes: sizes, m: map[string][]int32{}}
}

func setKey(a []int) string {
	var b strings.Builder
	for i, v := range a {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(v))
	}
	return b.String()
}

func (c *indexCache) get(big, small []int) []int32 {
	k := setKey(big) + "|" + setKey(small)
	if v, ok := c.m[k]; ok {
		return v
	}
	v := subIndex(c.sizes, big, small)
	if c.held+len(v) <= maxCached {
		c.m[k] = v
		c.held += len(v)
	}
	return v
}

// sumInto adds src (over big) into dst (over small) through idx.
func sumInto(dst, src []float64, idx []int32) {
	clear(dst)
	for i, v := range src {
		dst[idx[i]] += v
	}
}

// logSumInto sets dst[s] = log Σ_{i→s} exp(src[i]).
func logSumInto(dst, src []float64, idx []int32) {
	for i := range dst {
		dst[i] = math.Inf(-1)
	}
	for i, v := range src {
		if v > dst[idx[i]] {
			dst[idx[i]] = v
		}
	}
	mx := slices.Clone(dst)
	clear(dst)
	for i, v := range src {
		if m := mx[idx[i]]; !math.IsInf(m, -1) {
			dst[idx[i]] += math.Exp(v - m)
		}
	}
	for i := range dst {
		dst[i] = mx[i] + math.Log(dst[i])
	}
}

// minInto sets dst[s] = min_{i→s} src[i].
func minInto(dst, src []float64, idx []int32) {
	for i := range dst {
		dst[i] = math.Inf(1)
	}
	for i, v := range src {
		if v < dst[idx[i]] {
			dst[idx[i]] = v
		}
	}
}

// addFrom adds small (over a subset) to dst (over big) through idx, times f.
func addFrom(dst, small []float64, idx []int32, f float64) {
	for i := range dst {
		dst[i] += f * small[idx[i]]
	}
}

// center applies P_T = ⊗(I − J/d) to a row-major table over attrs.
func center(sizes, attrs []int, t []float64) {
	inner := 1
	for k := len(attrs) - 1; k >= 0; k-- {
		d := sizes[attrs[k]]
		outer := len(t) / (inner * d)
		for o := 0; o < outer; o++ {
			base := o * d * inner
			for i := 0; i < inner; i++ {
				s := 0.0
				for c := 0; c < d; c++ {
					s += t[base+c*inner+i]
				}
				m := s / float64(d)
				for c := 0; c < d; c++ {
					t[base+c*inner+i] -= m
				}
			}
		}
		inner *= d
	}
}

// helmertUp returns Q_Tᵀ y for Helmert coordinates y over T: along every
// axis, U_d·(the d−1 coordinates) with U_d's columns
// u_j = (1,…,1,−j,0,…,0)/√(j(j+1)) (the basis package marginals documents).
func helmertUp(sizes, attrs []int, y []float64) []float64 {
	shape := make([]int, len(attrs))
	for i, a := range attrs {
		shape[i] = sizes[a] - 1
	}
	cur := y
	for k := len(attrs) - 1; k >= 0; k-- {
		d := sizes[attrs[k]]
		inner := 1
		for _, s := range shape[k+1:] {
			inner *= s
		}
		outer := len(cur) / (inner * (d - 1))
		next := make([]float64, outer*d*inner)
		for o := 0; o < outer; o++ {
			for i := 0; i < inner; i++ {
				suffix := 0.0
				for c := d - 1; c >= 0; c-- {
					v := suffix
					if c >= 1 {
						fc := float64(c)
						q := math.Sqrt(fc * (fc + 1))
						src := cur[o*(d-1)*inner+(c-1)*inner+i]
						v -= fc * src / q
						suffix += src / q
					}
					next[o*d*inner+c*inner+i] = v
				}
			}
		}
		cur, shape[k] = next, d
	}
	return cur
}

// productSum returns out over keep (⊆ dom, increasing positions) with
// out[y] = Σ_{x over dom, x_keep = y} Π_f vals[f][x_{attrs[f]}], each
// attrs[f] ⊆ dom (increasing positions): a variable-elimination step
// computed by walking dom's cells with every factor's offset kept by
// strides, so no index map and no table over dom is built.
func productSum(sizes, dom, keep []int, attrs [][]int, vals [][]float64) []float64 {
	k := len(dom)
	nf := len(attrs)
	// Walk dom with its largest attribute innermost (any order visits
	// every cell once; offsets come from strides, not from the order).
	if k > 1 {
		big := 0
		for d, a := range dom {
			if sizes[a] > sizes[dom[big]] {
				big = d
			}
		}
		dom = append(slices.Clone(dom[:big]), append(slices.Clone(dom[big+1:]), dom[big])...)
	}
	// strides[f*k+d]: factor f's stride along dom[d] (0 when absent); the
	// output is factor nf.
	strides := make([]int, (nf+1)*k)
	set := func(f int, sub []int) {
		st := 1
		for j := len(sub) - 1; j >= 0; j-- {
			strides[f*k+slices.Index(dom, sub[j])] = st
			st *= sizes[sub[j]]
		}
	}
	for f, a := range attrs {
		set(f, a)
	}
	set(nf, keep)
	out := make([]float64, cells(sizes, keep))
	if k == 0 {
		p := 1.0
		for _, v := range vals {
			p *= v[0]
		}
		out[0] = p
		return out
	}
	off := make([]int, nf+1)
	counter := make([]int, k)
	last := sizes[dom[k-1]]
	ls := strides[(k - 1):]
	n := cells(sizes, dom) / last
	for i := 0; i < n; i++ {
		// The last attribute of dom, innermost (one, two and three
		// factors, the usual cases, without the loop over factors).
		o, so := out[off[nf]:], ls[nf*k]
		switch nf {
		case 1:
			f0, s0 := vals[0][off[0]:], ls[0]
			for v := 0; v < last; v++ {
				o[v*so] += f0[v*s0]
			}
		case 2:
			f0, s0 := vals[0][off[0]:], ls[0]
			f1, s1 := vals[1][off[1]:], ls[k]
			for v := 0; v < last; v++ {
				o[v*so] += f0[v*s0] * f1[v*s1]
			}
		case 3:
			f0, s0 := vals[0][off[0]:], ls[0]
			f1, s1 := vals[1][off[1]:], ls[k]
			f2, s2 := vals[2][off[2]:], ls[2*k]
			for v := 0; v < last; v++ {
				o[v*so] += f0[v*s0] * f1[v*s1] * f2[v*s2]
			}
		default:
			for v := 0; v < last; v++ {
				p := 1.0
				for f := 0; f < nf; f++ {
					p *= vals[f][off[f]+v*ls[f*k]]
				}
				o[v*so] += p
			}
		}
		for d := k - 2; d >= 0; d-- {
			counter[d]++
			for f := 0; f <= nf; f++ {
				off[f] += strides[f*k+d]
			}
			if counter[d] < sizes[dom[d]] {
				break
			}
			for f := 0; f <= nf; f++ {
				off[f] -= strides[f*k+d] * sizes[dom[d]]
			}
			counter[d] = 0
		}
	}
	return out
}
