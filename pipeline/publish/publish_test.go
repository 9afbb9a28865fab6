package publish

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/pipeline/tables"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/ledger"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

func init() { blas.UseForGonum() } // the backend the command uses

const testSpec = `{"domain": [{"name": "a", "size": 4}, {"name": "b", "size": 3}],
 "workload": [{"name": "ab", "marginals": {"sets": [["a"], ["b"]]}},
              {"name": "cum", "product": {"a": "prefix", "b": "identity"}}]}`

func testWorkload(t testing.TB, spec string) *domain.Kron {
	t.Helper()
	k, err := domain.ParseSpec(strings.NewReader(spec), ".", workload.Blocks)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func testCSV() string {
	var b strings.Builder
	b.WriteString("a,b\n")
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&b, "%d,%d\n", (i*7)%4, (i*5)%3)
	}
	return b.String()
}

// faultSteps are the steps the transaction reports to the fault injector,
// in order; "committed" comes after the rename.
var faultSteps = []string{"check", "reserved", "prepared", "read", "charge", "charged", "answered",
	"write answers.csv", "write report.txt", "commit", "committed"}

// TestFaultInjection makes the transaction panic, fail and be cancelled at
// each step, and checks after each run that the ledger was charged if and
// only if the release was published or reported as charged and not
// released: the ledger's bytes are unchanged exactly when the outcome is
// Refused; the output exists exactly when the outcome is Released; no
// temporary directory or lock is left behind.
func TestFaultInjection(t *testing.T) {
	k := testWorkload(t, testSpec)
	rho, _ := calibrate.ZCDP(0.5)
	limit, _ := calibrate.ZCDP(1)
	for _, step := range faultSteps {
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
				var seen []string
				req := Request{Workload: k, Budget: rho, Template: "kron", Ledger: led, Out: out,
					Data:        Data{Records: strings.NewReader(testCSV())},
					Noise:       noise.NewSeededInsecure(1),
					PostProcess: tables.Publishable{NonNegative: true, Integer: true},
					Files: func(*Result) ([]File, error) {
						return []File{{Name: "report.txt", Write: func(w io.Writer) error { _, err := w.Write([]byte("ok\n")); return err }}}, nil
					},
					fault: func(c context.Context, s string) error {
						seen = append(seen, s)
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
					}}
				res, err := Run(ctx, req)
				after, _ := os.ReadFile(led)
				changed := !bytes.Equal(before, after)
				_, statErr := os.Stat(out)
				published := statErr == nil
				if res == nil {
					t.Fatal("nil result")
				}
				if changed != res.Charged() {
					t.Fatalf("ledger changed %v but outcome %v (err %v)", changed, res.Outcome, err)
				}
				if published != (res.Outcome == Released) {
					t.Fatalf("output exists %v but outcome %v (err %v)", published, res.Outcome, err)
				}
				if (err == nil) != (res.Outcome == Released) || err != res.Reason {
					t.Fatalf("err %v, outcome %v, reason %v", err, res.Outcome, res.Reason)
				}
				if res.Outcome == ChargedNotReleased {
					var se *SpentError
					if !errors.As(err, &se) {
						t.Fatalf("charged, not released, without a SpentError: %v", err)
					}
				}
				if kind == "panic" && res.Outcome != Released {
					var pe *PanicError
					if !errors.As(err, &pe) || !strings.Contains(err.Error(), "injected at "+step) {
						t.Fatalf("panic not reported with its message: %v", err)
					}
				}
				// Where the fault came decides the outcome.
				idx := func(s string) int {
					for i, x := range faultSteps {
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
					// cancelled inside the gate before the ledger call:
					// SpendContext checks ctx under its lock and refuses.
					want = Refused
				}
				if res.Outcome != want {
					t.Fatalf("outcome %v, want %v (err %v; steps %v)", res.Outcome, want, err, seen)
				}
				left, _ := filepath.Glob(filepath.Join(dir, ".out*"))
				if len(left) != 0 {
					t.Fatalf("left behind: %v", left)
				}
				if res.Outcome == Released {
					for _, name := range []string{"answers.csv", "report.txt"} {
						if fi, err := os.Stat(filepath.Join(out, name)); err != nil || fi.Size() == 0 {
							t.Fatalf("%s: %v", name, err)
						}
					}
					f, _ := ledger.Read(led)
					if len(f.Spent) != 1 || f.Spent[0].Label != out {
						t.Fatalf("ledger entries %+v", f.Spent)
					}
				}
			})
		}
	}
}

