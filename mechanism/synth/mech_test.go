package synth

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dpsolve/dpsolve/privacy/noise"
)

func seeded(o Options, seed uint64) Options {
	o.Noise = noise.NewSeededInsecure(seed)
	o.Bits = rand.NewChaCha8([32]byte{byte(seed), 1})
	return o
}

// The conversion (ε, δ) → ρ equals an independent scipy computation (a
// bounded scalar minimization over log α and Brent's root finding on log δ,
// run once: the values below).
func TestRhoFromApproxMatchesScipy(t *testing.T) {
	for _, c := range []struct{ eps, delta, want float64 }{
		{1, 1e-9, 0.014973057673588521},
		{0.5, 1e-6, 0.006641524356660503},
		{4, 1e-5, 0.3731439827693287},
	} {
		got, err := RhoFromApprox(c.eps, c.delta)
		if err != nil {
			t.Fatal(err)
		}
		// 1e-7 relative: scipy's bounded minimizer stops at xatol 1e-12
		// in log α, flat near the optimum.
		if math.Abs(got-c.want) > 1e-7*c.want {
			t.Fatalf("ε %v δ %v: ρ %v, scipy %v", c.eps, c.delta, got, c.want)
		}
	}
}

// MST's privacy accounting by hand: ρ/3 on the one-way marginals (one
// residual plan at σ = 1/√(2ρ/3), sensitivity 1), k−1 selections by the
// exponential mechanism at ε = √(8(ρ/3)/(k−1)) (ε²/8-zCDP each), ρ/3 on
// the pairs; zCDP adds up to ρ.
func TestMSTAccountingByHand(t *testing.T) {
	sizes := []int{3, 4, 2, 3, 2}
	d := randomData(sizes, 3000, 11)
	const rho = 0.3
	res, err := Synthesize(context.Background(), d, seeded(Options{Mechanism: MST, Budget: zcdp(rho)}, 1))
	if err != nil {
		t.Fatal(err)
	}
	k := len(sizes)
	steps := res.Report.Steps
	if len(steps) != 1+(k-1)+1 {
		t.Fatalf("%d steps", len(steps))
	}
	eps := math.Sqrt(8 * (rho / 3) / float64(k-1))
	sum := 0.0
	for i, s := range steps {
		var want float64
		switch {
		case i == 0 || i == len(steps)-1:
			if s.Kind != "measure" || math.Abs(s.Sigma-1/math.Sqrt(2*rho/3)) > 1e-15 {
				t.Fatalf("step %d: %+v", i, s)
			}
			want = 1 / (2 * s.Sigma * s.Sigma)
		default:
			if s.Kind != "select" || math.Abs(selEps(s)-eps) > 1e-15 {
				t.Fatalf("step %d: %+v", i, s)
			}
			want = eps * eps / 8
		}
		if math.Abs(s.Cost.Rho()-want) > 1e-15 {
			t.Fatalf("step %d charges %v, want %v", i, s.Cost.Rho(), want)
		}
		sum += want
	}
	if math.Abs(sum-rho) > 1e-12 || math.Abs(res.Report.SpentRho-rho) > 1e-12 {
		t.Fatalf("spent %v (%v by hand), budget %v", res.Report.SpentRho, sum, rho)
	}
	if got := len(steps[len(steps)-1].Sets); got != k-1 {
		t.Fatalf("%d pairs measured", got)
	}
}

