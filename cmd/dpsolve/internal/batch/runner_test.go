package batch

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fixture is a manifest folder, an output folder, and a runner whose jobs
// are the test binary in fakeJob mode.
type fixture struct {
	t       *testing.T
	dir     string
	out     string
	durable bool // Runner.Durable
	threads int  // Runner.Threads (-1: 0, leave the environment)
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	return &fixture{t: t, dir: dir, out: filepath.Join(dir, "out")}
}

// run writes lines as the manifest and runs the given shard (nil: all).
func (f *fixture) run(ctx context.Context, lines []string, workers int) []Outcome {
	f.t.Helper()
	p := filepath.Join(f.dir, "m.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		f.t.Fatal(err)
	}
	m, err := ReadManifest(p)
	if err != nil {
		f.t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		f.t.Fatal(err)
	}
	threads := 1
	switch {
	case f.threads < 0:
		threads = 0
	case f.threads > 0:
		threads = f.threads
	}
	r := &Runner{Exe: exe, Manifest: m, Out: f.out, Workers: workers, Threads: threads,
		Env: append(os.Environ(), "BATCH_TEST_CHILD=1", "OPENBLAS_NUM_THREADS=7"), GracePeriod: 2 * time.Second, Durable: f.durable}
	outs, err := r.Run(ctx, m.Jobs)
	if err != nil {
		f.t.Fatal(err)
	}
	return outs
}

func (f *fixture) read(id, name string) string {
	f.t.Helper()
	b, err := os.ReadFile(filepath.Join(f.out, id, name))
	if err != nil {
		f.t.Fatal(err)
	}
	return string(b)
}

func (f *fixture) status(id string) *Status {
	f.t.Helper()
	st, err := ReadStatus(filepath.Join(f.out, id))
	if err != nil || st == nil {
		f.t.Fatalf("status of %s: %v, %v", id, st, err)
	}
	return st
}

func job(id, command string, args ...string) string {
	b, _ := json.Marshal(map[string]any{"id": id, "command": command, "args": args})
	return string(b)
}

func results(outs []Outcome) string {
	var s []string
	for _, o := range outs {
		s = append(s, o.ID+":"+string(o.Result))
	}
	return strings.Join(s, " ")
}

func TestRunnerRunsSkipsAndReruns(t *testing.T) {
	f := newFixture(t)
	lines := []string{
		job("cwd", "solve", "--cwd", "--env", "OPENBLAS_NUM_THREADS", "--env", "GOMAXPROCS"),
		job("out", "solve", "--write", "{out}/result.txt", "--stdout", `{"objective": 1.5, "gap": 1e-9, "seconds": 0.25, "nested": {"a": 1}}`),
		job("bad", "solve", "--stderr", "progress line", "--stderr", "dpsolve solve: open x.npy: no such file", "--exit", "1"),
		job("late", "solve", "--sleep", "50ms", "--stdout", "late"),
	}
	outs := f.run(context.Background(), lines, 2)
	if got, want := results(outs), "cwd:succeeded out:succeeded bad:failed late:succeeded"; got != want {
		t.Fatalf("first run: %s, want %s", got, want)
	}
	// Jobs run in the manifest's folder, with the runner's thread count
	// replacing the inherited OPENBLAS_NUM_THREADS.
	if got, want := f.read("cwd", StdoutFile), f.dir+"\nOPENBLAS_NUM_THREADS=1\nGOMAXPROCS=1\n"; got != want {
		t.Errorf("cwd stdout = %q, want %q", got, want)
	}
	if got := f.read("out", "result.txt"); got != "written\n" {
		t.Errorf("{out} did not expand to the job folder: %q", got)
	}
	bad := f.status("bad")
	if bad.State != Failed || bad.Exit != 1 || bad.Error != "dpsolve solve: open x.npy: no such file (exit status 1)" {
		t.Errorf("bad status = %+v", bad)
	}
	if outs[2].Error != bad.Error {
		t.Errorf("outcome error %q differs from the status's %q", outs[2].Error, bad.Error)
	}
	good := f.status("late")
	if good.State != Succeeded || good.Exit != 0 || good.Seconds < 0.05 || good.Hash == "" || good.Finished == nil || good.PID != os.Getpid() {
		t.Errorf("late status = %+v", good)
	}
	if _, err := os.Stat(filepath.Join(f.out, "late", "."+StdoutFile+".tmp")); !os.IsNotExist(err) {
		t.Errorf("temporary stdout left behind: %v", err)
	}

	// A rerun skips the succeeded jobs without touching their files and
	// runs the failed one again.
	before := map[string]string{}
	for _, id := range []string{"cwd", "out", "late"} {
		before[id] = f.read(id, StatusFile)
	}
	lines[2] = job("bad", "solve", "--stdout", "fixed")
	outs = f.run(context.Background(), lines, 2)
	if got, want := results(outs), "cwd:skipped out:skipped bad:succeeded late:skipped"; got != want {
		t.Fatalf("rerun: %s, want %s", got, want)
	}
	for id, b := range before {
		if f.read(id, StatusFile) != b {
			t.Errorf("the rerun rewrote the status of %s, which had succeeded", id)
		}
	}
	// Changing a succeeded job's line runs it again.
	lines[3] = job("late", "solve", "--stdout", "changed")
	outs = f.run(context.Background(), lines, 1)
	if got, want := results(outs), "cwd:skipped out:skipped bad:skipped late:succeeded"; got != want {
		t.Fatalf("after the change: %s, want %s", got, want)
	}
	if got := f.read("late", StdoutFile); got != "changed\n" {
		t.Errorf("stdout after the change = %q", got)
	}

	// status and collect see the same.
	reps, err := Scan(f.out, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 4 {
		t.Fatalf("Scan found %d jobs", len(reps))
	}
	csvPath := filepath.Join(f.dir, "r.csv")
	if err := CollectCSV(csvPath, reps); err != nil {
		t.Fatal(err)
	}
	rf, _ := os.Open(csvPath)
	defer rf.Close()
	recs, err := csv.NewReader(rf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"id", "command", "state", "exit", "wall_seconds", "error", "objective", "gap", "seconds"},
		{"bad", "solve", "succeeded", "0"},
		{"cwd", "solve", "succeeded", "0"},
		{"late", "solve", "succeeded", "0"},
		{"out", "solve", "succeeded", "0", "", "", "1.5", "1e-9", "0.25"},
	}
	if len(recs) != len(want) {
		t.Fatalf("csv has %d rows: %v", len(recs), recs)
	}
	for i, w := range want {
		for c, v := range w {
			if c == 4 && i > 0 {
				continue // wall time varies
			}
			if recs[i][c] != v {
				t.Errorf("csv row %d column %d = %q, want %q (row %v)", i, c, recs[i][c], v, recs[i])
			}
		}
	}
}

