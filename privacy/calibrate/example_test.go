package calibrate_test

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

func Example() {
	// Noise for a query with L2 sensitivity 1 under (ε,δ) = (0.5, 1e-6).
	analytic, _ := calibrate.GaussianSigma(0.5, 1e-6, 1)
	classic, _ := calibrate.ClassicGaussianSigma(0.5, 1e-6, 1)
	zcdp, _ := calibrate.ZCDPSigma(0.125, 1)
	lap, _ := calibrate.LaplaceScale(0.5, 1)
	fmt.Printf("analytic %.4f classic %.4f zCDP %.4f Laplace %.1f\n", analytic, classic, zcdp, lap)
	// Output: analytic 8.0576 classic 10.5976 zCDP 2.0000 Laplace 2.0
}

func ExampleCalibrate() {
	// Everything a sampler needs to release 16 values of L2 sensitivity 1
	// under (1, 1e-6)-DP; c.Add(noise.NewSecure(), y) then draws the noise.
	b, err := calibrate.ApproxDP(1, 1e-6)
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := calibrate.Calibrate(b, 1, 16)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: %s noise, sigma %.4f on a grid of 2^%d\n", c.Budget, c.Noise, c.Scale, int(math.Log2(c.Grid)))
	// Output: eps=1, delta=1e-06: gaussian noise, sigma 4.2247 on a grid of 2^-38
}

func ExampleBudget_ApproxEpsilon() {
	// A ρ-zCDP release is (ρ + 2√(ρ·ln(1/δ)), δ)-DP.
	b, err := calibrate.ZCDP(0.125)
	if err != nil {
		fmt.Println(err)
		return
	}
	eps, _ := b.ApproxEpsilon(1e-6)
	fmt.Printf("%.4f\n", eps)
	// Output: 2.7533
}

func ExampleNew() {
	// A budget is valid once built: the constructors refuse a bad
	// parameter, and the zero Budget means "no budget".
	_, err := calibrate.ZCDP(0)
	fmt.Println(err)
	_, err = calibrate.New(calibrate.Pure, 1, 1e-6, 0)
	fmt.Println(err)
	b, _ := calibrate.ApproxDP(1, 1e-6)
	fmt.Println(b.Kind(), b.Epsilon(), b.Delta())
	var none calibrate.Budget
	fmt.Println(none.IsZero(), none)
	// Output:
	// calibrate: invalid input: rho must be positive and finite, got 0
	// calibrate: invalid input: delta must be 0 for pure ε-DP (the Laplace mechanism), got 1e-06
	// approx 1 1e-06
	// true no budget
}

func ExampleBudget_MarshalJSON() {
	// One encoding, the one ledgers and reports write: the keys say the kind.
	for _, s := range []string{`{"rho": 0.5}`, `{"epsilon": 1}`, `{"epsilon": 1, "delta": 1e-6}`, `{"rho": 0.5, "epsilon": 1}`} {
		var b calibrate.Budget
		if err := json.Unmarshal([]byte(s), &b); err != nil {
			fmt.Println(err)
			continue
		}
		out, _ := json.Marshal(b)
		fmt.Printf("%s: %s\n", b, out)
	}
	// Output:
	// rho=0.5 (zCDP): {"rho":0.5}
	// eps=1 (pure DP): {"epsilon":1}
	// eps=1, delta=1e-06: {"epsilon":1,"delta":0.000001}
	// calibrate: invalid input: epsilon and delta must be 0 for zCDP (the budget is rho), got 1 and 0
}