// AIM's accounting: every round's selection (ε²/8) and measurement
// (1/(2σ²)) plus the initial one-way measurement (k/(2σ₀²)) add up to ρ,
// and the rounds follow σ₀ = √(T/(1.8ρ)), ε₀ = √(0.8ρ/T).
func TestAIMAccountingByHand(t *testing.T) {
	sizes := []int{3, 4, 2, 3}
	d := randomData(sizes, 3000, 12)
	const rho = 0.5
	res, err := Synthesize(context.Background(), d, seeded(Options{Mechanism: AIM, Budget: zcdp(rho), Rounds: 8}, 2))
	if err != nil {
		t.Fatal(err)
	}
	T := 8.0
	s0 := math.Sqrt(T / (2 * 0.9 * rho))
	steps := res.Report.Steps
	if steps[0].Kind != "measure" || math.Abs(steps[0].Cost.Rho()-4/(2*s0*s0)) > 1e-15 {
		t.Fatalf("initial step %+v", steps[0])
	}
	if steps[1].Kind != "select" || math.Abs(selEps(steps[1])-math.Sqrt(0.8*rho/T)) > 1e-15 {
		t.Fatalf("first selection %+v", steps[1])
	}
	sum := 0.0
	for i, s := range steps {
		var want float64
		if s.Kind == "measure" {
			want = 1 / (2 * s.Sigma * s.Sigma)
		} else {
			want = selEps(s) * selEps(s) / 8
		}
		if math.Abs(s.Cost.Rho()-want) > 1e-12*want {
			t.Fatalf("step %d charges %v, by hand %v", i, s.Cost.Rho(), want)
		}
		sum += want
	}
	if math.Abs(sum-rho) > 1e-12 {
		t.Fatalf("steps add up to %v, budget %v", sum, rho)
	}
	t.Logf("%d rounds, measured %v", res.Report.Rounds, res.Report.Measured)
}

// The exponential mechanism's selection frequencies match
// exp(ε q/(2Δ)) / Σ (a chi-square check over 40,000 seeded draws).
func TestExponentialMechanismDistribution(t *testing.T) {
	q := []float64{0, 1, 2, 4}
	eps := 1.0
	bits := rand.NewChaCha8([32]byte{9})
	const n = 40000
	counts := make([]float64, len(q))
	for i := 0; i < n; i++ {
		c, err := exponential(bits, q, eps, 1)
		if err != nil {
			t.Fatal(err)
		}
		counts[c]++
	}
	z := 0.0
	for _, v := range q {
		z += math.Exp(eps * v / 2)
	}
	chi := 0.0
	for i, v := range q {
		e := n * math.Exp(eps*v/2) / z
		chi += (counts[i] - e) * (counts[i] - e) / e
	}
	// 3 degrees of freedom: P(χ² > 16.27) = 0.001.
	if chi > 16.27 {
		t.Fatalf("χ² = %v, counts %v", chi, counts)
	}
}

// At a large budget both mechanisms' synthetic data answer the pair
// marginals far better than the independent (one-way) model.
func TestMechanismsBeatIndependence(t *testing.T) {
	sizes := []int{3, 4, 3, 3, 2}
	d := randomData(sizes, 5000, 13)
	for _, mech := range []string{MST, AIM} {
		res, err := Synthesize(context.Background(), d, seeded(Options{Mechanism: mech, Budget: zcdp(5)}, 3))
		if err != nil {
			t.Fatal(err)
		}
		syn := res.Sample(d.Len(), rand.New(rand.NewPCG(1, 1)))
		errSyn, errInd := 0.0, 0.0
		for i := 0; i < len(sizes); i++ {
			for j := i + 1; j < len(sizes); j++ {
				x := d.Marginal([]int{i, j})
				y := syn.Marginal([]int{i, j})
				xi, xj := d.Marginal([]int{i}), d.Marginal([]int{j})
				n := float64(d.Len())
				for c := range x {
					errSyn += math.Abs(x[c]-y[c]) / n / 2
					ind := xi[c/sizes[j]] * xj[c%sizes[j]] / n
					errInd += math.Abs(x[c]-ind) / n / 2
				}
			}
		}
		t.Logf("%s: pair error %.4f, independent model %.4f", mech, errSyn/10, errInd/10)
		if errSyn > errInd/3 {
			t.Fatalf("%s: synthetic pair error %v, not well below independence %v", mech, errSyn, errInd)
		}
	}
}

// selEps is a selection step's ε (0 for a measurement).
func selEps(s Step) float64 {
	if s.Selection == nil {
		return 0
	}
	return s.Selection.Epsilon()
}
