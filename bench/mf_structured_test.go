package bench

import (
	"bytes"
	"context"
	"math"
	"os/exec"
	"strings"
	"testing"
)

// Structured cases parse with b and k together, run, and print their own
// table with the bound below the loss and the reference figures.
func TestMFStructuredRows(t *testing.T) {
	cases, err := ParseMFCases("n=2052,b=342,k=6,family=blt;n=600,b=100,k=3,family=toeplitz,bands=8")
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 2 || cases[0] != (MFCase{N: 2052, MinSep: 342, Epochs: 6, Workload: "prefix", Family: "blt"}) || cases[1].Bands != 8 {
		t.Fatalf("parsed %+v", cases)
	}
	if _, err := ParseMFCases("n=64,b=8,family=dense"); err == nil {
		t.Fatal("family=dense accepted")
	}
	rows, err := (&MFBench{}).Run(context.Background(), cases)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if !(r.BoundMean > 0 && r.BoundMean < r.Loss) {
			t.Fatalf("%+v: bound %v loss %v", r.Case, r.BoundMean, r.Loss)
		}
	}
	// RefLoss is the 84.32, quoted to 4 digits (the peer's 84.322932):
	// dpsolve's loss at most half a unit above it.
	if rows[0].Loss > 84.32+0.005 || rows[0].RefLoss != 84.32 {
		t.Fatalf("blt row %+v", rows[0])
	}
	var buf bytes.Buffer
	if err := WriteMFMarkdown(&buf, rows); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "| 2052 | 342 | 6 | blt | prefix |") {
		t.Fatalf("table:\n%s", buf.String())
	}
}

