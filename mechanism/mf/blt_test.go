package mf

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// denseToeplitz materializes the lower-triangular Toeplitz matrix with
// coefficients c (len(c) ≤ n: banded).
func denseToeplitz(c []float64, n int) *mat.TriDense {
	m := mat.NewTriDense(n, mat.Lower, nil)
	for i := 0; i < n; i++ {
		for j := max(0, i-len(c)+1); j <= i; j++ {
			m.SetTri(i, j, c[i-j])
		}
	}
	return m
}

// The BLT's inverse coefficients (from the partial-fraction residues of
// the swapped decays) equal the first column of the dense inverse of the
// materialized C to 1e-12 (n = 40; the inverse's entries are O(1), and the
// dense triangular inverse is backward stable).
func TestBLTInverseDense(t *testing.T) {
	b, err := NewBLT([]float64{0.99, 0.8, 0.3}, []float64{0.95, 0.6, 0.1})
	if err != nil {
		t.Fatal(err)
	}
	const n = 40
	c := denseToeplitz(b.Coefs(n), n)
	var inv mat.TriDense
	if err := inv.InverseTri(c); err != nil {
		t.Fatal(err)
	}
	r := b.InverseCoefs(n)
	for i := 0; i < n; i++ {
		if d := math.Abs(inv.At(i, 0) - r[i]); d > 1e-12 {
			t.Fatalf("inverse coefficient %d: BLT %v, dense %v", i, r[i], inv.At(i, 0))
		}
	}
	for _, w := range b.Omega {
		if w < 0 {
			t.Fatalf("interlaced decays gave a negative scale %v", w)
		}
	}
	r2, err := InverseSeries(b.Coefs(n), n)
	if err != nil {
		t.Fatal(err)
	}
	for i := range r2 {
		if math.Abs(r2[i]-r[i]) > 1e-12 {
			t.Fatalf("forward substitution %d: %v, BLT %v", i, r2[i], r[i])
		}
	}
}

// bruteMinSep is max over patterns with separation ≥ b and at most k uses
// of ‖Σ_{i∈π} C e_i‖² (X = CᵀC non-negative: aligned gradients are worst),
// enumerated by depth-first search.
func bruteMinSep(x *mat.SymDense, b, k int) float64 {
	n := x.SymmetricDim()
	best := 0.0
	var rec func(pat []int)
	rec = func(pat []int) {
		s := 0.0
		for _, i := range pat {
			for _, j := range pat {
				s += x.At(i, j)
			}
		}
		best = math.Max(best, s)
		if len(pat) == k {
			return
		}
		from := 0
		if len(pat) > 0 {
			from = pat[len(pat)-1] + b
		}
		for i := from; i < n; i++ {
			rec(append(pat, i))
		}
	}
	rec(nil)
	return best
}

