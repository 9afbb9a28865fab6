package mf

import (
	"context"
	"github.com/dpsolve/dpsolve/status"
	"math"
	"math/rand/v2"
	"os/exec"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/mechanism/sdp"
	"github.com/dpsolve/dpsolve/newton"
)

// denseObjective is tr(V X⁻¹) by gonum's general inverse: independent of
// the package's Cholesky/triangular-solve path.
func denseObjective(t *testing.T, v, x *mat.SymDense) float64 {
	t.Helper()
	var inv mat.Dense
	if err := inv.Inverse(x); err != nil {
		t.Fatal(err)
	}
	var p mat.Dense
	p.Mul(v, &inv)
	return mat.Trace(&p)
}

// Single participation is newton's problem and goes through newton: the same
// value, and for prefix n = 64 the published optimum 282.2014211
// (internal/reference: interior-point SDP).
func TestSingleMatchesNewton(t *testing.T) {
	w, _ := Prefix(64)
	res, err := Solve(context.Background(), w, Schema{Kind: Single}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := newton.Solve(context.Background(), w.V, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := math.Abs(res.Objective-ref.Objective) / ref.Objective; d > 1e-10 {
		t.Errorf("mf single %v, newton %v (rel %.2e)", res.Objective, ref.Objective, d)
	}
	if math.Abs(res.Objective-282.2014211) > 1e-6 {
		t.Errorf("objective %v, published 282.2014211", res.Objective)
	}
	if res.Sensitivity.Squared > 1+1e-12 || res.Gap > 1e-8 {
		t.Errorf("sens² %v gap %v", res.Sensitivity.Squared, res.Gap)
	}
}

// feasibleEpoch returns a random feasible fixed-epoch Gram: off-pattern
// entries from a random factor, pattern entries zeroed, scaled so every
// pattern's diagonal sums to at most 1.
func feasibleEpoch(n, k int, rng *rand.Rand) *mat.SymDense {
	b := n / k
	x := randomGram(n, rng, false, func(i, j int) bool { return i%b != j%b })
	worst := 0.0
	for r := 0; r < b; r++ {
		s := 0.0
		for i := r; i < n; i += b {
			s += x.At(i, i)
		}
		worst = math.Max(worst, s)
	}
	x.ScaleSym(1/worst, x)
	return x
}

// The certified bound never exceeds the objective of any feasible strategy
// (weak duality), checked against the optimum, I/k and random feasible
// Grams, each scored by a dense inverse; the solver's X is feasible.
func TestEpochCertificateBelowFeasible(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct {
		n, k int
		beta float64
	}{{48, 4, 0}, {64, 8, 0.9}, {60, 3, 0.5}} {
		w, _ := Momentum(c.n, c.beta, nil)
		res, err := Solve(context.Background(), w, Schema{Kind: FixedEpoch, Epochs: c.k}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != status.Converged || res.Gap > 1e-8 {
			t.Errorf("%+v: status %s gap %.2e", c, res.Status, res.Gap)
		}
		if s := res.Sensitivity.Squared; s > 1+1e-12 || !res.Sensitivity.Exact {
			t.Errorf("%+v: sens² %v exact %v", c, s, res.Sensitivity.Exact)
		}
		b := c.n / c.k
		for i := 0; i < c.n; i++ {
			for j := 0; j < c.n; j++ {
				if i != j && i%b == j%b && res.X.At(i, j) != 0 {
					t.Fatalf("%+v: X[%d,%d] = %v in one pattern", c, i, j, res.X.At(i, j))
				}
			}
		}
		ident := mat.NewSymDense(c.n, nil)
		for i := 0; i < c.n; i++ {
			ident.SetSym(i, i, 1/float64(c.k))
		}
		cands := []*mat.SymDense{res.X, ident}
		for r := 0; r < 5; r++ {
			cands = append(cands, feasibleEpoch(c.n, c.k, rng))
		}
		for ci, x := range cands {
			if f := denseObjective(t, w.V, x); res.LowerBound > f*(1+1e-12) {
				t.Errorf("%+v: bound %v above feasible candidate %d's objective %v", c, res.LowerBound, ci, f)
			}
		}
		if f := denseObjective(t, w.V, res.X); math.Abs(f-res.Objective) > 1e-9*f {
			t.Errorf("%+v: reported objective %v, dense %v", c, res.Objective, f)
		}
	}
}

// epochSDP writes min tr(Y) s.t. [[X, Fᵀ], [F, Y]] ⪰ 0, Σ_{i∈π_r} X_ii ≤ 1,
// with X's pattern entries off the diagonal absent (zero), for V = FᵀF.
func epochSDP(v *mat.SymDense, k int) (*sdp.Problem, []int) {
	n := v.SymmetricDim()
	b := n / k
	var ch mat.Cholesky
	ch.Factorize(v)
	var u mat.TriDense
	ch.UTo(&u) // V = UᵀU: F = U
	p := &sdp.Problem{Comment: "fixed-epoch DP-MF", Blocks: []int{2 * n, -b}}
	xvar := make([]int, n*n) // variable index of X_ij, i ≤ j (0: absent)
	m := 0
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			if i != j && i%b == j%b {
				continue
			}
			m++
			xvar[i*n+j] = m
			p.Entries = append(p.Entries, sdp.Entry{Mat: m, Block: 1, I: i + 1, J: j + 1, Value: 1})
			if i == j {
				p.Entries = append(p.Entries, sdp.Entry{Mat: m, Block: 2, I: i%b + 1, J: i%b + 1, Value: -1})
			}
			p.C = append(p.C, 0)
		}
	}
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			m++
			p.Entries = append(p.Entries, sdp.Entry{Mat: m, Block: 1, I: n + i + 1, J: n + j + 1, Value: 1})
			c := 0.0
			if i == j {
				c = 1
			}
			p.C = append(p.C, c)
		}
	}
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			if f := u.At(i, j); f != 0 { // F at block position (n+i, j): upper entry (j, n+i)
				p.Entries = append(p.Entries, sdp.Entry{Mat: 0, Block: 1, I: j + 1, J: n + i + 1, Value: -f})
			}
		}
	}
	for r := 0; r < b; r++ {
		p.Entries = append(p.Entries, sdp.Entry{Mat: 0, Block: 2, I: r + 1, J: r + 1, Value: -1})
	}
	return p, xvar
}

