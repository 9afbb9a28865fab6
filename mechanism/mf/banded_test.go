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
)

// bandedSDP writes min tr(Y) s.t. [[X, Fᵀ], [F, Y]] ⪰ 0 with X bw-banded
// and unit diagonal (constants in F₀), for V = FᵀF.
func bandedSDP(v *mat.SymDense, bw int) (*sdp.Problem, []int) {
	n := v.SymmetricDim()
	var ch mat.Cholesky
	ch.Factorize(v)
	var u mat.TriDense
	ch.UTo(&u)
	p := &sdp.Problem{Comment: "banded DP-MF", Blocks: []int{2 * n}}
	xvar := make([]int, n*n)
	m := 0
	for i := 0; i < n; i++ {
		p.Entries = append(p.Entries, sdp.Entry{Mat: 0, Block: 1, I: i + 1, J: i + 1, Value: -1})
		for j := i + 1; j < n && j-i < bw; j++ {
			m++
			xvar[i*n+j] = m
			p.Entries = append(p.Entries, sdp.Entry{Mat: m, Block: 1, I: i + 1, J: j + 1, Value: 1})
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
			if f := u.At(i, j); f != 0 {
				p.Entries = append(p.Entries, sdp.Entry{Mat: 0, Block: 1, I: j + 1, J: n + i + 1, Value: -f})
			}
		}
	}
	return p, xvar
}

// The banded optimum: exactly banded with unit diagonal, its sensitivity
// the number of uses the separation allows, its certified bound below
// every feasible banded strategy's objective (dense inverse).
func TestBandedCertificateBelowFeasible(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct {
		n, b, k int
		beta    float64
	}{{40, 5, 0, 0}, {48, 8, 3, 0.9}} {
		w, _ := Momentum(c.n, c.beta, nil)
		res, err := Solve(context.Background(), w, Schema{Kind: MinSep, MinSep: c.b, Epochs: c.k}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != status.Converged || res.Gap > 1e-8 {
			t.Errorf("%+v: %s gap %.2e", c, res.Status, res.Gap)
		}
		want := float64((c.n + c.b - 1) / c.b)
		if c.k > 0 {
			want = math.Min(want, float64(c.k))
		}
		if math.Abs(res.Sensitivity.Squared-want) > 1e-12 {
			t.Errorf("%+v: sens² %v, want %v", c, res.Sensitivity.Squared, want)
		}
		for i := 0; i < c.n; i++ {
			if res.X.At(i, i) != 1 {
				t.Fatalf("diag %d = %v", i, res.X.At(i, i))
			}
			for j := i + c.b; j < c.n; j++ {
				if res.X.At(i, j) != 0 {
					t.Fatalf("X[%d,%d] = %v outside the band", i, j, res.X.At(i, j))
				}
			}
		}
		cands := []*mat.SymDense{res.X}
		for r := 0; r < 5; r++ {
			x := randomGram(c.n, rng, false, func(i, j int) bool { return j-i < c.b })
			for i := 0; i < c.n; i++ { // to unit diagonal: D^{-1/2} X D^{-1/2}
				for j := i; j < c.n; j++ {
					x.SetSym(i, j, x.At(i, j)/math.Sqrt(x.At(i, i)*x.At(j, j)))
				}
			}
			cands = append(cands, x)
		}
		for ci, x := range cands {
			if f := denseObjective(t, w.V, x); res.LowerBound > f*(1+1e-12) {
				t.Errorf("%+v: bound %v above candidate %d's %v", c, res.LowerBound, ci, f)
			}
		}
	}
}

// CSDP's banded optimum agrees; its strategy (unit diagonal by
// construction, banded) never scores below our certified bound.
func TestBandedAgreesWithCSDP(t *testing.T) {
	if _, err := exec.LookPath("csdp"); err != nil {
		t.Skip("csdp not installed")
	}
	const n, bw = 16, 4
	w, _ := Momentum(n, 0.5, nil)
	res, err := Solve(context.Background(), w, Schema{Kind: MinSep, MinSep: bw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, xvar := bandedSDP(w.V, bw)
	out, err := sdp.Solve(context.Background(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	x := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		x.SetSym(i, i, 1)
		for j := i + 1; j < n; j++ {
			if id := xvar[i*n+j]; id > 0 {
				x.SetSym(i, j, out.Solution.Y[id-1])
			}
		}
	}
	fc := denseObjective(t, w.V, x)
	if d := math.Abs(out.Objective-res.Objective) / res.Objective; d > 1e-6 {
		t.Errorf("CSDP %v, mf %v: rel %.2e", out.Objective, res.Objective, d)
	}
	if fc < res.LowerBound*(1-1e-12) {
		t.Errorf("CSDP strategy %v below certified bound %v", fc, res.LowerBound)
	}
	t.Logf("CSDP cᵀy %.10g, its strategy %.10g; mf %.10g, bound %.10g", out.Objective, fc, res.Objective, res.LowerBound)
}