// Per-step errors, mean, max and sensitivity of a BLT and a banded
// Toeplitz strategy against dense computation: Evaluate on the
// materialized C (triangular solves) for the errors, brute force over
// every min-separation pattern and the dense fixed-epoch sensitivity for
// sens². Tolerance 1e-10 relative: both are sums of O(n²) positive terms
// of size O(1) at n = 18.
func TestToeplitzEvaluateDense(t *testing.T) {
	const n = 18
	blt, err := NewBLT([]float64{0.97, 0.7}, []float64{0.9, 0.4})
	if err != nil {
		t.Fatal(err)
	}
	strategies := map[string][]float64{
		"blt":    blt.Coefs(n),
		"banded": {1, 0.6, 0.45, 0.3, 0.1},
	}
	for name, c := range strategies {
		full := make([]float64, n)
		copy(full, c)
		r, err := InverseSeries(c, n)
		if err != nil {
			t.Fatal(err)
		}
		cm := denseToeplitz(c, n)
		var x mat.SymDense
		x.SymOuterK(1, cm.T())
		for _, beta := range []float64{0, 0.8} {
			tw := ToeplitzWorkload{Beta: beta}
			dw, _ := Momentum(n, beta, nil)
			dev, err := Evaluate(dw, cm, Schema{Kind: Single})
			if err != nil {
				t.Fatal(err)
			}
			s1 := dev.Sensitivity.Squared // dense errors are at the single-participation sens²
			for _, s := range []Schema{{Kind: Single}, {Kind: FixedEpoch, Epochs: 3}, {Kind: MinSep, MinSep: 5, Epochs: 3}, {Kind: MinSep, MinSep: 4}} {
				ev, err := EvaluateToeplitz(tw, full, r, s, true)
				if err != nil {
					t.Fatal(err)
				}
				for i := range ev.PerStep {
					if !close(ev.PerStep[i]*s1, dev.PerStep[i], 1e-10) {
						t.Fatalf("%s β=%g step %d: %v, dense %v", name, beta, i, ev.PerStep[i], dev.PerStep[i])
					}
				}
				if !close(ev.Mean*s1, dev.Mean, 1e-10) || !close(ev.Max*s1, dev.Max, 1e-10) {
					t.Fatalf("%s: mean/max %v %v, dense %v %v", name, ev.Mean, ev.Max, dev.Mean, dev.Max)
				}
				var want float64
				switch s.Kind {
				case Single:
					want = bruteMinSep(&x, n, 1)
				case FixedEpoch:
					ds, err := StrategySensitivity(&x, s)
					if err != nil {
						t.Fatal(err)
					}
					want = ds.Squared
				case MinSep:
					want = bruteMinSep(&x, s.MinSep, s.Participations(n))
				}
				if !close(ev.Sensitivity.Squared, want, 1e-10) {
					t.Fatalf("%s %v: sens² %v, brute force %v", name, s, ev.Sensitivity.Squared, want)
				}
			}
		}
	}
	// Increasing coefficients are refused, not scored.
	if _, err := ToeplitzSensitivity([]float64{1, 0.5, 0.7, 0}, Schema{Kind: Single}); err == nil {
		t.Fatal("increasing coefficients accepted")
	}
	if _, err := ToeplitzSensitivity([]float64{1, -0.1, 0}, Schema{Kind: Single}); err == nil {
		t.Fatal("negative coefficients accepted")
	}
}

func close(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(math.Abs(a), math.Abs(b)) }

// The optimizer's closed forms (sensJet, prefixErrJet) against the O(n)
// sums with hand-carried derivatives (sensDerivs, errDerivs) and against
// EvaluateToeplitz's plain sums, in all three branches of the geometric
// sums (n·u < 1e-3: decays within 1e-9 of 1; u > 1/2; between). Values to
// 1e-10 relative (sums of n ≤ 10⁴ positive terms), gradients to 1e-7.
func TestBLTClosedForms(t *testing.T) {
	cases := []struct {
		n     int
		a     []float64 // −log(1 − x), decreasing
		b, k  int
		label string
	}{
		{2052, coldStart(2052, 2), 342, 6, "cold"},
		{1000, []float64{25, 21, 3, 0.2}, 100, 4, "near 1 and far"},
		{100000, []float64{200, 150, 9, 4}, 10000, 10, "at the cap"},
		{10000, []float64{9, 7, 5, 3, 1.5, 0.3}, 10000, 1, "single"},
	}
	for _, c := range cases {
		q := aToQ(c.a)
		z, m := zJets(q)
		d := len(c.a) / 2
		vals := make([]float64, 4*d)
		for i := range z {
			vals[i] = z[i].v
		}
		mt, mi := make([]jet, d), make([]jet, d)
		for i := 0; i < d; i++ {
			mt[i], mi[i] = m[2*i], m[2*i+1]
		}
		sv, sg, _ := sensDerivs(vals[:d], vals[d:2*d], c.n, c.k, c.b)
		S := sensJet(mt, z[d:2*d], c.n, c.k, c.b)
		Sc := chainJet(sv, sg, make([]float64, 4*d*d), z[:2*d])
		for _, max := range []bool{false, true} {
			w := func(j int) float64 { return float64(c.n-j) / float64(c.n) }
			if max {
				w = func(int) float64 { return 1 }
			}
			ev, eg, _ := errDerivs(vals[2*d:3*d], vals[3*d:], c.n, 0, w)
			E := prefixErrJet(mt, mi, z[3*d:], c.n, max)
			Ec := chainJet(ev, eg, make([]float64, 4*d*d), z[2*d:])
			if !close(S.v, sv, 1e-10) || !close(E.v, ev, 1e-10) {
				t.Fatalf("%s max=%v: closed S %v E %v, sums %v %v", c.label, max, S.v, E.v, sv, ev)
			}
			for i := range q {
				if math.Abs(S.g[i]-Sc.g[i]) > 1e-7*math.Abs(sv) || math.Abs(E.g[i]-Ec.g[i]) > 1e-7*math.Abs(ev) {
					t.Fatalf("%s: gradient %d: S %v vs %v, E %v vs %v", c.label, i, S.g[i], Sc.g[i], E.g[i], Ec.g[i])
				}
			}
		}
		blt, err := newBLTComplement(decaysOf(c.a))
		if err != nil {
			t.Fatal(err)
		}
		s := Schema{Kind: MinSep, MinSep: c.b, Epochs: c.k}
		tev, err := blt.Evaluate(ToeplitzWorkload{}, c.n, s, false)
		if err != nil {
			t.Fatal(err)
		}
		E := prefixErrJet(mt, mi, z[3*d:], c.n, false)
		if !close(tev.Sensitivity.Squared, S.v, 1e-9) || !close(tev.Mean, E.v, 1e-9) {
			t.Fatalf("%s: EvaluateToeplitz sens² %v mean %v, closed forms %v %v", c.label, tev.Sensitivity.Squared, tev.Mean, S.v, E.v)
		}
	}
}

