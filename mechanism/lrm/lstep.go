package lrm

import (
	"context"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// lStep is the accelerated projected-gradient method (FISTA, Beck & Teboulle
// 2009) for the L-subproblem min g(L) over L with every column in the ball,
// with a backtracking estimate of the Lipschitz constant and a monotone
// restart (momentum is dropped whenever a step would increase g, as g is not
// convex in L).
type lStep struct {
	ball    ball
	lip     float64    // current inverse-step estimate, carried across calls
	x, y    *mat.Dense // iterate and extrapolated point (n×r, L transposed)
	xn      *mat.Dense // trial point
	g       *mat.Dense // gradient at y
	scratch []float64
	idx     []int
	relTol  float64        // stop when ‖x⁺ − x‖_F ≤ relTol·‖x‖_F
	onStep  func(done int) // if set, called before every L-step but the first with the steps done
}

func newLStep(n, r int, ball ball) *lStep {
	return &lStep{
		ball:    ball,
		x:       mat.NewDense(n, r, nil),
		y:       mat.NewDense(n, r, nil),
		xn:      mat.NewDense(n, r, nil),
		g:       mat.NewDense(n, r, nil),
		scratch: make([]float64, r),
		idx:     make([]int, r),
		relTol:  1e-7,
	}
}

// project maps every row of a (n×r), a column of L, onto the ball.
func (s *lStep) project(a *mat.Dense) {
	n, _ := a.Dims()
	for j := 0; j < n; j++ {
		row := a.RawRowView(j)
		if s.ball == l1 {
			projectL1(row, s.idx)
		} else {
			ProjectL2(row)
		}
	}
}

// run performs at most iters L-steps starting from lt, which it overwrites
// with the result; it returns the number of steps taken.
func (s *lStep) run(ctx context.Context, vp *varpro, lt *mat.Dense, iters int) (int, error) {
	s.x.Copy(lt)
	s.y.Copy(lt)
	fy, err := vp.eval(s.y, s.g)
	if err != nil {
		return 0, err
	}
	fx := fy
	t := 1.0
	done := 0
	for done < iters {
		if err := ctx.Err(); err != nil {
			return done, err
		}
		if s.onStep != nil && done > 0 {
			s.onStep(done)
		}
		done++
		fn, err := s.proxStep(vp, fy)
		if err != nil {
			return done, err
		}
		if fn > fx {
			// Not a descent step from x: restart the momentum at x.
			t = 1
			if mat.Equal(s.y, s.x) {
				break // no progress possible at this step size
			}
			s.y.Copy(s.x)
			fy, err = vp.eval(s.y, s.g)
			if err != nil {
				return done, err
			}
			continue
		}
		tn := (1 + math.Sqrt(1+4*t*t)) / 2
		mom := (t - 1) / tn
		// y = x⁺ + mom·(x⁺ − x); x = x⁺.
		var chg, nx float64
		n, _ := s.xn.Dims()
		for j := 0; j < n; j++ {
			xr, xnr, yr := s.x.RawRowView(j), s.xn.RawRowView(j), s.y.RawRowView(j)
			for i := range xr {
				d := xnr[i] - xr[i]
				chg += d * d
				nx += xnr[i] * xnr[i]
				yr[i] = xnr[i] + mom*d
				xr[i] = xnr[i]
			}
		}
		fx = fn
		t = tn
		if chg <= s.relTol*s.relTol*nx {
			break
		}
		fy, err = vp.eval(s.y, s.g)
		if err != nil {
			return done, err
		}
		s.lip *= 0.9
	}
	lt.Copy(s.x)
	return done, nil
}

// proxStep sets xn = P(y − ∇g(y)/lip), doubling lip (at most 60 times)
// until the sufficient-decrease condition
// g(x⁺) ≤ g(y) + ⟨∇g(y), d⟩ + lip/2·‖d‖² holds, and returns g(x⁺); fy is
// g(y), whose gradient is in s.g.
func (s *lStep) proxStep(vp *varpro, fy float64) (float64, error) {
	for tries := 0; ; tries++ {
		// x⁺ = P(y − ∇g(y)/lip).
		s.xn.Copy(s.y)
		axpy(s.xn, -1/s.lip, s.g)
		s.project(s.xn)
		fn, err := vp.eval(s.xn, nil)
		if err != nil {
			return fn, err
		}
		// Sufficient decrease: g(x⁺) ≤ g(y) + ⟨∇g(y), d⟩ + lip/2·‖d‖².
		var lin, sq float64
		n, _ := s.xn.Dims()
		for j := 0; j < n; j++ {
			xr, yr, gr := s.xn.RawRowView(j), s.y.RawRowView(j), s.g.RawRowView(j)
			for i := range xr {
				d := xr[i] - yr[i]
				lin += gr[i] * d
				sq += d * d
			}
		}
		if fn <= fy+lin+s.lip/2*sq+1e-14*math.Abs(fy) || tries >= 60 {
			return fn, nil
		}
		s.lip *= 2
	}
}

// axpy sets dst += alpha·x for equally shaped, contiguously stored matrices.
func axpy(dst *mat.Dense, alpha float64, x *mat.Dense) {
	d, xr := dst.RawMatrix(), x.RawMatrix()
	if d.Stride != d.Cols || xr.Stride != xr.Cols || d.Rows != xr.Rows || d.Cols != xr.Cols {
		panic("lrm: axpy needs equally shaped contiguous matrices")
	}
	floats.AddScaled(d.Data, alpha, xr.Data)
}
