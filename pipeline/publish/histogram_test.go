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

	"github.com/dpsolve/dpsolve/mechanism/strategy"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/pipeline/release"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/ledger"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// histSteps are RunHistogram's steps, in order, for two output files.
var histSteps = []string{"check", "reserved", "prepared", "charge", "charged", "drawn", "write A", "write B", "commit", "committed"}

func histRequest(t *testing.T, dir, led string) HistogramRequest {
	t.Helper()
	h2, err := strategy.NewH2(8)
	if err != nil {
		t.Fatal(err)
	}
	w, err := workload.NewPrefix(8)
	if err != nil {
		t.Fatal(err)
	}
	rho, _ := calibrate.ZCDP(0.5)
	text := func(v func(*release.Result) []float64) func(io.Writer, *release.Result) error {
		return func(o io.Writer, r *release.Result) error {
			for _, x := range v(r) {
				fmt.Fprintf(o, "%g\n", x)
			}
			return nil
		}
	}
	return HistogramRequest{
		Release: release.Request{Strategy: h2.Matrix(), Budget: rho, Data: []float64{3, 0, 1, 4, 1, 5, 9, 2},
			Workload: w, Noise: noise.NewSeededInsecure(3)},
		Ledger: led,
		Outputs: []OutputFile{{Path: filepath.Join(dir, "A"), Write: text(func(r *release.Result) []float64 { return r.Answers })},
			{Path: filepath.Join(dir, "B"), Write: text(func(r *release.Result) []float64 { return r.XHat })}},
	}
}

// TestHistogramFaultInjection makes RunHistogram panic, fail and be
// cancelled at each step and checks the ledger's bytes changed exactly when
// the outcome says charged, both outputs exist exactly when released, and
// no temporary file is left behind.
func TestHistogramFaultInjection(t *testing.T) {
	for _, step := range histSteps {
		for _, kind := range []string{"panic", "error", "cancel"} {
			t.Run(step+"/"+kind, func(t *testing.T) {
				dir := t.TempDir()
				led := filepath.Join(dir, "ledger.json")
				limit, _ := calibrate.ZCDP(1)
				if err := ledger.Create(led, limit); err != nil {
					t.Fatal(err)
				}
				before, _ := os.ReadFile(led)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				req := histRequest(t, dir, led)
				req.fault = func(_ context.Context, s string) error {
					s = strings.TrimPrefix(s, "write "+dir+string(filepath.Separator))
					if s != strings.TrimPrefix(step, "write ") {
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
				res, err := RunHistogram(ctx, req)
				after, _ := os.ReadFile(led)
				if changed := !bytes.Equal(before, after); changed != res.Charged() {
					t.Fatalf("ledger changed %v, outcome %v (%v)", changed, res.Outcome, err)
				}
				_, errA := os.Stat(filepath.Join(dir, "A"))
				_, errB := os.Stat(filepath.Join(dir, "B"))
				if (errA == nil) != (res.Outcome == Released) || (errB == nil) != (res.Outcome == Released) {
					t.Fatalf("outputs %v %v, outcome %v (%v)", errA, errB, res.Outcome, err)
				}
				if err != res.Reason || (err == nil) != (res.Outcome == Released) {
					t.Fatalf("err %v, reason %v", err, res.Reason)
				}
				want := Refused
				switch step {
				case "committed":
					want = Released
				case "charged", "drawn", "write A", "write B", "commit":
					want = ChargedNotReleased
				}
				if res.Outcome != want {
					t.Fatalf("outcome %v, want %v (%v)", res.Outcome, want, err)
				}
				var pe *PanicError
				if kind == "panic" && want != Released && (!errors.As(err, &pe) || !strings.Contains(err.Error(), "injected at")) {
					t.Fatalf("panic not reported: %v", err)
				}
				var se *SpentError
				if want == ChargedNotReleased && !errors.As(err, &se) {
					t.Fatalf("no SpentError: %v", err)
				}
				left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*"))
				if len(left) != 0 {
					t.Fatalf("left behind: %v", left)
				}
			})
		}
	}
}

// TestHistogramRefusesDirectoryOutput: an output path that is a directory
// (empty or not) is refused before anything is charged; a released
// histogram's answers equal release.Run's with the same seed.
func TestHistogramRefusesDirectoryOutput(t *testing.T) {
	dir := t.TempDir()
	led := filepath.Join(dir, "ledger.json")
	limit, _ := calibrate.ZCDP(1)
	ledger.Create(led, limit)
	req := histRequest(t, dir, led)
	if err := os.MkdirAll(filepath.Join(dir, "B", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := RunHistogram(context.Background(), req)
	if res.Outcome != Refused || !errors.Is(err, ErrOutput) || !strings.Contains(err.Error(), "is a directory") {
		t.Fatalf("%v %v", res.Outcome, err)
	}
	if f, _ := ledger.Read(led); len(f.Spent) != 0 {
		t.Fatal("charged")
	}
	if _, err := os.Stat(filepath.Join(dir, "A")); err == nil {
		t.Fatal("A written")
	}
	os.RemoveAll(filepath.Join(dir, "B"))
	res, err = RunHistogram(context.Background(), req)
	if err != nil || res.Outcome != Released {
		t.Fatal(res.Outcome, err)
	}
	ref := req.Release
	ref.Noise = noise.NewSeededInsecure(3)
	want, err := release.Run(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range want.Answers {
		if res.Release.Answers[i] != v {
			t.Fatalf("answer %d: %v, release.Run %v", i, res.Release.Answers[i], v)
		}
	}
	if f, _ := ledger.Read(led); len(f.Spent) != 1 || f.Spent[0].Label != filepath.Join(dir, "A") {
		t.Fatalf("ledger %+v", f.Spent)
	}
}
