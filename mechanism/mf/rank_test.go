package mf

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// lowRankWorkloads are rank-deficient user workloads on n steps: the final
// model only (the sum of all gradients, rank 1) and 6 random rows.
func lowRankWorkloads(t *testing.T, n int) []*Workload {
	t.Helper()
	last := mat.NewDense(1, n, nil)
	for j := 0; j < n; j++ {
		last.Set(0, j, 1)
	}
	rnd := rand.New(rand.NewPCG(5, 6)) // test data only
	few := mat.NewDense(6, n, nil)
	for i := 0; i < 6; i++ {
		for j := 0; j < n; j++ {
			few.Set(i, j, rnd.NormFloat64())
		}
	}
	var out []*Workload
	for _, c := range []struct {
		name string
		a    *mat.Dense
	}{{"final-model", last}, {"six-rows", few}} {
		w, err := FromMatrix(c.name, c.a)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, w)
	}
	return out
}

var rankSchemas = []Schema{{Kind: Single}, {Kind: FixedEpoch, Epochs: 4}, {Kind: MinSep, MinSep: 8, Epochs: 4}}

// Every schema refuses a rank-deficient Gram with a *RankError (an input
// error) naming its rank (fixed epoch and banded before any iteration,
// from their factor of V; single participation from newton's Rank after
// its solve): the optimum has no invertible strategy (before this check the single-participation path
// failed on the singular optimum's factor and the others stalled at gaps
// of 0.4–0.7).
func TestRankDeficientRefused(t *testing.T) {
	const n = 32
	for _, w := range lowRankWorkloads(t, n) {
		want := w.Released()
		for _, s := range rankSchemas {
			res, err := Solve(context.Background(), w, s, nil)
			var re *RankError
			if !errors.As(err, &re) || res != nil {
				t.Fatalf("%s %v: got %v, %v; want a *RankError", w.Name, s, res, err)
			}
			if re.Rank != want || re.N != n || !errors.Is(err, ErrInput) {
				t.Errorf("%s %v: %+v, want rank %d of %d, an input error", w.Name, s, re, want, n)
			}
		}
	}
}

// A ridged rank-deficient workload certifies in every schema, and its
// numbers hang together: the released rows' error (Result.Evaluate) plus
// μ·d̄·tr(X⁻¹) (X⁻¹ by gonum) is the certified tr(V_μ X⁻¹), to rounding.
// For the final model under single participation the released error is
// at least 1 (Cauchy–Schwarz: 1ᵀX⁻¹1 ≥ n²/1ᵀX1 ≥ 1 on correlation
// matrices) and the objective at most that of the feasible
// (1−t)·11ᵀ + t·I at the best t of a grid.
func TestRidgeCertifies(t *testing.T) {
	const n, mu = 32, 1e-6
	for _, w0 := range lowRankWorkloads(t, n) {
		w, err := w0.Ridge(mu)
		if err != nil {
			t.Fatal(err)
		}
		mean := 0.0
		for i := 0; i < n; i++ {
			mean += w0.V.At(i, i) / n
		}
		for _, s := range rankSchemas {
			res, err := Solve(context.Background(), w, s, nil)
			if err != nil || !(res.Gap <= 1e-8) {
				t.Fatalf("%s %v: %v, gap %v", w.Name, s, err, res.Gap)
			}
			ev, err := res.Evaluate(w)
			if err != nil {
				t.Fatal(err)
			}
			var inv mat.Dense
			if err := inv.Inverse(res.X); err != nil {
				t.Fatal(err)
			}
			released := ev.Objective // per unit sensitivity: tr(V X⁻¹)
			if got := released + mu*mean*mat.Trace(&inv); math.Abs(got-res.Objective) > 1e-9*res.Objective {
				t.Errorf("%s %v: released %v + ridge term = %v, certified objective %v", w.Name, s, released, got, res.Objective)
			}
			if w0.Name != "final-model" || s.Kind != Single {
				continue
			}
			best := math.Inf(1)
			for t := 1e-5; t < 1; t *= 1.2 {
				d := (1-t)*n + t // X_t's eigenvalue along 1; the others are t
				best = math.Min(best, n/d+mu*mean*(1/d+(n-1)/t))
			}
			if released < 1-1e-12 || res.Objective > best*(1+1e-9) {
				t.Errorf("final model: released %v (want ≥ 1), objective %v (want ≤ %v)", released, res.Objective, best)
			}
		}
	}
	if _, err := lowRankWorkloads(t, 8)[0].Ridge(0); !errorsIsInput(err) {
		t.Errorf("ridge 0: want an input error, got %v", err)
	}
}