// The loss's exact gradient and Hessian in q against central differences
// of the loss and of the gradient (step 1e-5: truncation ~1e-10 and
// rounding ~1e-11 relative, so 1e-6 relative to the largest entry).
func TestBLTDerivatives(t *testing.T) {
	for _, beta := range []float64{0, 0.7} {
		for _, max := range []bool{false, true} {
			l := &bltLoss{w: ToeplitzWorkload{Beta: beta}, n: 600, s: Schema{Kind: MinSep, MinSep: 100, Epochs: 4}, max: max}
			q := aToQ([]float64{6, 4.5, 2.2, 0.9, 0.5, 0.2})
			f0, g, h := l.eval(q, true)
			if fv, _, _ := l.eval(q, false); !close(fv, f0, 1e-13) {
				t.Fatalf("β=%g: value-only loss %v, with derivatives %v", beta, fv, f0)
			}
			scale := 0.0
			for i := range q {
				scale = math.Max(scale, math.Abs(g[i]))
				for j := range q {
					scale = math.Max(scale, math.Abs(h.At(i, j)))
				}
			}
			const step = 1e-5
			for i := range q {
				qp := append([]float64(nil), q...)
				qm := append([]float64(nil), q...)
				qp[i] += step
				qm[i] -= step
				fp, gp, _ := l.eval(qp, true)
				fm, gm, _ := l.eval(qm, true)
				if d := math.Abs((fp-fm)/(2*step) - g[i]); d > 1e-6*scale {
					t.Fatalf("β=%g max=%v: ∂f/∂q%d %v, differences %v", beta, max, i, g[i], (fp-fm)/(2*step))
				}
				for j := range q {
					if d := math.Abs((gp[j]-gm[j])/(2*step) - h.At(i, j)); d > 1e-6*scale {
						t.Fatalf("β=%g max=%v: H[%d,%d] %v, differences %v", beta, max, i, j, h.At(i, j), (gp[j]-gm[j])/(2*step))
					}
				}
			}
		}
	}
}

