package calibrate_test

import (
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/dpsolve/dpsolve/internal/testkit/budgettest"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

// The one encoding round-trips every kind and writes the keys ledgers and
// reports have always had; decoding validates as New does.
func TestBudgetJSON(t *testing.T) {
	for want, b := range map[string]calibrate.Budget{
		`{"rho":0.25}`:                   budgettest.ZCDP(0.25),
		`{"epsilon":2}`:                  budgettest.PureDP(2),
		`{"epsilon":1,"delta":0.000001}`: budgettest.ApproxDP(1, 1e-6),
		`null`:                           {},
	} {
		got, err := json.Marshal(b)
		if err != nil || string(got) != want {
			t.Errorf("Marshal(%v) = %s, %v; want %s", b, got, err, want)
		}
		var back calibrate.Budget
		if err := json.Unmarshal(got, &back); err != nil || back != b {
			t.Errorf("Unmarshal(%s) = %v, %v; want %v", got, back, err, b)
		}
	}
	for _, bad := range []string{
		`{}`, `{"rho":0}`, `{"rho":-1}`, `{"epsilon":0}`, `{"epsilon":1,"delta":0}`, `{"epsilon":1,"delta":1}`,
		`{"delta":1e-6}`, `{"rho":1,"epsilon":1}`, `{"rho":1,"delta":1e-6}`, `{"kind":"zcdp","rho":1}`,
		`{"rho":"1"}`, `[1]`, `{"rho":1e400}`,
	} {
		var b calibrate.Budget
		if err := json.Unmarshal([]byte(bad), &b); !errors.Is(err, calibrate.ErrInput) || !b.IsZero() {
			t.Errorf("Unmarshal(%s) = %v, %v; want an ErrInput error and no budget", bad, b, err)
		}
	}
}

// Split divides and Share multiplies each parameter of the kind, exactly
// as the float operation does (the results are compared bit for bit), and
// a part too small to be a budget is refused.
func TestBudgetSplitShare(t *testing.T) {
	rho, approx := budgettest.ZCDP(0.9), budgettest.ApproxDP(1, 1e-6)
	if b, err := rho.Split(3); err != nil || b.Rho() != 0.9/3 || b.Kind() != calibrate.Concentrated {
		t.Errorf("Split(ρ=0.9, 3) = %v, %v", b, err)
	}
	if b, err := approx.Split(4); err != nil || b != budgettest.ApproxDP(0.25, 2.5e-7) {
		t.Errorf("Split((1,1e-6), 4) = %v, %v", b, err)
	}
	if b, err := approx.Share(0.25); err != nil || b.Epsilon() != 0.25 || b.Delta() != 1e-6*0.25 {
		t.Errorf("Share((1,1e-6), 0.25) = %v, %v", b, err)
	}
	if b, err := budgettest.PureDP(3).Share(1); err != nil || b != budgettest.PureDP(3) {
		t.Errorf("Share(ε=3, 1) = %v, %v", b, err)
	}
	for name, err := range map[string]error{
		"Split 0":         second(rho.Split(0)),
		"Share 0":         second(rho.Share(0)),
		"Share 1.5":       second(rho.Share(1.5)),
		"Share NaN":       second(rho.Share(math.NaN())),
		"Share underflow": second(budgettest.PureDP(1e-300).Share(1e-300)),
	} {
		if !errors.Is(err, calibrate.ErrInput) {
			t.Errorf("%s: got %v, want ErrInput", name, err)
		}
	}
}

func second(_ calibrate.Budget, err error) error { return err }

// MarshalInline writes the budget's members right after the named member
// and UnmarshalInline takes them back out, leaving the other members in
// order; a missing member to place after is an error.
func TestBudgetInline(t *testing.T) {
	type report struct {
		A string  `json:"a"`
		S float64 `json:"share"`
		Z int     `json:"z"`
	}
	for want, b := range map[string]calibrate.Budget{
		`{"a":"x","share":0.5,"rho":0.25,"z":3}`:                   budgettest.ZCDP(0.25),
		`{"a":"x","share":0.5,"epsilon":2,"z":3}`:                  budgettest.PureDP(2),
		`{"a":"x","share":0.5,"epsilon":1,"delta":0.000001,"z":3}`: budgettest.ApproxDP(1, 1e-6),
		`{"a":"x","share":0.5,"z":3}`:                              {},
	} {
		got, err := calibrate.MarshalInline(report{"x", 0.5, 3}, "share", b)
		if err != nil || string(got) != want {
			t.Errorf("MarshalInline(%v) = %s, %v; want %s", b, got, err, want)
			continue
		}
		back, rest, err := calibrate.UnmarshalInline(got)
		if err != nil || back != b || string(rest) != `{"a":"x","share":0.5,"z":3}` {
			t.Errorf("UnmarshalInline(%s) = %v, %s, %v", got, back, rest, err)
		}
	}
	if _, err := calibrate.MarshalInline(report{}, "sigma", budgettest.ZCDP(1)); err == nil {
		t.Error("a budget with no member to follow was dropped silently")
	}
	for _, bad := range []string{`{"a":1,"rho":0}`, `{"rho":1,"epsilon":1}`, `[1]`, `{"a":`} {
		if _, _, err := calibrate.UnmarshalInline([]byte(bad)); !errors.Is(err, calibrate.ErrInput) {
			t.Errorf("UnmarshalInline(%s): %v, want ErrInput", bad, err)
		}
	}
}
