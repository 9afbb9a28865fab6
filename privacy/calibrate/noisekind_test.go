package calibrate_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

// ParseNoiseKind accepts exactly the two names, in any case, and Norm is
// the sensitivity norm each budget kind's noise is calibrated to (Laplace:
// Δ₁ for pure ε-DP; Gaussian: Δ₂ for (ε,δ)-DP and zCDP).
func TestNoiseKind(t *testing.T) {
	for s, want := range map[string]calibrate.NoiseKind{"laplace": calibrate.Laplace, "Gaussian": calibrate.Gaussian, "LAPLACE": calibrate.Laplace} {
		got, err := calibrate.ParseNoiseKind(s)
		if err != nil || got != want {
			t.Errorf("ParseNoiseKind(%q) = %q, %v; want %q", s, got, err, want)
		}
	}
	for _, s := range []string{"", "pure", "l1", "gauss"} {
		if _, err := calibrate.ParseNoiseKind(s); !errors.Is(err, inputerr.ErrInput) {
			t.Errorf("ParseNoiseKind(%q): err %v, want bad input", s, err)
		}
	}
	if calibrate.Laplace.Norm() != 1 || calibrate.Gaussian.Norm() != 2 || calibrate.NoiseKind("x").Norm() != 0 {
		t.Error("Norm: want 1 for Laplace, 2 for Gaussian, 0 otherwise")
	}
	for _, c := range []struct {
		kind            calibrate.Kind
		eps, delta, rho float64
		norm            int
	}{{calibrate.Pure, 1, 0, 0, 1}, {calibrate.Approx, 1, 1e-6, 0, 2}, {calibrate.Concentrated, 0, 0, 0.5, 2}} {
		b, err := calibrate.New(c.kind, c.eps, c.delta, c.rho)
		if err != nil {
			t.Fatal(err)
		}
		if got := b.Noise().Norm(); got != c.norm {
			t.Errorf("%s budget: noise %s has norm %d, want %d", c.kind, b.Noise(), got, c.norm)
		}
	}
}

func ExampleParseNoiseKind() {
	k, err := calibrate.ParseNoiseKind("Laplace")
	if err != nil {
		panic(err)
	}
	fmt.Println(k, k.Norm())
	// Output: laplace 1
}
