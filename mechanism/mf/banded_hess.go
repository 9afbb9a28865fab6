package mf

import (
	"math"

	gblas "gonum.org/v1/gonum/blas"

	"github.com/dpsolve/dpsolve/blas"
)

// hessWork is the Hessian product's storage besides the n×n s.w: per
// worker a column block of D and a row block of (X⁻¹D)·M, and the 2b−1
// diagonals of (X⁻¹D)·M around the main one, O(n·b) in all; r is the
// Newton system's right side.
type hessWork struct {
	s     int // block width of the passes
	dd, y [][]float64
	wb    []float64
	r     band
}

func newHessWork(n, bw, s int) hessWork {
	win := min(n, s+2*bw)
	h := hessWork{s: s, wb: make([]float64, n*(2*bw-1)), r: newBand(n, bw)}
	for range kernelWorkers((n + s - 1) / s) {
		h.dd = append(h.dd, make([]float64, win*s))
		h.y = append(h.y, make([]float64, s*win))
	}
	return h
}

// hess writes the lower band of P(W + Wᵀ), W = X⁻¹DM, into out. D is
// supported on the band, so a block of s columns of D meets only s + 2b − 2
// columns of X⁻¹, and W is needed only on its 2b − 1 central diagonals:
// two passes of GEMMs on n×(s+2b) panels, about 12·n²·b flops for s = b,
// instead of two n×n products (4·n³). Each pass's blocks are independent
// (disjoint columns of s.w, then disjoint rows of wb), so the workers
// split them; the result does not depend on how.
func (s *bandSolver) hess(d, out band) {
	n, bw, bs := s.n, s.bw, s.hw.s
	blocks := (n + bs - 1) / bs
	eachUnit(len(s.hw.dd), blocks, func(w, blk int) {
		j0 := blk * bs
		jw := min(bs, n-j0)
		lo, hi := max(0, j0-bw+1), min(n, j0+jw+bw-1)
		dd := blas.General{Rows: hi - lo, Cols: jw, Stride: jw, Data: s.hw.dd[w]}
		for i := lo; i < hi; i++ {
			for j := j0; j < j0+jw; j++ {
				dd.Data[(i-lo)*jw+j-j0] = d.at(i, j)
			}
		}
		blas.Gemm(gblas.NoTrans, gblas.NoTrans, 1, panel(s.xinv, 0, lo, n, hi-lo), dd, 0, panel(s.w, 0, j0, n, jw))
	})
	wd := 2*bw - 1
	eachUnit(len(s.hw.dd), blocks, func(w, blk int) {
		i0 := blk * bs
		iw := min(bs, n-i0)
		lo, hi := max(0, i0-bw+1), min(n, i0+iw+bw-1)
		y := blas.General{Rows: iw, Cols: hi - lo, Stride: hi - lo, Data: s.hw.y[w]}
		blas.Gemm(gblas.NoTrans, gblas.NoTrans, 1, panel(s.w, i0, 0, iw, n), panel(s.m, 0, lo, n, hi-lo), 0, y)
		for i := i0; i < i0+iw; i++ {
			for j := max(0, i-bw+1); j < min(n, i+bw); j++ {
				s.hw.wb[i*wd+j-i+bw-1] = y.Data[(i-i0)*y.Stride+j-lo]
			}
		}
	})
	for i := 0; i < n; i++ {
		out.v[i*bw] = 0
		for c := 1; c < bw; c++ {
			v := 0.0
			if j := i - c; j >= 0 {
				v = s.hw.wb[i*wd+bw-1-c] + s.hw.wb[j*wd+bw-1+c]
			}
			out.v[i*bw+c] = v
		}
	}
}

// newtonStep solves H[D] = P(M) into s.d by CG preconditioned with the
// band's column blocks (columnPrecond), as accurately as the certified
// relative gap tol needs.
func (s *bandSolver) newtonStep(tol float64) int {
	n, bw := s.n, s.bw
	r := s.hw.r
	for i := 0; i < n; i++ {
		for c := 0; c < bw; c++ {
			v := 0.0
			if c > 0 && c <= i {
				v = s.m.Data[i*n+i-c]
			}
			r.v[i*bw+c] = v
		}
	}
	clear(s.d.v)
	s.pc.build(s.xinv, s.m)
	// Truncated Newton: every CG iterate is supported on the band, so
	// even a loose solve is a feasible descent direction, and the forcing
	// term √(relative decrement) (Eisenstat–Walker style) keeps the final
	// steps superlinear. Measured against a fixed 1e-3 forcing: CG products
	// 920 → 140 (prefix n = 128, b = 16), 524 → 182 (n = 256, b = 32),
	// 5999 → 1156 (momentum 0.9, n = 128, b = 16). The step need not be
	// more accurate than the tolerance asks: an inexact step leaves a
	// decrement of about η²·rel, so η ≥ √(tol/rel) suffices for the last
	// one (measured: 96 → 78 CG products on prefix n = 256, b = 32, 141 →
	// 112 at n = 512, b = 64, 872 → 713 on momentum 0.9 at n = 256, every
	// run certified at a gap ≤ 1e-9).
	eta := 0.1
	if s.lastRel > 0 {
		eta = math.Min(0.1, math.Max(math.Max(1e-10, math.Sqrt(s.lastRel)), math.Sqrt(tol/s.lastRel)))
	}
	// Where the last step decreased F by under half of what the quadratic
	// model promised (far from the optimum, where the line search damps
	// the step), an accurate Newton direction is wasted: η = ½ there
	// (measured on momentum 0.9: 738 → 627 CG products at n = 512, b = 64,
	// 713 → 657 at n = 256, b = 32; prefix, whose model fits from the
	// first step, unchanged).
	if s.lastFit > 0 && s.lastFit < 0.5 {
		eta = math.Max(eta, 0.5)
	}
	hess := func(p, hp []float64) {
		s.hess(band{n: n, b: bw, v: p}, band{n: n, b: bw, v: hp})
	}
	return pcg(hess, s.pc.apply, s.d.v, r.v, eta, 2000)
}