func TestRunnerBusyJobIsNotRun(t *testing.T) {
	f := newFixture(t)
	if err := os.MkdirAll(filepath.Join(f.out, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	lk, err := tryLock(filepath.Join(f.out, "a", LockFile))
	if err != nil {
		t.Fatal(err)
	}
	outs := f.run(context.Background(), []string{job("a", "solve", "--write", "{out}/ran"), job("b", "solve")}, 2)
	lk.unlock()
	if got := results(outs); got != "a:busy b:succeeded" {
		t.Fatalf("got %s", got)
	}
	if _, err := os.Stat(filepath.Join(f.out, "a", "ran")); !os.IsNotExist(err) {
		t.Error("a locked job ran")
	}
	outs = f.run(context.Background(), []string{job("a", "solve", "--write", "{out}/ran"), job("b", "solve")}, 2)
	if got := results(outs); got != "a:succeeded b:skipped" {
		t.Fatalf("after unlocking: %s", got)
	}
}

// writeStarted leaves the status a batch killed mid-job leaves.
func writeStarted(t *testing.T, dir string, j Job) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	st := &Status{ID: j.ID, Command: j.Command, State: Started, Exit: -1, Hash: j.Hash, Releases: Releases(j.Command), Host: "elsewhere", PID: 1 << 30}
	if err := WriteStatus(dir, st, true); err != nil {
		t.Fatal(err)
	}
}

func TestRunnerReleaseJobsAreNeverRepeated(t *testing.T) {
	f := newFixture(t)
	lines := []string{
		job("interrupted", "answer", "--write", "{out}/noise"),
		job("crashed", "run", "--stderr", "dpsolve run: cannot write out.npy", "--exit", "1"),
		job("usage", "release", "--stderr", "dpsolve release: --eps is required", "--outcome", "refused", "--exit", "2"),
		job("ok", "answer", "--write", "{out}/answers"),
		job("plain", "solve", "--write", "{out}/x"),
	}
	jobs, err := ParseManifest(strings.NewReader(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	// Two jobs were interrupted by a killed batch: the release job may
	// have drawn noise, the solve job is simply run again.
	writeStarted(t, filepath.Join(f.out, "interrupted"), jobs[0])
	writeStarted(t, filepath.Join(f.out, "plain"), jobs[4])
	outs := f.run(context.Background(), lines, 2)
	if got, want := results(outs), "interrupted:needs_review crashed:needs_review usage:failed ok:succeeded plain:succeeded"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	if _, err := os.Stat(filepath.Join(f.out, "interrupted", "noise")); !os.IsNotExist(err) {
		t.Error("an interrupted release job was run again")
	}
	st := f.status("interrupted")
	if st.State != NeedsReview || !strings.Contains(st.Error, "may have drawn noise") || !strings.Contains(outs[0].Error, "interrupted after it started") {
		t.Errorf("interrupted: status %+v, outcome %+v", st, outs[0])
	}
	if st := f.status("crashed"); st.State != NeedsReview || !strings.HasPrefix(st.Error, "dpsolve run: cannot write out.npy (exit status 1); the job releases data") {
		t.Errorf("crashed: %+v", st)
	}
	if st := f.status("usage"); st.State != Failed || st.Exit != 2 {
		t.Errorf("usage: %+v", st)
	}

	// The rerun repeats only the release job that failed before it could
	// draw noise (bad command line), and keeps reporting the others.
	reviewBefore := f.read("interrupted", StatusFile) + f.read("crashed", StatusFile)
	okBefore := f.read("ok", StatusFile)
	lines[2] = job("usage", "release", "--write", "{out}/answers")
	lines[3] = job("ok", "answer", "--write", "{out}/answers", "--changed")
	outs = f.run(context.Background(), lines, 2)
	if got, want := results(outs), "interrupted:needs_review crashed:needs_review usage:succeeded ok:needs_review plain:skipped"; got != want {
		t.Fatalf("rerun: got %s, want %s", got, want)
	}
	if f.read("interrupted", StatusFile)+f.read("crashed", StatusFile) != reviewBefore {
		t.Error("the rerun changed the needs-review statuses")
	}
	if f.read("ok", StatusFile) != okBefore || !strings.Contains(outs[3].Error, "manifest line changed after this job released data") {
		t.Errorf("a released job whose line changed: %+v", outs[3])
	}
	// Deleting the status is the documented way to allow a rerun.
	os.Remove(filepath.Join(f.out, "interrupted", StatusFile))
	outs = f.run(context.Background(), lines, 2)
	if outs[0].Result != Ran {
		t.Errorf("after deleting its status: %+v", outs[0])
	}
}

func TestRunnerCancel(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	lines := []string{job("slow", "solve", "--sleep", "20s"), job("next", "solve")}
	go func() {
		// Cancel once the slow job is running.
		for {
			if ReadJob(f.out, "slow").Category() == "running" {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond)
		cancel()
	}()
	t0 := time.Now()
	outs := f.run(ctx, lines, 1)
	if d := time.Since(t0); d > 10*time.Second {
		t.Errorf("cancel took %v: SIGTERM did not stop the job", d)
	}
	if got := results(outs); got != "slow:failed next:not_run" {
		t.Fatalf("got %s", got)
	}
	if st := f.status("slow"); st.State != Failed || !strings.Contains(st.Error, "interrupted") {
		t.Errorf("slow: %+v", st)
	}
	if _, err := os.Stat(filepath.Join(f.out, "next")); !os.IsNotExist(err) {
		t.Error("a job after the cancel was started")
	}
}

func TestScanWithManifest(t *testing.T) {
	f := newFixture(t)
	lines := []string{job("a", "solve"), job("b", "solve", "--exit", "3")}
	f.run(context.Background(), lines, 1)
	lines = append(lines, job("c", "solve"))
	p := filepath.Join(f.dir, "m.jsonl")
	os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644)
	m, err := ReadManifest(p)
	if err != nil {
		t.Fatal(err)
	}
	reps, err := Scan(f.out, m)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range reps {
		got = append(got, r.ID+":"+r.Category())
	}
	if strings.Join(got, " ") != "a:succeeded b:failed c:not_started" {
		t.Errorf("Scan = %v", got)
	}
	// A started job whose batch is alive on this host is running, one
	// whose batch is gone is interrupted.
	host, _ := os.Hostname()
	for pid, want := range map[int]string{os.Getpid(): "running", 1 << 30: "interrupted"} {
		st := &Status{ID: "c", Command: "solve", State: Started, Exit: -1, Host: host, PID: pid}
		os.MkdirAll(filepath.Join(f.out, "c"), 0o755)
		if err := WriteStatus(filepath.Join(f.out, "c"), st, false); err != nil {
			t.Fatal(err)
		}
		reps, _ = Scan(f.out, m)
		if c := reps[2].Category(); c != want {
			t.Errorf("pid %d: %s, want %s", pid, c, want)
		}
	}
}

func TestScanSeesUnfinishedAttempts(t *testing.T) {
	f := newFixture(t)
	lines := []string{job("a", "solve"), job("b", "solve", "--exit", "1")}
	f.run(context.Background(), lines, 1)
	if c := ReadJob(f.out, "a").Category(); c != "succeeded" {
		t.Fatalf("a: %s", c)
	}
	// A later attempt's start record in the lock file, from a batch that
	// is alive (this process) or gone.
	host, _ := os.Hostname()
	for _, id := range []string{"a", "b"} {
		for pid, want := range map[int]string{os.Getpid(): "running", 1 << 30: "interrupted"} {
			st := f.status(id)
			rec := Status{ID: id, Command: "solve", State: Started, Exit: -1, Host: host, PID: pid, Start: st.Start.Add(time.Second)}
			b, _ := json.Marshal(rec)
			if err := os.WriteFile(filepath.Join(f.out, id, LockFile), b, 0o644); err != nil {
				t.Fatal(err)
			}
			rep := ReadJob(f.out, id)
			if rep.Category() != want {
				t.Errorf("%s, pid %d: %s, want %s", id, pid, rep.Category(), want)
			}
			if want == "interrupted" && !strings.Contains(rep.Message(), "is gone") {
				t.Errorf("%s: message %q", id, rep.Message())
			}
		}
	}
	// A half-written record means the attempt is starting now.
	os.WriteFile(filepath.Join(f.out, "a", LockFile), []byte(`{"id":`), 0o644)
	if c := ReadJob(f.out, "a").Category(); c != "running" {
		t.Errorf("half-written record: %s", c)
	}
}

// TestThreadsZeroLeavesTheEnvironment: with Threads 0 the jobs inherit the
// thread variables as they are (the batch's user set them).
func TestThreadsZeroLeavesTheEnvironment(t *testing.T) {
	f := newFixture(t)
	f.threads = -1
	f.run(context.Background(), []string{job("env", "solve", "--env", "OPENBLAS_NUM_THREADS")}, 1)
	if got := f.read("env", StdoutFile); got != "OPENBLAS_NUM_THREADS=7\n" {
		t.Errorf("the job saw %q", got)
	}
}

// TestDurableRun: with Runner.Durable the jobs' outcomes, statuses and
// outputs are exactly those of an ordinary run, and the folders hold no
// temporary files. (That the data reached the disk cannot be observed short
// of crashing the machine; syncTree's choice of files is checked below.)
func TestDurableRun(t *testing.T) {
	lines := []string{
		job("ok", "solve", "--stdout", "hello", "--write", "{out}/A.txt"),
		job("bad", "solve", "--stderr", "no such workload", "--exit", "1"),
	}
	var got [2]string
	for k, durable := range []bool{false, true} {
		f := newFixture(t)
		f.durable = durable
		got[k] = results(f.run(context.Background(), lines, 2))
		if st := f.status("ok"); st.State != Succeeded || st.Exit != 0 {
			t.Errorf("durable=%v: ok: %+v", durable, st)
		}
		if st := f.status("bad"); st.State != Failed || st.Error != "no such workload (exit status 1)" {
			t.Errorf("durable=%v: bad: %+v", durable, st)
		}
		if out, a := f.read("ok", StdoutFile), f.read("ok", "A.txt"); out != "hello\n" || a != "written\n" {
			t.Errorf("durable=%v: stdout %q, A.txt %q", durable, out, a)
		}
		for _, id := range []string{"ok", "bad"} {
			ents, _ := os.ReadDir(filepath.Join(f.out, id))
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), ".") {
					t.Errorf("durable=%v: %s holds the temporary file %s", durable, id, e.Name())
				}
			}
		}
	}
	if got[0] != got[1] {
		t.Errorf("outcomes differ: %s (ordinary) vs %s (durable)", got[0], got[1])
	}
}

