package synthetic

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpsolve/dpsolve/mechanism/synth"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/pipeline/publish"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/ledger"
	"github.com/dpsolve/dpsolve/progress"
)

func codebookAttrs(t *testing.T) []domain.Attribute {
	t.Helper()
	colour, err := domain.NewValueCodebook([]string{"red", "green", "blue"}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	age, err := domain.NewBinCodebook([]float64{0, 18, 65, 120}, false)
	if err != nil {
		t.Fatal(err)
	}
	return []domain.Attribute{{Name: "colour", Size: 3, Codebook: colour}, {Name: "age", Size: 3, Codebook: age}, {Name: "b", Size: 2}}
}

func labelledCSV() string {
	var sb strings.Builder
	sb.WriteString("colour,age,b\n")
	cols, ages := []string{"red", "green", "blue"}, []string{"5", "30", "70"}
	for i := 0; i < 300; i++ {
		sb.WriteString(cols[i%3] + "," + ages[(i/3)%3] + "," + string(rune('0'+i%2)) + "\n")
	}
	return sb.String()
}

func newLedger(t *testing.T, rho float64) (string, []byte) {
	t.Helper()
	led := filepath.Join(t.TempDir(), "ledger.json")
	lim, _ := calibrate.ZCDP(rho)
	if err := ledger.Create(led, lim); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(led)
	return led, b
}

// TestRefusedBeforeCharge: bad input — unknown values, empty data, a
// missing column, a budget too small for one round, a model above the
// cap, an unknown mechanism, a budget above the ledger's room — is
// Refused with the ledger's bytes unchanged and no output directory.
func TestRefusedBeforeCharge(t *testing.T) {
	attrs := codebookAttrs(t)
	led, before := newLedger(t, 1)
	rho, _ := calibrate.ZCDP(0.1)
	big, _ := calibrate.ZCDP(2)
	tiny, _ := calibrate.ZCDP(1e-14)
	seed := uint64(1)
	good := labelledCSV()
	cases := []struct {
		name, data string
		edit       func(*Request)
	}{
		{"unknown value", "colour,age,b\nred,5,0\npurple,5,1\n", nil},
		{"out-of-range bin", "colour,age,b\nred,500,0\n", nil},
		{"empty data", "colour,age,b\n", nil},
		{"no header", "", nil},
		{"missing column", "colour,age\nred,5\n", nil},
		{"budget too small", good, func(r *Request) { r.Budget = tiny }},
		{"model too large", good, func(r *Request) { r.MaxCells = 4 }},
		{"unknown mechanism", good, func(r *Request) { r.Mechanism = "pgm" }},
		{"over the ledger", good, func(r *Request) { r.Budget = big }},
	}
	for _, c := range cases {
		out := filepath.Join(t.TempDir(), "out")
		req := Request{Options: synth.Options{Budget: rho}, Attrs: attrs, Data: strings.NewReader(c.data), Ledger: led, Out: out, InsecureSeed: &seed}
		if c.edit != nil {
			c.edit(&req)
		}
		res, rep, err := Release(context.Background(), req)
		if err == nil || res.Outcome != publish.Refused || rep != nil {
			t.Fatalf("%s: outcome %v, err %v", c.name, res.Outcome, err)
		}
		if after, _ := os.ReadFile(led); !bytes.Equal(before, after) {
			t.Fatalf("%s: the ledger changed", c.name)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%s: the output directory exists", c.name)
		}
		t.Logf("%s: %v", c.name, err)
	}
}

// TestFailureAfterCharge: a panic inside the mechanism (here from its
// progress callback, which runs only after the charge) and a cancellation
// during it are charged_not_released: the ledger holds the charge, no
// output is published, the error is a publish.SpentError.
func TestFailureAfterCharge(t *testing.T) {
	rho, _ := calibrate.ZCDP(0.1)
	seed := uint64(2)
	for _, kind := range []string{"panic", "cancel"} {
		led, before := newLedger(t, 1)
		out := filepath.Join(t.TempDir(), "out")
		ctx, cancel := context.WithCancel(context.Background())
		req := Request{Options: synth.Options{Budget: rho, Mechanism: synth.MST}, Attrs: codebookAttrs(t), Data: strings.NewReader(labelledCSV()),
			Ledger: led, Out: out, InsecureSeed: &seed}
		req.Progress = func(progress.Event) {
			if kind == "panic" {
				panic("injected")
			}
			cancel()
		}
		res, _, err := Release(ctx, req)
		cancel()
		var se *publish.SpentError
		if res.Outcome != publish.ChargedNotReleased || !errors.As(err, &se) {
			t.Fatalf("%s: outcome %v, err %v", kind, res.Outcome, err)
		}
		if after, _ := os.ReadFile(led); bytes.Equal(before, after) {
			t.Fatalf("%s: the ledger was not charged", kind)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%s: the output directory exists", kind)
		}
		t.Logf("%s: %v", kind, err)
	}
}

// TestLabelledRelease: labelled records in, labelled records out — the
// header is the attribute names, every value is one of the codebook's
// labels (values, bin ranges) or a code in range, the number of rows is
// the requested one; the ledger is charged ρ once; (ε, δ) is charged as
// its ρ in a ρ ledger.
func TestLabelledRelease(t *testing.T) {
	attrs := codebookAttrs(t)
	seed := uint64(3)
	eps, _ := calibrate.ApproxDP(1, 1e-6)
	wantRho, _ := synth.RhoFromApprox(1, 1e-6)
	for _, mech := range []string{synth.MST, synth.AIM} {
		led, _ := newLedger(t, 1)
		out := filepath.Join(t.TempDir(), "out")
		req := Request{Options: synth.Options{Budget: eps, Mechanism: mech}, Attrs: attrs, Data: strings.NewReader(labelledCSV()),
			Ledger: led, Out: out, InsecureSeed: &seed, Records: 120}
		res, rep, err := Release(context.Background(), req)
		if err != nil || res.Outcome != publish.Released {
			t.Fatalf("%s: %v, %v", mech, res.Outcome, err)
		}
		if rep.DataRows != 300 || rep.Records != 120 || len(rep.Labelled) != 2 || math.Abs(rep.ZCDP.Rho()-wantRho) > 1e-15 {
			t.Fatalf("%s: report %+v", mech, rep)
		}
		f, err := ledger.Read(led)
		if err != nil || len(f.Spent) != 1 || math.Abs(f.Total().Rho-wantRho) > 1e-15 {
			t.Fatalf("%s: ledger %+v, %v", mech, f, err)
		}
		b, err := os.ReadFile(filepath.Join(out, "synthetic.csv"))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if lines[0] != "colour,age,b" || len(lines) != 121 {
			t.Fatalf("%s: header %q, %d lines", mech, lines[0], len(lines))
		}
		ok := []map[string]bool{{"red": true, "green": true, "blue": true},
			{`"[0, 18)"`: true, `"[18, 65)"`: true, `"[65, 120)"`: true}, {"0": true, "1": true}}
		for _, l := range lines[1:] {
			// The bin labels hold a comma, so the CSV quotes them.
			i, j := strings.Index(l, ","), strings.LastIndex(l, ",")
			f := []string{l[:i], l[i+1 : j], l[j+1:]}
			for k := range f {
				if !ok[k][f[k]] {
					t.Fatalf("%s: row %q: field %q is no label of %s", mech, l, f[k], attrs[k].Name)
				}
			}
		}
		if _, err := os.Stat(filepath.Join(out, "synth.json")); err != nil {
			t.Fatal(err)
		}
	}
}
