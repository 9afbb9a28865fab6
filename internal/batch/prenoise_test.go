package batch

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The messages below are dpsolve release's, as it prints them (checked
// end to end against the real command in cmd/dpsolve's
// TestBatchReleasesShareOneLedger).
const (
	ledgerRefusal = "dpsolve release: ledger: invalid input: budget exceeded: L.json: this release costs rho=0.3 but rho=0.9 of the limit rho=1 is already spent over 3 release(s); nothing was released"
	noData        = "dpsolve release: release: invalid input: data: open missing.csv: no such file or directory"
	afterNoise    = "dpsolve release: creating the output: stat nodir: no such file or directory"
)

func TestRunnerReleaseRefusedBeforeNoiseIsRetried(t *testing.T) {
	f := newFixture(t)
	full := filepath.Join(f.dir, "full")
	if err := os.MkdirAll(full, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(full, "answers.csv"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lines := []string{
		job("refused", "release", "--out", "{out}/rel", "--stderr", ledgerRefusal, "--exit", "1"),
		job("nodata", "release", "--out={out}/rel", "--stderr", noData, "--exit", "1"),
		job("after-noise", "release", "--out", "{out}/rel", "--stderr", afterNoise, "--exit", "1"),
		// The same message from run, or with outputs in --out, or from a
		// job killed by a signal, proves nothing.
		job("run-cmd", "run", "--out", "{out}/rel", "--stderr", ledgerRefusal, "--exit", "1"),
		job("has-output", "release", "--out", "full", "--stderr", ledgerRefusal, "--exit", "1"),
		job("exit-3", "release", "--stderr", ledgerRefusal, "--exit", "3"),
		job("newline", "release", "--label", "x\n"+ledgerRefusal, "--stderr", ledgerRefusal, "--exit", "1"),
	}
	outs := f.run(context.Background(), lines, 2)
	want := "refused:failed nodata:failed after-noise:needs_review run-cmd:needs_review has-output:needs_review exit-3:needs_review newline:needs_review"
	if got := results(outs); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	st := f.status("refused")
	if st.State != Failed || st.Exit != 1 || !strings.HasPrefix(st.Error, ledgerRefusal+" (exit status 1); it failed before drawing any noise") {
		t.Errorf("refused: %+v", st)
	}
	// A rerun runs the jobs that failed before sampling again (here they
	// fail the same way) and leaves the others alone.
	review := map[string]string{}
	for _, id := range []string{"after-noise", "run-cmd", "has-output", "exit-3", "newline"} {
		review[id] = f.read(id, StatusFile)
	}
	before := f.status("refused").Start
	outs = f.run(context.Background(), lines, 2)
	if got := results(outs); got != want {
		t.Fatalf("rerun: got  %s\nwant %s", got, want)
	}
	if !f.status("refused").Start.After(before) {
		t.Error("the refused release job was not run again")
	}
	for id, b := range review {
		if f.read(id, StatusFile) != b {
			t.Errorf("%s: a needs-review status changed on the rerun", id)
		}
	}
}

func TestFlagValue(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--spec", "s.json", "--out", "a"}, "a"},
		{[]string{"-out", "a", "--json"}, "a"},
		{[]string{"--out=a", "-out=b"}, "b"},
		{[]string{"--json", "--outx", "a"}, ""},
		{[]string{"--", "--out", "a"}, ""},
		{[]string{"--out"}, ""},
	} {
		if got := flagValue(tc.args, "out"); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.args, got, tc.want)
		}
	}
}