// The structured keys parse (error=, buffers=) and are refused on dense
// cases or with bad values; the peer's command line carries the case's n,
// separation (n/k for a fixed-epoch case), participations, workload,
// error, memory and time cap.
func TestMFStructuredPeerArgs(t *testing.T) {
	cases, err := ParseMFCases("n=64,b=16,k=4,family=blt,buffers=2,error=max;n=64,k=4,family=toeplitz,workload=momentum:0.9")
	if err != nil {
		t.Fatal(err)
	}
	if cases[0] != (MFCase{N: 64, MinSep: 16, Epochs: 4, Workload: "prefix", Family: "blt", MaxBuffers: 2, Error: "max"}) {
		t.Fatalf("parsed %+v", cases[0])
	}
	for _, bad := range []string{"n=64,k=4,error=max", "n=64,k=4,buffers=2", "n=64,b=8,family=blt,error=median", "n=64,b=8,family=blt,buffers=-1", "n=64,b=8,family=toeplitz,bands=x"} {
		if _, err := ParseMFCases(bad); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
	b := &MFBench{MaxSeconds: 30}
	got := strings.Join(b.structuredPeerArgs(cases[0], "p.py"), " ")
	if want := "-B p.py --family blt --n 64 --min-sep 16 --epochs 4 --workload prefix --error max --max-buffers 2 --time-limit 30"; got != want {
		t.Errorf("blt args\n got %s\nwant %s", got, want)
	}
	got = strings.Join(b.structuredPeerArgs(cases[1], "p.py"), " ")
	if want := "-B p.py --family toeplitz --n 64 --min-sep 16 --epochs 4 --workload momentum:0.9 --error mean --bands 16 --time-limit 30"; got != want {
		t.Errorf("toeplitz args\n got %s\nwant %s", got, want)
	}
}

// A structured speed-up is marked "≥" exactly when the peer was stopped by
// its time cap while its loss was still above dpsolve's (it had not reached
// dpsolve's accuracy); a peer that finished its algorithm, or was capped
// already below dpsolve's loss, gets the plain ratio. The row shows the
// peer's loss, dpsolve's score of it with their relative difference, its
// memory, times and stop, or the peer's error.
func TestMFStructuredSpeedupMarksCappedPeers(t *testing.T) {
	row := func(p *mfStructuredPeerRun, peerErr string) string {
		r := MFRow{Case: MFCase{N: 2052, MinSep: 342, Epochs: 6, Workload: "prefix", Family: "blt"},
			Seconds: 0.5, CPUSeconds: 0.25, Loss: 84, BoundMean: 42, Memory: 3, StructuredPeer: p, PeerError: peerErr}
		var sb strings.Builder
		if err := WriteMFMarkdown(&sb, []MFRow{r}); err != nil {
			t.Fatal(err)
		}
		return sb.String()
	}
	peer := func(stop string, loss float64) *mfStructuredPeerRun {
		return &mfStructuredPeerRun{Family: "blt", Loss: loss, Rescored: loss * (1 + 2e-15), Buffers: 2, Stop: stop, Seconds: 6, CPUSeconds: 50}
	}
	for _, c := range []struct {
		p    *mfStructuredPeerRun
		err  string
		want string
	}{
		{peer("gain<1%", 84.32), "", "| 84.32 (84.32, rel. diff 2e-15) | 2 | 6.00 (50.00) | gain<1% | 12×; 200× |"},
		{peer("max-buffers", 84.32), "", "| max-buffers | 12×; 200× |"},
		{peer("time", 84.32), "", "| time | ≥ 12×; ≥ 200× |"},
		{peer("time", 83.9), "", "| time | 12×; 200× |"},
		{&mfStructuredPeerRun{Family: "blt", Loss: 90, RescoreError: "coefficients increase", Buffers: 1, Stop: "gain<1%", Seconds: 1, CPUSeconds: 1},
			"", "| 90 (refused: coefficients increase) | 1 | 1.00 (1.00) | gain<1% | 2×; 4× |"},
		{nil, "structured peer: exit status 1: No module named 'numpy'", "| error: structured peer: exit status 1: No module named 'numpy' | — | — | — | — |"},
	} {
		if got := row(c.p, c.err); !strings.Contains(got, c.want) {
			t.Errorf("want %q in\n%s", c.want, got)
		}
	}
	if got := row(nil, ""); !strings.Contains(got, "| 2052 | 342 | 6 | blt | prefix | mean | 3 | 84 | 42 | 2.000 | 0.500 (0.250) | — | — | — | — | — | — |") {
		t.Errorf("row without a peer:\n%s", got)
	}
}

// The reference peer, run end to end on tiny cases (n = 64; a few CPU
// seconds, nearly all in the BLT's second buffer): it stops by its own
// rule, dpsolve's scoring of the strategy it returns agrees with the loss
// it reports, the bound (valid for every mechanism) is below it, and
// dpsolve's optimizer is at or below it.
//
// Tolerance of the agreement, 1e-10 relative: both sides score the same
// parameters by the same formulas (error Σ_t Σ_{j≤t} b_j², sens² from the
// earliest pattern), sums of n non-negative terms in double precision, and
// differ only in how they form the coefficients (numpy's powers split as
// θ^(qK)·θ^r, lfilter, against Go's running products and recurrences):
// relative rounding of order n·ε ≈ 1.4e-14 at n = 64, kept well above.
// A different quantity (another normalization, sens instead of sens², the
// other error kind, a missed participation) differs by far more than 1e-10.
func TestMFStructuredPeerEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the Python peer (a few CPU seconds)")
	}
	if out, err := exec.Command(DefaultPython, "-c", "import numpy, scipy").CombinedOutput(); err != nil {
		t.Skipf("%s lacks numpy/scipy: %s", DefaultPython, out)
	}
	cases, err := ParseMFCases("n=64,b=16,k=4,family=blt;n=64,k=4,family=toeplitz,workload=momentum:0.9,bands=8,error=max;n=64,b=16,k=4,family=toeplitz")
	if err != nil {
		t.Fatal(err)
	}
	b := &MFBench{Python: DefaultPython, MaxSeconds: 120}
	rows, err := b.Run(context.Background(), cases)
	if err != nil {
		t.Fatal(err)
	}
	wantStop := map[string]string{"blt": "gain<1%", "toeplitz": "max-steps"}
	for _, r := range rows {
		p := r.StructuredPeer
		if r.PeerError != "" || p == nil {
			t.Fatalf("%+v: peer error %q", r.Case, r.PeerError)
		}
		if p.Stop != wantStop[r.Case.Family] {
			t.Errorf("%+v: peer stopped with %q", r.Case, p.Stop)
		}
		if p.RescoreError != "" || math.Abs(p.Rescored-p.Loss) > 1e-10*p.Loss {
			t.Errorf("%+v: peer's loss %.17g, dpsolve's score of its strategy %.17g (%s)", r.Case, p.Loss, p.Rescored, p.RescoreError)
		}
		if !(r.BoundMean <= p.Loss) {
			t.Errorf("%+v: bound %v above the peer's loss %v", r.Case, r.BoundMean, p.Loss)
		}
		// dpsolve's optimizer reaches the peer's loss (1e-9: both at the
		// same optimum when the peer finds it).
		if r.Loss > p.Loss*(1+1e-9) {
			t.Errorf("%+v: dpsolve's loss %.10g above the peer's %.10g", r.Case, r.Loss, p.Loss)
		}
	}
	if rows[0].StructuredPeer.Buffers < 1 || rows[1].StructuredPeer.Bands != 8 || rows[2].StructuredPeer.Bands != 16 {
		t.Errorf("peer memory %d, %d, %d", rows[0].StructuredPeer.Buffers, rows[1].StructuredPeer.Bands, rows[2].StructuredPeer.Bands)
	}
	var sb strings.Builder
	if err := WriteMFMarkdown(&sb, rows); err != nil || !strings.Contains(sb.String(), "| 64 | 16 | 4 | toeplitz | momentum:0.9 | max | 8 |") || !strings.Contains(sb.String(), "rel. diff") {
		t.Errorf("table: %v\n%s", err, sb.String())
	}
}
