package publish

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/ledger"
)

// customSteps are the steps RunCustom reports to the fault injector, in
// order; "check" and "measure" are the caller's Check and Measure.
var customSteps = []string{"reserved", "check", "prepared", "charge", "charged", "measure", "answered",
	"write a.csv", "write b.json", "commit", "committed"}

// TestCustomFaults makes a custom release panic, fail and be cancelled at
// each step (the caller's Check and Measure included) and checks that the
// ledger's bytes are unchanged exactly when the outcome is Refused, that
// the output exists exactly when it is Released, that a panic or error
// after the charge is ChargedNotReleased with a SpentError, and that the
// outcome is the one the step's place implies.
func TestCustomFaults(t *testing.T) {
	rho, _ := calibrate.ZCDP(0.25)
	limit, _ := calibrate.ZCDP(1)
	for _, step := range customSteps {
		for _, kind := range []string{"panic", "error", "cancel"} {
			t.Run(step+"/"+kind, func(t *testing.T) {
				dir := t.TempDir()
				led := filepath.Join(dir, "ledger.json")
				if err := ledger.Create(led, limit); err != nil {
					t.Fatal(err)
				}
				before, _ := os.ReadFile(led)
				out := filepath.Join(dir, "out")
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				hit := func(s string) error {
					if s != step {
						return nil
					}
					switch kind {
					case "panic":
						panic("injected at " + s)
					case "error":
						return errors.New("injected at " + s)
					}
					cancel()
					return nil
				}
				file := func(name string) File {
					return File{Name: name, Write: func(w io.Writer) error { _, err := w.Write([]byte(name + "\n")); return err }}
				}
				res, err := RunCustom(ctx, Custom{Budget: rho, Ledger: led, Out: out,
					Check: func(context.Context) error { return hit("check") },
					Measure: func(context.Context) ([]File, error) {
						if err := hit("measure"); err != nil {
							return nil, err
						}
						return []File{file("a.csv"), file("b.json")}, nil
					},
					fault: func(_ context.Context, s string) error { return hit(s) }})
				if res == nil {
					t.Fatal("nil result")
				}
				after, _ := os.ReadFile(led)
				changed := !bytes.Equal(before, after)
				_, statErr := os.Stat(out)
				if changed != res.Charged() {
					t.Fatalf("ledger changed %v but outcome %v (err %v)", changed, res.Outcome, err)
				}
				if (statErr == nil) != (res.Outcome == Released) {
					t.Fatalf("output exists %v but outcome %v (err %v)", statErr == nil, res.Outcome, err)
				}
				if (err == nil) != (res.Outcome == Released) || err != res.Reason {
					t.Fatalf("err %v, outcome %v, reason %v", err, res.Outcome, res.Reason)
				}
				idx := func(s string) int {
					for i, x := range customSteps {
						if x == s {
							return i
						}
					}
					return -1
				}
				want := Refused
				switch {
				case step == "committed":
					want = Released
				case idx(step) >= idx("charged"):
					want = ChargedNotReleased
				case step == "charge" && kind == "cancel":
					// cancelled inside the charge step, before the ledger
					// write: the gate refuses, nothing is charged.
				}
				if step == "measure" && kind == "cancel" {
					// Measure returns normally; the cancel stops the commit.
					want = ChargedNotReleased
				}
				if res.Outcome != want {
					t.Fatalf("outcome %v, want %v (err %v)", res.Outcome, want, err)
				}
				if want == ChargedNotReleased {
					var se *SpentError
					if !errors.As(err, &se) || se.Ledger != led {
						t.Fatalf("charged, not released, without a SpentError naming the ledger: %v", err)
					}
				}
				if kind == "panic" && want != Released {
					var pe *PanicError
					if !errors.As(err, &pe) || !strings.Contains(err.Error(), "injected at "+step) {
						t.Fatalf("panic not reported with its message: %v", err)
					}
				}
				if want == Released {
					b, err := os.ReadFile(filepath.Join(out, "b.json"))
					if err != nil || string(b) != "b.json\n" {
						t.Fatalf("b.json %q, %v", b, err)
					}
				}
				entries, _ := os.ReadDir(dir)
				for _, e := range entries {
					if e.Name() != "ledger.json" && e.Name() != "out" && !strings.HasPrefix(e.Name(), "ledger.json") {
						t.Fatalf("left behind: %s", e.Name())
					}
				}
			})
		}
	}
}

// TestCustomRefusesOverBudget: a budget the ledger has no room for is
// refused before Measure runs, with the ledger's bytes unchanged.
func TestCustomRefusesOverBudget(t *testing.T) {
	dir := t.TempDir()
	led := filepath.Join(dir, "ledger.json")
	limit, _ := calibrate.ZCDP(0.1)
	if err := ledger.Create(led, limit); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(led)
	rho, _ := calibrate.ZCDP(0.5)
	ran := false
	res, err := RunCustom(context.Background(), Custom{Budget: rho, Ledger: led, Out: filepath.Join(dir, "out"),
		Measure: func(context.Context) ([]File, error) { ran = true; return nil, nil }})
	after, _ := os.ReadFile(led)
	if err == nil || res.Outcome != Refused || ran || !bytes.Equal(before, after) {
		t.Fatalf("outcome %v, err %v, measured %v, ledger changed %v", res.Outcome, err, ran, !bytes.Equal(before, after))
	}
}
