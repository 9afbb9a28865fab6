package mf

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/status"
)

// Momentum's rows against the closed form (1 − β^{t−u+1})/(1 − β), and the
// learning-rate workload against its definition as Prefix·diag(η)·M_β
// (θₜ = θₜ₋₁ − ηₜ·mₜ, mₜ = β·mₜ₋₁ + gₜ), multiplied out densely.
func TestMomentumWorkloads(t *testing.T) {
	const n, beta = 12, 0.7
	w, err := Momentum(n, beta, nil)
	if err != nil {
		t.Fatal(err)
	}
	wA := w.Matrix()
	for tt := 0; tt < n; tt++ {
		for u := 0; u < n; u++ {
			want := 0.0
			if u <= tt {
				want = (1 - math.Pow(beta, float64(tt-u+1))) / (1 - beta)
			}
			if got := wA.At(tt, u); math.Abs(got-want) > 1e-13 {
				t.Fatalf("A[%d,%d] = %v, want %v", tt, u, got, want)
			}
		}
	}
	lr, err := LinearCooldown(n, 4, 0.25)
	if err != nil {
		t.Fatal(err)
	}
	if lr[n-5] != 1 || lr[n-4] != 1 || lr[n-1] != 0.25 || math.Abs(lr[n-2]-0.5) > 1e-15 {
		t.Errorf("cooldown rates %v", lr)
	}
	wl, err := Momentum(n, beta, lr)
	if err != nil {
		t.Fatal(err)
	}
	wlA := wl.Matrix()
	for tt := 0; tt < n; tt++ {
		for u := 0; u <= tt; u++ {
			want := 0.0 // Σ_{s=u..t} η_s β^{s−u}: row t of Prefix·diag(η)·M_β
			for s := u; s <= tt; s++ {
				want += lr[s] * math.Pow(beta, float64(s-u))
			}
			if got := wlA.At(tt, u); math.Abs(got-want) > 1e-13 {
				t.Fatalf("lr A[%d,%d] = %v, want %v", tt, u, got, want)
			}
		}
	}
	for _, bad := range []func() error{
		func() error { _, err := Momentum(n, 1, nil); return err },
		func() error { _, err := Momentum(0, 0.5, nil); return err },
		func() error { _, err := Momentum(n, 0.5, lr[:3]); return err },
		func() error { _, err := LinearCooldown(n, n+1, 0.5); return err },
		func() error { _, err := LinearCooldown(n, 3, 0); return err },
		func() error { _, err := ParseWorkload("momentum:x", n); return err },
		func() error { _, err := ParseWorkload("prefix,warmup:3", n); return err },
	} {
		if err := bad(); !errorsIsInput(err) {
			t.Errorf("want an input error, got %v", err)
		}
	}
}