// TestTwoReleasesOneOutput: while a release holds its output directory, a
// second release to it is refused before anything is charged; exactly one
// charge is recorded.
func TestTwoReleasesOneOutput(t *testing.T) {
	k := testWorkload(t, testSpec)
	rho, _ := calibrate.ZCDP(0.25)
	limit, _ := calibrate.ZCDP(1)
	dir := t.TempDir()
	led := filepath.Join(dir, "ledger.json")
	ledger.Create(led, limit)
	out := filepath.Join(dir, "out")
	req := Request{Workload: k, Budget: rho, Template: "kron", Ledger: led, Out: out,
		Data: Data{Records: strings.NewReader(testCSV())}, Noise: noise.NewSeededInsecure(2)}
	p, err := Prepare(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	req2 := req
	req2.Data = Data{Records: strings.NewReader(testCSV())}
	res2, err := Run(context.Background(), req2)
	if res2.Outcome != Refused || !errors.Is(err, ErrOutput) {
		t.Fatalf("second release: %v %v", res2.Outcome, err)
	}
	res, err := p.Release(context.Background())
	if err != nil || res.Outcome != Released {
		t.Fatal(res.Outcome, err)
	}
	res3, err := Run(context.Background(), req2)
	if res3.Outcome != Refused || !errors.Is(err, ErrOutput) {
		t.Fatalf("release after the first: %v %v", res3.Outcome, err)
	}
	f, _ := ledger.Read(led)
	if len(f.Spent) != 1 {
		t.Fatalf("%d charges", len(f.Spent))
	}
}

// TestExtremeWeightsRefusedInPrepare: weights 1e-300 and 1e300 make the
// weighted expected error +Inf; Prepare (the dry run) refuses it, so the
// release never charges and then fails to write its report.
func TestExtremeWeightsRefusedInPrepare(t *testing.T) {
	k := testWorkload(t, `{"domain": [{"name": "a", "size": 4}, {"name": "b", "size": 3}],
 "workload": [{"name": "small", "weight": 1e-300, "marginals": {"sets": [["a"]]}},
              {"name": "big", "weight": 1e300, "product": {"a": "prefix", "b": "identity"}}]}`)
	rho, _ := calibrate.ZCDP(0.5)
	_, err := Prepare(context.Background(), Request{Workload: k, Budget: rho, Template: "kron"})
	if err == nil || !strings.Contains(err.Error(), "weights") {
		t.Fatalf("got %v", err)
	}
}

// TestEmptyOutputReplacedNonEmptyRefused: an existing empty directory is
// released into; a non-empty one is refused before the charge and kept.
func TestEmptyOutputReplacedNonEmptyRefused(t *testing.T) {
	k := testWorkload(t, testSpec)
	rho, _ := calibrate.ZCDP(0.25)
	limit, _ := calibrate.ZCDP(1)
	dir := t.TempDir()
	led := filepath.Join(dir, "ledger.json")
	ledger.Create(led, limit)
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	res, err := Run(context.Background(), Request{Workload: k, Budget: rho, Template: "kron", Ledger: led, Out: empty,
		Data: Data{Records: strings.NewReader(testCSV())}})
	if err != nil || res.Outcome != Released {
		t.Fatal(res.Outcome, err)
	}
	before, _ := os.ReadFile(led)
	res, err = Run(context.Background(), Request{Workload: k, Budget: rho, Template: "kron", Ledger: led, Out: empty,
		Data: Data{Records: strings.NewReader(testCSV())}})
	after, _ := os.ReadFile(led)
	if res.Outcome != Refused || !errors.Is(err, ErrOutput) || !bytes.Equal(before, after) {
		t.Fatal(res.Outcome, err)
	}
	if _, err := os.Stat(filepath.Join(empty, "answers.csv")); err != nil {
		t.Fatal(err)
	}
}

// TestPartsPostProcessRefused: examples/adult/mixed.json's best plan is a
// union of marginals and a Kronecker part measured part by part; with
// non-negative integer tables each part had its own grand total (48839
// and 48851 in one release). Such a release, and a split over terms, is
// refused before the charge; the ledger is untouched.
func TestPartsPostProcessRefused(t *testing.T) {
	k, err := domain.LoadSpec(filepath.Join("..", "..", "examples", "adult", "mixed.json"), workload.Blocks)
	if err != nil {
		t.Fatal(err)
	}
	rho, _ := calibrate.ZCDP(0.5)
	limit, _ := calibrate.ZCDP(1)
	dir := t.TempDir()
	led := filepath.Join(dir, "ledger.json")
	ledger.Create(led, limit)
	before, _ := os.ReadFile(led)
	for _, req := range []Request{
		{Workload: k, Budget: rho, Template: "best"},
		{Workload: k, Budget: rho, Template: "kron", SplitTerms: true},
	} {
		req.Ledger, req.Out = led, filepath.Join(dir, "out")
		req.PostProcess = tables.Publishable{NonNegative: true, Integer: true}
		req.Data = Data{Histogram: make([]float64, 85*5*2*2)}
		res, err := Run(context.Background(), req)
		if res.Outcome != Refused || !errors.Is(err, ErrPartsPostProcess) {
			t.Fatalf("%+v: %v %v", req.SplitTerms, res.Outcome, err)
		}
		// Without post-processing the same release is published.
		req.PostProcess = tables.Publishable{}
		req.Ledger = ""
		res, err = Run(context.Background(), req)
		if res.Outcome != Released {
			t.Fatalf("without post-processing: %v %v", res.Outcome, err)
		}
		os.RemoveAll(req.Out)
	}
	after, _ := os.ReadFile(led)
	if !bytes.Equal(before, after) {
		t.Fatal("the ledger changed")
	}
}