// TestNeedsSync: syncTree syncs a job's outputs (stdout, stderr, files it
// wrote) but not its status (rewritten durably right after), its lock
// file, hidden temporary files or folders.
func TestNeedsSync(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{StdoutFile, StderrFile, "A.npy", StatusFile, LockFile, ".status.json.tmp123", ".A.npy.tmp9"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var synced []string
	for _, e := range ents {
		if needsSync(e) {
			synced = append(synced, e.Name())
		}
	}
	if got, want := strings.Join(synced, " "), "A.npy stderr stdout"; got != want {
		t.Errorf("syncs %q, want %q", got, want)
	}
	if err := syncTree(dir); err != nil {
		t.Error(err)
	}
}

func TestWriteStatusIsAtomic(t *testing.T) {
	dir := t.TempDir()
	st := &Status{ID: "a", State: Succeeded, Exit: 0, Hash: "h"}
	for _, durable := range []bool{false, true} {
		if err := WriteStatus(dir, st, durable); err != nil {
			t.Fatal(err)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != StatusFile {
		t.Errorf("folder holds %v, want only %s", ents, StatusFile)
	}
	got, err := ReadStatus(dir)
	if err != nil || got.ID != "a" || got.State != Succeeded {
		t.Errorf("ReadStatus = %+v, %v", got, err)
	}
	if got, err := ReadStatus(filepath.Join(dir, "none")); got != nil || err != nil {
		t.Errorf("missing status: %v, %v", got, err)
	}
	os.WriteFile(filepath.Join(dir, StatusFile), []byte("{"), 0o644)
	if _, err := ReadStatus(dir); err == nil {
		t.Error("a corrupt status was accepted")
	}
}

func TestLastLine(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "e")
	long := bytes.Repeat([]byte("x"), 6000)
	os.WriteFile(p, append(append([]byte("first\n"), long...), []byte("\nlast line  \n\n")...), 0o644)
	if got := lastLine(p); got != "last line" {
		t.Errorf("lastLine = %q", got)
	}
	os.WriteFile(p, long, 0o644)
	if got := lastLine(p); len(got) != 500+len("…") {
		t.Errorf("a long line was not cut: %d bytes", len(got))
	}
	if got := lastLine(filepath.Join(dir, "missing")); got != "" {
		t.Errorf("missing file: %q", got)
	}
}

// ExampleParseManifest shows a manifest and the folders its jobs write to.
func ExampleParseManifest() {
	manifest := `{"id": "prefix-64", "command": "solve", "args": ["--workload", "prefix", "--n", "64", "--json", "--out-a", "{out}/A.npy"]}
{"id": "range-64", "command": "solve", "args": ["--workload", "allrange", "--n", "64", "--json"]}
`
	jobs, err := ParseManifest(strings.NewReader(manifest))
	if err != nil {
		fmt.Println(err)
		return
	}
	for k, j := range jobs {
		fmt.Println(j.ID, "shard", k%2, "of 2:", j.Command, strings.Join(j.ExpandArgs("out/"+j.ID), " "))
	}
	// Output:
	// prefix-64 shard 0 of 2: solve --workload prefix --n 64 --json --out-a out/prefix-64/A.npy
	// range-64 shard 1 of 2: solve --workload allrange --n 64 --json
}

func TestRunnerInProcess(t *testing.T) {
	f := newFixture(t)
	p := filepath.Join(f.dir, "m.jsonl")
	lines := []string{job("a", "solve", "{out}/x"), job("b", "solve", "boom"), job("c", "compare", "--stdout", "child"), job("d", "answer", "--stdout", "child")}
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := ReadManifest(p)
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	var calls []string
	var mu sync.Mutex
	r := &Runner{Exe: exe, Manifest: m, Out: f.out, Workers: 2, Env: append(os.Environ(), "BATCH_TEST_CHILD=1"),
		InProcess: func(cmd string, args []string, stdout, stderr io.Writer) (int, bool) {
			mu.Lock()
			calls = append(calls, cmd)
			mu.Unlock()
			if cmd != "solve" {
				return 0, false
			}
			if args[0] == "boom" {
				panic("boom")
			}
			fmt.Fprintln(stdout, "in-process", args[0])
			return 0, true
		}}
	outs, err := r.Run(context.Background(), m.Jobs)
	if err != nil {
		t.Fatal(err)
	}
	if got := results(outs); got != "a:succeeded b:failed c:succeeded d:succeeded" {
		t.Fatalf("got %s", got)
	}
	if got, want := f.read("a", StdoutFile), "in-process "+filepath.Join(f.out, "a", "x")+"\n"; got != want {
		t.Errorf("a: stdout %q, want %q", got, want)
	}
	if st := f.status("b"); !strings.Contains(st.Error, "panicked in-process: boom") {
		t.Errorf("b: %+v", st)
	}
	if got := f.read("c", StdoutFile); got != "child\n" {
		t.Errorf("c: %q", got)
	}
	// Release jobs never reach InProcess.
	for _, c := range calls {
		if c == "answer" {
			t.Error("a release job was offered to InProcess")
		}
	}
}
