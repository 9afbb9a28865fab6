package calibrate_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

// ParseMechanism against the table the command line documents: each
// --mechanism value, in any case, gives its noise and privacy definition;
// a budget of that definition calls for that noise; the name round-trips.
func TestParseMechanism(t *testing.T) {
	for _, c := range []struct {
		in    string
		noise calibrate.NoiseKind
		kind  calibrate.Kind
		name  string
	}{
		{"laplace", calibrate.Laplace, calibrate.Pure, "laplace"},
		{"Gaussian", calibrate.Gaussian, calibrate.Approx, "gaussian"},
		{"ZCDP", calibrate.Gaussian, calibrate.Concentrated, "zcdp"},
	} {
		noise, kind, err := calibrate.ParseMechanism(c.in)
		if err != nil || noise != c.noise || kind != c.kind {
			t.Errorf("ParseMechanism(%q) = %q, %q, %v; want %q, %q", c.in, noise, kind, err, c.noise, c.kind)
		}
		if got := calibrate.MechanismName(kind); got != c.name {
			t.Errorf("MechanismName(%q) = %q, want %q", kind, got, c.name)
		}
		b, err := calibrate.New(c.kind, map[bool]float64{true: 1}[c.kind != calibrate.Concentrated],
			map[bool]float64{true: 1e-6}[c.kind == calibrate.Approx], map[bool]float64{true: 0.5}[c.kind == calibrate.Concentrated])
		if err != nil {
			t.Fatal(err)
		}
		if b.Noise() != c.noise {
			t.Errorf("a %s budget calls for %s noise, but --mechanism %s parses to %s", c.kind, b.Noise(), c.in, c.noise)
		}
	}
	if got := calibrate.MechanismName("bogus"); got != "" {
		t.Errorf("MechanismName(bogus) = %q, want empty", got)
	}
	// The aliases the old ParseKind took name privacy definitions, not
	// mechanisms, and the noise kinds alone are not the flag's values
	// either: all are refused.
	for _, s := range []string{"", "pure", "approx", "rho", "eps", "eps-delta", "gauss", "uniform"} {
		_, _, err := calibrate.ParseMechanism(s)
		if !errors.Is(err, calibrate.ErrInput) || !strings.Contains(err.Error(), "unknown mechanism") ||
			!strings.Contains(err.Error(), "want laplace, gaussian or zcdp") {
			t.Errorf("ParseMechanism(%q): err %v, want an unknown mechanism listing the three", s, err)
		}
	}
}

// offered restricts the values and the lists to the given definitions.
func TestParseMechanismOffered(t *testing.T) {
	pa := []calibrate.Kind{calibrate.Pure, calibrate.Approx}
	if noise, kind, err := calibrate.ParseMechanism("GAUSSIAN", pa...); err != nil || noise != calibrate.Gaussian || kind != calibrate.Approx {
		t.Errorf("ParseMechanism(GAUSSIAN, pure, approx) = %q, %q, %v", noise, kind, err)
	}
	_, _, err := calibrate.ParseMechanism("zcdp", pa...)
	if !errors.Is(err, calibrate.ErrInput) || !strings.Contains(err.Error(), `"zcdp" (ρ-zCDP) is not offered here (want laplace or gaussian)`) {
		t.Errorf("ParseMechanism(zcdp, pure, approx): err %v", err)
	}
	for _, c := range []struct {
		offered             []calibrate.Kind
		names, help, values string
	}{
		{nil, "laplace, gaussian or zcdp",
			"laplace (ε-DP, L1 sensitivity), gaussian ((ε,δ)-DP, L2 sensitivity) or zcdp (ρ-zCDP, L2 sensitivity)", "laplace|gaussian|zcdp"},
		{pa, "laplace or gaussian", "laplace (ε-DP, L1 sensitivity) or gaussian ((ε,δ)-DP, L2 sensitivity)", "laplace|gaussian"},
		{[]calibrate.Kind{calibrate.Concentrated}, "zcdp", "zcdp (ρ-zCDP, L2 sensitivity)", "zcdp"},
		{[]calibrate.Kind{"bogus"}, "nothing", "nothing", ""},
	} {
		if got := calibrate.MechanismNames(c.offered...); got != c.names {
			t.Errorf("MechanismNames(%v) = %q, want %q", c.offered, got, c.names)
		}
		if got := strings.Join(calibrate.MechanismValues(c.offered...), "|"); got != c.values {
			t.Errorf("MechanismValues(%v) = %q, want %q", c.offered, got, c.values)
		}
		if got := calibrate.MechanismUsage(c.offered...); got != c.help {
			t.Errorf("MechanismUsage(%v) = %q, want %q", c.offered, got, c.help)
		}
	}
}

func ExampleParseMechanism() {
	noise, kind, err := calibrate.ParseMechanism("zcdp")
	if err != nil {
		panic(err)
	}
	b, err := calibrate.New(kind, 0, 0, 0.5)
	if err != nil {
		panic(err)
	}
	fmt.Println(noise, b)
	// Output: gaussian rho=0.5 (zCDP)
}
