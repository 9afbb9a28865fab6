package mf

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	gblas "gonum.org/v1/gonum/blas"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/internal/symdense"
	"github.com/dpsolve/dpsolve/progress"
	"github.com/dpsolve/dpsolve/status"
)

// bandSolver minimizes tr(V X⁻¹) over b-banded X with unit diagonal by
// Newton's method on the n·(b−1) − b(b−1)/2 free entries (the band off the
// diagonal): the gradient is −P(M), M = X⁻¹VX⁻¹, and the Hessian
// H[D] = P(X⁻¹DM + MDX⁻¹), P keeping the band's off-diagonal entries; the
// Newton system is solved by conjugate gradients preconditioned by H's
// diagonal X⁻¹ᵢᵢMⱼⱼ + X⁻¹ⱼⱼMᵢᵢ + 2X⁻¹ᵢⱼMᵢⱼ. Every iterate is b-banded with
// unit diagonal exactly (the direction lives on the free entries).
type bandSolver struct {
	n, bw     int
	f         blas.General
	opt       *Options
	x, u, t   blas.General
	xinv, m   blas.General
	d, w1, w2 blas.General
	phases    map[string]float64
	lastRel   float64
}

func newBandSolver(f blas.General, bw int, opt *Options) *bandSolver {
	n := f.Rows
	s := &bandSolver{n: n, bw: bw, f: f, opt: opt, phases: map[string]float64{}}
	for _, p := range []*blas.General{&s.x, &s.u, &s.t, &s.xinv, &s.m, &s.d, &s.w1, &s.w2} {
		*p = blas.NewSquare(n)
	}
	return s
}

func (s *bandSolver) free(i, j int) bool { return i != j && i-j < s.bw && j-i < s.bw }

// start is the band of V^{1/2} scaled to unit diagonal, blended with I
// until definite.
func (s *bandSolver) start(v blas.General) {
	n := s.n
	var root *blas.General
	if sqrtPSD(v, s.w1, s.w2, s.m) {
		root = &s.m
	}
	for t := 0.0; t <= 1; t += 0.25 {
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				val := 0.0
				switch {
				case i == j:
					val = 1
				case s.free(i, j) && root != nil:
					val = (1 - t) * root.Data[i*n+j] / math.Sqrt(root.Data[i*n+i]*root.Data[j*n+j])
				}
				s.x.Data[i*n+j] = val
			}
		}
		blas.Copy(s.u, s.x)
		if blas.Cholesky(s.u) {
			return
		}
	}
}

// derivatives computes X⁻¹ and M = X⁻¹VX⁻¹ from s.u, s.t (as left by
// objective; s.t is overwritten).
func (s *bandSolver) derivatives() bool {
	blas.Copy(s.xinv, s.u)
	if !blas.CholInverse(s.xinv) {
		return false
	}
	g := inverseGramFactor(s.t, s.u)
	blas.Syrk(gblas.Trans, 1, g, 0, s.m)
	blas.Symmetrize(s.m)
	return true
}

// hess writes P(X⁻¹DM + MDX⁻¹) into out. D is supported on the band, so
// with column blocks of width b only three block columns of X⁻¹ meet each
// block column of D, and only the three block diagonals of (X⁻¹D)·M around
// the band are needed: about 12·n²·b flops in GEMMs instead of two n×n
// products (4·n³).
func (s *bandSolver) hess(d, out blas.General) {
	n, bw := s.n, s.bw
	if 3*bw >= n {
		blas.Gemm(gblas.NoTrans, gblas.NoTrans, 1, s.xinv, d, 0, s.w1)
		blas.Gemm(gblas.NoTrans, gblas.NoTrans, 1, s.w1, s.m, 0, s.w2)
	} else {
		for j0 := 0; j0 < n; j0 += bw {
			jw := min(bw, n-j0)
			lo, hi := max(0, j0-bw), min(n, j0+2*bw)
			p := blas.General{Rows: n, Cols: hi - lo, Stride: n, Data: s.xinv.Data[lo:]}
			dd := blas.General{Rows: hi - lo, Cols: jw, Stride: n, Data: d.Data[lo*n+j0:]}
			w := blas.General{Rows: n, Cols: jw, Stride: n, Data: s.w1.Data[j0:]}
			blas.Gemm(gblas.NoTrans, gblas.NoTrans, 1, p, dd, 0, w)
		}
		for i0 := 0; i0 < n; i0 += bw {
			iw := min(bw, n-i0)
			lo, hi := max(0, i0-bw), min(n, i0+2*bw)
			w := blas.General{Rows: iw, Cols: n, Stride: n, Data: s.w1.Data[i0*n:]}
			m := blas.General{Rows: n, Cols: hi - lo, Stride: n, Data: s.m.Data[lo:]}
			y := blas.General{Rows: iw, Cols: hi - lo, Stride: n, Data: s.w2.Data[i0*n+lo:]}
			blas.Gemm(gblas.NoTrans, gblas.NoTrans, 1, w, m, 0, y)
		}
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			v := 0.0
			if s.free(i, j) {
				v = s.w2.Data[i*n+j] + s.w2.Data[j*n+i]
			}
			out.Data[i*n+j] = v
		}
	}
}