// OptimizeBLT reaches the reference optimizer's losses (jax_privacy's
// algorithm, ported as bench/peers/blt_ref.py, both stopping at 2 buffers
// by the 1% rule; bench/results/mf-structured-2026-12-03.md: n = 2052,
// sep 342, k = 6: 84.322932; n = 10⁴, sep 1000, k = 10: 212.68159, the
// issue's 84.32 and 212.7) up to half a unit in the last quoted digit
// (ulp), and its reported loss is the independent O(n) evaluation of the
// BLT it returns (1e-9).
func TestOptimizeBLTReference(t *testing.T) {
	for _, c := range []struct {
		n, b, k  int
		ref, ulp float64
	}{{2052, 342, 6, 84.322932, 1e-6}, {10000, 1000, 10, 212.68159, 1e-5}} {
		s := Schema{Kind: MinSep, MinSep: c.b, Epochs: c.k}
		r, err := OptimizeBLT(context.Background(), ToeplitzWorkload{Name: "prefix"}, c.n, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := r.BLT.Evaluate(ToeplitzWorkload{}, c.n, s, false)
		if err != nil {
			t.Fatal(err)
		}
		if !close(ev.MeanLoss, r.Loss, 1e-9) {
			t.Fatalf("n = %d: optimizer loss %v, evaluation %v", c.n, r.Loss, ev.MeanLoss)
		}
		if r.Loss > c.ref+c.ulp/2 {
			t.Fatalf("n = %d: loss %v above the reference's %v", c.n, r.Loss, c.ref)
		}
	}
}

// OptimizeBandedToeplitz at the banded size (n = 2052, sep 342,
// k = 6, b = 64; the reference optimizer's loss 160.6, quoted to 4
// digits, so 160.65 is its upper end): its loss is the independent
// evaluation of its coefficients (1e-9), below the (1 − z)^(−1/2) start's,
// and its coefficients positive and non-increasing.
func TestOptimizeBandedToeplitz(t *testing.T) {
	const n, b = 2052, 64
	s := Schema{Kind: MinSep, MinSep: 342, Epochs: 6}
	r, err := OptimizeBandedToeplitz(context.Background(), ToeplitzWorkload{}, n, b, s, false)
	if err != nil {
		t.Fatal(err)
	}
	score := func(c []float64) float64 {
		full := make([]float64, n)
		copy(full, c)
		inv, _ := InverseSeries(c, n)
		ev, err := EvaluateToeplitz(ToeplitzWorkload{}, full, inv, s, false)
		if err != nil {
			t.Fatal(err)
		}
		return ev.MeanLoss
	}
	if got := score(r.Coefs); !close(got, r.Loss, 1e-9) {
		t.Fatalf("optimizer loss %v, evaluation %v", r.Loss, got)
	}
	if start := score(SqrtBands(b, n)); r.Loss >= start || r.Loss > 160.65 {
		t.Fatalf("loss %v: start %v, reference 160.6", r.Loss, start)
	}
}

// OptimizeBLT's buffer rule is the documented one: each kept buffer after
// the first lowered the loss by at least MinGain (relative), the buffer
// tried after the last kept one (if any, below MaxBuffers) gained less and
// is not in the result, and the result's loss is the kept count's. On
// momentum 0.9 at n = 2052 (sep 342, k = 6) a third buffer gains nothing
// to 8 digits (bench/results/mf-structured-2026-12-03.md), so 2 are kept;
// at a 50% threshold the prefix case keeps 1.
func TestOptimizeBLTBufferRule(t *testing.T) {
	s := Schema{Kind: MinSep, MinSep: 342, Epochs: 6}
	for _, c := range []struct {
		w    ToeplitzWorkload
		gain float64
		want int
	}{
		{ToeplitzWorkload{Name: "momentum:0.9", Beta: 0.9}, 0, 2},
		{ToeplitzWorkload{Name: "prefix"}, 0.5, 1},
		{ToeplitzWorkload{Name: "prefix"}, 0, 0},
	} {
		r, err := OptimizeBLT(context.Background(), c.w, 2052, s, &BLTOptions{MinGain: c.gain})
		if err != nil {
			t.Fatal(err)
		}
		gain := c.gain
		if gain == 0 {
			gain = 0.01
		}
		d := r.BLT.Buffers()
		if c.want != 0 && d != c.want {
			t.Fatalf("%s, gain %v: %d buffers kept, want %d (losses %v)", c.w.Name, gain, d, c.want, r.Losses)
		}
		if r.Loss != r.Losses[d-1] {
			t.Fatalf("%s: loss %v is not the %d-buffer loss %v", c.w.Name, r.Loss, d, r.Losses[d-1])
		}
		for i := 1; i < d; i++ {
			if r.Losses[i] > r.Losses[i-1]*(1-gain) {
				t.Fatalf("%s: buffer %d kept with gain %.3g%% < %v%%", c.w.Name, i+1, 100*(1-r.Losses[i]/r.Losses[i-1]), 100*gain)
			}
		}
		if len(r.Losses) > d && r.Losses[d] <= r.Losses[d-1]*(1-gain) {
			t.Fatalf("%s: buffer %d gained %.3g%% ≥ %v%% but was dropped", c.w.Name, d+1, 100*(1-r.Losses[d]/r.Losses[d-1]), 100*gain)
		}
		if len(r.Losses) > d+1 {
			t.Fatalf("%s: %d buffer counts tried, %d kept: the search went on past a rejected buffer", c.w.Name, len(r.Losses), d)
		}
	}
}