// A workload given as a Gram only solves to the same optimum as with its
// matrix (the solver depends on V alone), for both multi-participation
// schemas.
func TestGramOnlyWorkload(t *testing.T) {
	w, _ := ParseWorkload("momentum:0.9,cooldown:8:0.2", 32)
	g, err := FromGram("gram", w.V)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []Schema{{Kind: FixedEpoch, Epochs: 4}, {Kind: MinSep, MinSep: 8, Epochs: 2}} {
		a, err := Solve(context.Background(), w, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Solve(context.Background(), g, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(a.Objective-b.Objective) > 1e-8*a.Objective {
			t.Errorf("%v: with A %v, Gram only %v", s, a.Objective, b.Objective)
		}
		ea, _ := Evaluate(w, a.C, s)
		eb, _ := Evaluate(g, a.C, s)
		if math.Abs(ea.Error-eb.Error) > 1e-9*ea.Error || math.Abs(ea.Error-a.Objective*a.Sensitivity.Squared) > 1e-9*ea.Error {
			t.Errorf("%v: Evaluate with A %v, Gram %v, solve %v", s, ea.Error, eb.Error, a.Objective*a.Sensitivity.Squared)
		}
	}
}

// A cancelled solve returns its feasible best-so-far with Status Cancelled
// and the context's error.
func TestCancelled(t *testing.T) {
	w, _ := Prefix(32)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, s := range []Schema{{Kind: FixedEpoch, Epochs: 4}, {Kind: MinSep, MinSep: 4}} {
		res, err := Solve(ctx, w, s, nil)
		if err == nil || res == nil || res.Status != status.Cancelled {
			t.Fatalf("%v: res %v err %v", s, res, err)
		}
		want := 1.0 // the fixed-epoch feasible set: Σ_{i∈π_r} X_ii = 1
		if s.Kind == MinSep {
			want = float64(s.Participations(32))
		}
		if sens := res.Sensitivity.Squared; math.Abs(sens-want) > 1e-12 {
			t.Errorf("%v: cancelled iterate has sens² %v", s, sens)
		}
	}
}

// Closed forms at the edges of the schemas: with k = n every step is in one
// pattern, X is diagonal with trace 1 and the optimum is (Σᵢ √Vᵢᵢ)²
// (Cauchy–Schwarz: x ∝ √diag V); with one band X = I and the optimum is
// tr V.
func TestSchemaEdges(t *testing.T) {
	w, _ := Momentum(8, 0.6, nil)
	res, err := Solve(context.Background(), w, Schema{Kind: FixedEpoch, Epochs: 8}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := 0.0
	for i := 0; i < 8; i++ {
		want += math.Sqrt(w.V.At(i, i))
	}
	want *= want
	if math.Abs(res.Objective-want) > 1e-9*want || res.LowerBound > want*(1+1e-12) || res.Gap > 1e-8 {
		t.Errorf("k = n: objective %v bound %v, closed form %v", res.Objective, res.LowerBound, want)
	}
	res, err = Solve(context.Background(), w, Schema{Kind: MinSep, MinSep: 3, Bands: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr := 0.0
	for i := 0; i < 8; i++ {
		tr += w.V.At(i, i)
	}
	if math.Abs(res.Objective-tr) > 1e-12*tr || res.Gap > 1e-8 || res.Sensitivity.Squared != 3 {
		t.Errorf("one band: objective %v gap %v sens² %v, want tr V = %v, 3", res.Objective, res.Gap, res.Sensitivity.Squared, tr)
	}
	if _, err := Solve(context.Background(), w, Schema{Kind: FixedEpoch, Epochs: 3}, nil); !errorsIsInput(err) {
		t.Errorf("n = 8, k = 3: %v", err)
	}
}

// V is summed over blocks of rowBlock rows: against gonum's one-shot
// AᵀA (SymOuterK) on workloads of more than one block, a partial last
// block included, for a generated workload and a tall user W. Both sum
// the same products in different orders: 1e-12 relative to the largest
// entry is ~100× the rounding of a 600-term sum.
func TestGramByRowBlocks(t *testing.T) {
	lr, err := LinearCooldown(300, 40, 0.2)
	if err != nil {
		t.Fatal(err)
	}
	gen, err := Momentum(300, 0.8, lr)
	if err != nil {
		t.Fatal(err)
	}
	rnd := rand.New(rand.NewPCG(3, 4)) // test data only
	tall := mat.NewDense(600, 40, nil)
	for i := 0; i < 600; i++ {
		for j := 0; j < 40; j++ {
			tall.Set(i, j, rnd.NormFloat64())
		}
	}
	user, err := FromMatrix("tall", tall)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []*Workload{gen, user} {
		a := w.Matrix()
		_, n := a.Dims()
		want := mat.NewSymDense(n, nil)
		want.SymOuterK(1, a.T())
		scale := mat.Norm(want, math.Inf(1))
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				if d := math.Abs(w.V.At(i, j) - want.At(i, j)); d > 1e-12*scale {
					t.Fatalf("%s: V[%d,%d] = %v, AᵀA %v", w.Name, i, j, w.V.At(i, j), want.At(i, j))
				}
			}
		}
		if r, _ := a.Dims(); w.Released() != r {
			t.Errorf("%s: Released %d, A has %d rows", w.Name, w.Released(), r)
		}
	}
}