// newtonStep solves H[D] = P(M) into s.d by CG preconditioned with the
// band's column blocks (columnBlocks).
func (s *bandSolver) newtonStep() int {
	n := s.n
	size := n * n
	r := make([]float64, size)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if s.free(i, j) {
				k := i*n + j
				r[k] = s.m.Data[k]
			}
		}
	}
	for k := range s.d.Data {
		s.d.Data[k] = 0
	}
	pc := s.columnBlocks()
	// Truncated Newton: every CG iterate is supported on the band, so
	// even a loose solve is a feasible descent direction, and the forcing
	// term √(relative decrement) (Eisenstat–Walker style) keeps the final
	// steps superlinear. Measured against a fixed 1e-3 forcing: CG products
	// 920 → 140 (prefix n = 128, b = 16), 524 → 182 (n = 256, b = 32),
	// 5999 → 1156 (momentum 0.9, n = 128, b = 16).
	eta := 0.1
	if s.lastRel > 0 {
		eta = math.Min(0.1, math.Max(1e-10, math.Sqrt(s.lastRel)))
	}
	hess := func(p, hp []float64) {
		s.hess(blas.General{Rows: n, Cols: n, Stride: n, Data: p}, blas.General{Rows: n, Cols: n, Stride: n, Data: hp})
	}
	return pcg(hess, pc.apply, s.d.Data, r, eta, 2000)
}

// bound is the dual bound at the current X from M (see certificate.go).
func (s *bandSolver) bound() (float64, bool) {
	n := s.n
	lam := blas.NewSquare(n)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if !s.free(i, j) {
				lam.Data[i*n+j] = s.m.Data[i*n+j]
			}
		}
		y[i] = s.m.Data[i*n+i]
	}
	tmp := blas.NewSquare(n)
	blas.Copy(tmp, lam)
	mu := make([]float64, n)
	if !blas.SymEig(tmp, mu, false) {
		return 0, false
	}
	scale := mu[n-1]
	shift := 0.0
	if mu[0] < 1e-13*scale {
		shift = 1e-13*scale - mu[0]
	}
	for try := 0; try < 20; try++ {
		blas.Copy(tmp, lam)
		for i := 0; i < n; i++ {
			tmp.Data[i*n+i] += shift
		}
		if blas.Cholesky(tmp) { // Λ = UᵀU: F·Uᵀ has the singular values of Λ^{1/2}F ᵀ…
			yy := make([]float64, n)
			for i := range y {
				yy[i] = y[i] + shift
			}
			fr := blas.NewSquare(n)
			blas.Copy(fr, s.f)
			blas.Trmm(gblas.Right, gblas.Upper, gblas.Trans, gblas.NonUnit, 1, tmp, fr)
			return nuclearBound(fr, yy)
		}
		shift = 2*shift + 1e-13*scale
	}
	return 0, false
}

func (s *bandSolver) iterate(ctx context.Context, res *Result) error {
	tol := s.opt.tol()
	obj, ok := objective(s.f, s.x, s.u, s.t)
	if !ok {
		return errNotDefinite
	}
	res.Objective, res.LowerBound = obj, math.Inf(-1)
	t0 := time.Now()
	tick := func(name string) { now := time.Now(); s.phases[name] += now.Sub(t0).Seconds(); t0 = now }
	stalled := false
	for it := 1; it <= s.opt.maxIter(); it++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !s.derivatives() {
			return errNotDefinite
		}
		tick("derivatives")
		res.CGSteps += s.newtonStep()
		tick("system")
		slope := dot(s.d.Data, s.m.Data) // −F'(X)[D] = ⟨M, D⟩
		s.lastRel = 0.5 * slope / obj
		if s.lastRel < 0.1*tol {
			if b, ok := s.bound(); ok && b > res.LowerBound {
				res.LowerBound = b
			}
			tick("certificate")
			if (obj-res.LowerBound)/obj <= tol {
				res.Iterations, res.Status = it-1, status.Converged
				return nil
			}
		}
		obj, ok = s.lineSearch(obj, slope)
		tick("line-search")
		res.Iterations, res.Objective = it, obj
		if s.opt != nil && s.opt.Progress != nil {
			s.opt.Progress(progress.Event{Stage: "mf", Step: it, Inner: res.CGSteps, Objective: obj,
				Bound: res.LowerBound, Gap: (obj - res.LowerBound) / obj, Note: "banded"})
		}
		if !ok {
			stalled = true
			break
		}
	}
	if !s.derivatives() {
		return errNotDefinite
	}
	if b, ok := s.bound(); ok && b > res.LowerBound {
		res.LowerBound = b
	}
	res.Status = unconverged(stalled)
	if (res.Objective-res.LowerBound)/res.Objective <= tol {
		res.Status = status.Converged
	}
	return nil
}

func (s *bandSolver) lineSearch(obj, slope float64) (float64, bool) {
	return lineSearch(s.x, s.d, s.w1, obj, slope, func(x blas.General) (float64, bool) {
		return objective(s.f, x, s.u, s.t)
	})
}

func solveBanded(ctx context.Context, w *Workload, s Schema, opt *Options) (*Result, error) {
	v := symdense.ToGeneral(w.V)
	f, ok := upperFactor(v)
	if !ok {
		return nil, fmt.Errorf("mf: factoring V failed")
	}
	bs := newBandSolver(f, s.bands(), opt)
	bs.start(v)
	res := &Result{}
	err := bs.iterate(ctx, res)
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return nil, err
	}
	if err != nil {
		res.Status = status.Cancelled
	}
	res.X = symdense.ToSym(bs.x)
	res.Phases = bs.phases
	// The objective per unit noise scales by sens², which Solve reports;
	// the optimization itself is at unit diagonal.
	return res, err
}
