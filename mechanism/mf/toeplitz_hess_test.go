package mf

import (
	"context"
	"math"
	"testing"
)

// bandedLoss's gradient against central differences of its value, and its
// Hessian against central differences of its gradient, at a non-increasing
// point off the start (n = 97, b = 9, sep 20, k = 4; prefix and momentum,
// mean and max). h = 1e-5 on O(1) coefficients: the differences' truncation
// error is O(h²·F‴) ≈ 1e-10 and their rounding O(1e-16/h) ≈ 1e-11, so 1e-6
// relative to the largest entry leaves room and still catches any wrong
// term (each is O(1)).
func TestBandedLossDerivatives(t *testing.T) {
	const n, b = 97, 9
	s := Schema{Kind: MinSep, MinSep: 20, Epochs: 4}
	c := SqrtBands(b, n)
	for j := 1; j < b; j++ {
		c[j] *= 1 - 0.02*float64(j%3)
	}
	for _, w := range []ToeplitzWorkload{{Name: "prefix"}, {Name: "momentum:0.7", Beta: 0.7}} {
		for _, max := range []bool{false, true} {
			l := newBandedLoss(w, n, b, s, max)
			f, g, h := l.eval(c, true)
			// The value against the independent evaluation.
			full := make([]float64, n)
			copy(full, c)
			inv, _ := InverseSeries(c, n)
			ev, err := EvaluateToeplitz(w, full, inv, s, false)
			if err != nil {
				t.Fatal(err)
			}
			want := ev.MeanLoss
			if max {
				want = ev.MaxLoss
			}
			if !close(math.Exp(f), want, 1e-12) {
				t.Fatalf("%s max=%v: loss %v, evaluation %v", w.Name, max, math.Exp(f), want)
			}
			const hstep = 1e-5
			gmax, hmax := 0.0, 0.0
			for m := 0; m < b; m++ {
				gmax = math.Max(gmax, math.Abs(g[m]))
				for k := 0; k < b; k++ {
					hmax = math.Max(hmax, math.Abs(h[m*b+k]))
				}
			}
			cp := append([]float64(nil), c...)
			for m := 0; m < b; m++ {
				cp[m] = c[m] + hstep
				fp, gp, _ := l.eval(cp, true)
				cp[m] = c[m] - hstep
				fm, gm, _ := l.eval(cp, true)
				cp[m] = c[m]
				if fd := (fp - fm) / (2 * hstep); math.Abs(fd-g[m]) > 1e-6*gmax {
					t.Fatalf("%s max=%v: ∂F/∂c%d = %v, differences %v", w.Name, max, m, g[m], fd)
				}
				for k := 0; k < b; k++ {
					if fd := (gp[k] - gm[k]) / (2 * hstep); math.Abs(fd-h[k*b+m]) > 1e-6*hmax {
						t.Fatalf("%s max=%v: ∂²F/∂c%d∂c%d = %v, differences of the gradient %v", w.Name, max, k, m, h[k*b+m], fd)
					}
				}
			}
		}
	}
}

// The projected Newton optimizer against the previous L-BFGS one (run to
// its 1e-10 gradient tolerance): on each case its loss is at most the
// L-BFGS loss (1e-10 relative: both are converged to about that), its
// reported loss is the independent evaluation of its coefficients, its
// coefficients are non-negative and non-increasing with c₀ = 1, and the
// KKT conditions hold in the drops eⱼ = cⱼ − cⱼ₊₁ ≥ 0 (e_{b−1} = c_{b−1}):
// the gradient of log(loss) is 0 (to 1e-6 of its largest entry at the
// start: the decrement tolerance 1e-14 with O(1) curvature leaves ~1e-7)
// where eⱼ > 0, and ≥ −that where eⱼ = 0. The last case has separation 8
// below its 12 bands: its optimum has zero trailing coefficients (active
// bounds). At the size (n = 2052, sep 342, k = 6, 64 bands) the
// loss is also at most the reference peer's 160.60664 (8 digits, bench/
// results/mf-structured-2026-12-03.md) plus half a unit.
func TestOptimizeBandedToeplitzNewton(t *testing.T) {
	cases := []struct {
		w       ToeplitzWorkload
		n, b    int
		s       Schema
		max     bool
		ref     float64
		refUlps float64
	}{
		{ToeplitzWorkload{Name: "prefix"}, 2052, 64, Schema{Kind: MinSep, MinSep: 342, Epochs: 6}, false, 160.60664, 1e-5},
		{ToeplitzWorkload{Name: "prefix"}, 300, 16, Schema{Kind: MinSep, MinSep: 50, Epochs: 5}, false, 0, 0},
		{ToeplitzWorkload{Name: "momentum:0.9", Beta: 0.9}, 500, 24, Schema{Kind: MinSep, MinSep: 100, Epochs: 4}, false, 0, 0},
		{ToeplitzWorkload{Name: "prefix"}, 400, 12, Schema{Kind: MinSep, MinSep: 8, Epochs: 20}, true, 0, 0},
	}
	for _, c := range cases {
		ctx := context.Background()
		nw, err := OptimizeBandedToeplitz(ctx, c.w, c.n, c.b, c.s, c.max)
		if err != nil {
			t.Fatal(err)
		}
		old, err := optimizeBandedToeplitzLBFGS(ctx, c.w, c.n, c.b, c.s, c.max)
		if err != nil {
			t.Fatal(err)
		}
		name := c.w.Name
		if nw.Loss > old.Loss*(1+1e-10) {
			t.Fatalf("%s n=%d b=%d: Newton loss %.12g above L-BFGS %.12g", name, c.n, c.b, nw.Loss, old.Loss)
		}
		if c.ref > 0 && nw.Loss > c.ref+c.refUlps/2 {
			t.Fatalf("%s n=%d: loss %.10g above the peer's %v", name, c.n, nw.Loss, c.ref)
		}
		full := make([]float64, c.n)
		copy(full, nw.Coefs)
		inv, _ := InverseSeries(nw.Coefs, c.n)
		ev, err := EvaluateToeplitz(c.w, full, inv, c.s, false)
		if err != nil {
			t.Fatal(err)
		}
		got := ev.MeanLoss
		if c.max {
			got = ev.MaxLoss
		}
		if !close(got, nw.Loss, 1e-12) {
			t.Fatalf("%s: reported loss %v, evaluation %v", name, nw.Loss, got)
		}
		l := newBandedLoss(c.w, c.n, c.b, c.s, c.max)
		_, g0, h := l.eval(SqrtBands(c.b, c.n), true)
		ge0, he := make([]float64, c.b), make([]float64, c.b*c.b)
		bandedToDrops(g0, h, c.b, ge0, he)
		_, g, h := l.eval(nw.Coefs, true)
		ge := make([]float64, c.b)
		bandedToDrops(g, h, c.b, ge, he)
		scale := 0.0
		for _, v := range ge0 {
			scale = math.Max(scale, math.Abs(v))
		}
		tol := 1e-6 * scale
		if nw.Coefs[0] != 1 || nw.Coefs[c.b-1] < 0 {
			t.Fatalf("%s: coefficients %v … %v", name, nw.Coefs[0], nw.Coefs[c.b-1])
		}
		atBound := 0
		for j := 0; j < c.b; j++ {
			d := nw.Coefs[j]
			if j+1 < c.b {
				d -= nw.Coefs[j+1]
			}
			switch {
			case d < 0:
				t.Fatalf("%s: coefficients increase (or turn negative) after %d", name, j)
			case d == 0:
				atBound++
				if ge[j] < -tol {
					t.Fatalf("%s: drop %d = 0 with gradient %v < 0 (KKT)", name, j, ge[j])
				}
			default:
				if math.Abs(ge[j]) > tol {
					t.Fatalf("%s: drop %d = %v > 0 with gradient %v (KKT, tolerance %v)", name, j, d, ge[j], tol)
				}
			}
		}
		t.Logf("%s n=%d b=%d max=%v: Newton %.12g (%d it, %.3f s), L-BFGS %.12g (%d it, %.3f s), %d drops at 0",
			name, c.n, c.b, c.max, nw.Loss, nw.Iterations, nw.Seconds, old.Loss, old.Iterations, old.Seconds, atBound)
	}
}

