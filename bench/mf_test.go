package bench

import (
	"context"
	"os/exec"
	"strings"
	"testing"
)

func TestParseMFCases(t *testing.T) {
	got, err := ParseMFCases("n=512,k=4,workload=prefix;n=64,b=8,workload=momentum:0.9,cooldown:16")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != (MFCase{N: 512, Epochs: 4, Workload: "prefix"}) ||
		got[1] != (MFCase{N: 64, MinSep: 8, Workload: "momentum:0.9,cooldown:16"}) {
		t.Errorf("parsed %+v", got)
	}
	for _, bad := range []string{"n=64", "n=64,k=4,b=8", "n=x,k=4", "n=64,k=4,q=1", "k=4"} {
		if _, err := ParseMFCases(bad); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

// The L-BFGS peer, run tight on small cases, never ends below dpsolve's
// certified bound (it cannot: its X is feasible) and comes within 1e-6 of
// dpsolve's objective at the target stop; at its default stop it is above
// the optimum.
func TestMFPeerAgainstCertificate(t *testing.T) {
	if _, err := exec.LookPath(DefaultPython); err != nil {
		t.Skip("no python")
	}
	if out, err := exec.Command(DefaultPython, "-c", "import numpy, scipy").CombinedOutput(); err != nil {
		t.Skipf("numpy/scipy missing: %s", out)
	}
	b := &MFBench{Python: DefaultPython, MaxSeconds: 120}
	rows, err := b.Run(context.Background(), []MFCase{{N: 32, Epochs: 4, Workload: "prefix"}, {N: 32, MinSep: 4, Workload: "momentum:0.5"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.PeerError != "" {
			t.Fatal(r.PeerError)
		}
		if r.Peer.Objective < r.Bound*(1-1e-12) || r.PeerTight.Objective < r.Bound*(1-1e-12) {
			t.Errorf("%+v: peer %v / %v below the certified bound %v", r.Case, r.Peer.Objective, r.PeerTight.Objective, r.Bound)
		}
		if r.PeerTight.Stop != "target" || (r.PeerTight.Objective-r.Objective)/r.Objective > 1e-6 {
			t.Errorf("%+v: tight peer %+v, dpsolve %v", r.Case, r.PeerTight, r.Objective)
		}
		if r.Peer.Stop != "pg-tol" {
			t.Errorf("%+v: default peer stopped with %s", r.Case, r.Peer.Stop)
		}
	}
	var sb strings.Builder
	if err := WriteMFMarkdown(&sb, rows); err != nil || !strings.Contains(sb.String(), "| 32 | 4 |") {
		t.Errorf("table: %v\n%s", err, sb.String())
	}
}

// A speed-up is marked "≥" exactly when its peer run stopped before its
// own rule (the default stop "pg-tol", or "target" for the tight run):
// a capped peer gives a lower bound, a finished one the ratio.
func TestMFSpeedupMarksCappedPeers(t *testing.T) {
	row := func(stop1, stop2 string) string {
		r := MFRow{Case: MFCase{N: 8, Epochs: 2, Workload: "prefix"}, Seconds: 1, CPUSeconds: 1,
			Peer:      &mfPeerRun{Seconds: 3, CPUSeconds: 3, Stop: stop1},
			PeerTight: &mfPeerRun{Seconds: 5, CPUSeconds: 5, Stop: stop2}}
		var sb strings.Builder
		if err := WriteMFMarkdown(&sb, []MFRow{r}); err != nil {
			t.Fatal(err)
		}
		return sb.String()
	}
	for _, c := range []struct{ stop1, stop2, want string }{
		{"pg-tol", "target", "| 3.0× / 5.0×; 3.0× / 5.0× |"},
		{"time", "time", "| ≥ 3.0× / ≥ 5.0×; ≥ 3.0× / ≥ 5.0× |"},
		{"pg-tol", "max-steps", "| 3.0× / ≥ 5.0×; 3.0× / ≥ 5.0× |"},
	} {
		if got := row(c.stop1, c.stop2); !strings.Contains(got, c.want) {
			t.Errorf("peer stops %s, %s: want %q in\n%s", c.stop1, c.stop2, c.want, got)
		}
	}
}
