package marginals

import "math"

// The Helmert basis U_d of 1⊥ ⊂ R^d has columns j = 1…d−1
//
//	u_j = (1, …, 1, −j, 0, …, 0)/√(j(j+1))   (j ones, then −j at position j),
//
// orthonormal and orthogonal to 1, and is applied in O(d) by prefix (Uᵀ) or
// suffix (U) sums instead of a dense (d−1)×d product.

// helmertT sets dst[j−1] = (u_jᵀ src) for j = 1…d−1; len(src) = d.
func helmertT(dst, src []float64) {
	prefix := 0.0
	for j := 1; j < len(src); j++ {
		prefix += src[j-1]
		fj := float64(j)
		dst[j-1] = (prefix - fj*src[j]) / math.Sqrt(fj*(fj+1))
	}
}

// helmert sets dst = U·src, len(dst) = d, len(src) = d−1.
func helmert(dst, src []float64) {
	d := len(dst)
	suffix := 0.0 // Σ_{j>i} src[j−1]/√(j(j+1))
	for i := d - 1; i >= 0; i-- {
		v := suffix
		if i >= 1 {
			fi := float64(i)
			c := math.Sqrt(fi * (fi + 1))
			v -= fi * src[i-1] / c
			suffix += src[i-1] / c
		}
		dst[i] = v
	}
}

// alongAxis applies f to every fibre of axis k of the row-major tensor src
// with the given shape, writing fibres of length outLen into dst (shape with
// shape[k] replaced by outLen). f receives contiguous copies.
func alongAxis(dst, src []float64, shape []int, k, outLen int, f func(out, in []float64)) {
	outer, inner := 1, 1
	for _, d := range shape[:k] {
		outer *= d
	}
	for _, d := range shape[k+1:] {
		inner *= d
	}
	n := shape[k]
	if inner == 1 { // contiguous fibres: no copies (same arithmetic)
		for o := 0; o < outer; o++ {
			f(dst[o*outLen:(o+1)*outLen], src[o*n:(o+1)*n])
		}
		return
	}
	in := make([]float64, n)
	out := make([]float64, outLen)
	for o := 0; o < outer; o++ {
		sb, db := o*n*inner, o*outLen*inner
		for i := 0; i < inner; i++ {
			for c := 0; c < n; c++ {
				in[c] = src[sb+c*inner+i]
			}
			f(out, in)
			for c := 0; c < outLen; c++ {
				dst[db+c*inner+i] = out[c]
			}
		}
	}
}

func sumFibre(out, in []float64) {
	s := 0.0
	for _, v := range in {
		s += v
	}
	out[0] = s
}

func product(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}