// CSDP (an interior-point SDP solver, coinor-csdp) on the fixed-epoch SDP
// agrees with the certified optimum: its value lies within its own
// tolerance (1e-7 relative; CSDP stops at relative gap ~1e-8) of ours, and
// never below our certified bound by more than that.
func TestEpochAgreesWithCSDP(t *testing.T) {
	if _, err := exec.LookPath("csdp"); err != nil {
		t.Skip("csdp not installed")
	}
	for _, c := range []struct {
		n, k int
		beta float64
	}{{16, 4, 0}, {18, 3, 0.9}} {
		w, _ := Momentum(c.n, c.beta, nil)
		res, err := Solve(context.Background(), w, Schema{Kind: FixedEpoch, Epochs: c.k}, nil)
		if err != nil {
			t.Fatal(err)
		}
		p, xvar := epochSDP(w.V, c.k)
		out, err := sdp.Solve(context.Background(), p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if d := math.Abs(out.Objective-res.Objective) / res.Objective; d > 1e-6 {
			t.Errorf("%+v: CSDP %v (%s), mf %v (bound %v): rel %.2e", c, out.Objective, out.Status, res.Objective, res.LowerBound, d)
		}
		// CSDP's y is feasible only to its tolerance, so cᵀy may dip
		// below the optimum; its X made exactly feasible (scaled to
		// pattern sums ≤ 1) is a strategy, whose true objective the
		// certified bound must not exceed.
		x := mat.NewSymDense(c.n, nil)
		for i := 0; i < c.n; i++ {
			for j := i; j < c.n; j++ {
				if id := xvar[i*c.n+j]; id > 0 {
					x.SetSym(i, j, out.Solution.Y[id-1])
				}
			}
		}
		sens, err := StrategySensitivity(x, Schema{Kind: FixedEpoch, Epochs: c.k})
		if err != nil {
			t.Fatal(err)
		}
		fc := denseObjective(t, w.V, x) * sens.Squared
		if fc < res.LowerBound*(1-1e-12) || (fc-res.Objective)/res.Objective > 1e-6 {
			t.Errorf("%+v: CSDP strategy scores %v; mf %v, bound %v", c, fc, res.Objective, res.LowerBound)
		}
		t.Logf("%+v: CSDP cᵀy %.10g, its strategy %.10g; mf %.10g, bound %.10g", c, out.Objective, fc, res.Objective, res.LowerBound)
	}
}