// A sweep of small cases (n = 200; 2, 5 and 20 bands; separation 7, 50
// and 200 (single participation); 1 or 3 uses; prefix and momentum 0.95;
// mean and max): the Newton optimizer never ends above the L-BFGS one by
// more than 1e-10 relative (both converge to ~1e-12 here; a run with
// n up to 1000 and 240 cases found at most 5e-14), and never runs to its
// iteration cap.
func TestOptimizeBandedToeplitzSweep(t *testing.T) {
	ctx := context.Background()
	const n = 200
	for _, b := range []int{2, 5, 20} {
		for _, sep := range []int{7, 50, 200} {
			for _, k := range []int{1, 3} {
				for _, w := range []ToeplitzWorkload{{Name: "prefix"}, {Name: "momentum:0.95", Beta: 0.95}} {
					for _, mx := range []bool{false, true} {
						s := Schema{Kind: MinSep, MinSep: sep, Epochs: k}
						nw, err := OptimizeBandedToeplitz(ctx, w, n, b, s, mx)
						if err != nil {
							t.Fatal(err)
						}
						old, err := optimizeBandedToeplitzLBFGS(ctx, w, n, b, s, mx)
						if err != nil {
							t.Fatal(err)
						}
						if nw.Loss > old.Loss*(1+1e-10) || nw.Iterations >= 200 {
							t.Errorf("b %d sep %d k %d %s max %v: Newton %.12g (%d it), L-BFGS %.12g", b, sep, k, w.Name, mx, nw.Loss, nw.Iterations, old.Loss)
						}
					}
				}
			}
		}
	}
}

// Above newtonMaxBands the L-BFGS method runs (O(n + bands) memory): with
// the threshold lowered to 8 (the real 1024 makes a case take half a
// minute), 12 bands at n = 200 (sep 50, k = 3) give exactly that method's
// result, non-negative and non-increasing, and 8 bands the Newton one's.
func TestOptimizeBandedToeplitzManyBands(t *testing.T) {
	defer func(v int) { newtonMaxBands = v }(newtonMaxBands)
	newtonMaxBands = 8
	const n = 200
	s := Schema{Kind: MinSep, MinSep: 50, Epochs: 3}
	ctx, w := context.Background(), ToeplitzWorkload{Name: "prefix"}
	for _, b := range []int{8, 12} {
		r, err := OptimizeBandedToeplitz(ctx, w, n, b, s, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Coefs) != b {
			t.Fatalf("%d coefficients, want %d", len(r.Coefs), b)
		}
		for j := 1; j < b; j++ {
			if r.Coefs[j] < 0 || r.Coefs[j] > r.Coefs[j-1] {
				t.Fatalf("coefficient %d: %v after %v", j, r.Coefs[j], r.Coefs[j-1])
			}
		}
		old, err := optimizeBandedToeplitzLBFGS(ctx, w, n, b, s, false)
		if err != nil {
			t.Fatal(err)
		}
		same := r.Loss == old.Loss && r.Iterations == old.Iterations
		if same != (b > 8) {
			t.Fatalf("%d bands: loss %v (%d it), L-BFGS %v (%d it)", b, r.Loss, r.Iterations, old.Loss, old.Iterations)
		}
	}
}
