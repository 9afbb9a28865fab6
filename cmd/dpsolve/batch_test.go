package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/cmd/dpsolve/internal/batch"
	"github.com/dpsolve/dpsolve/internal/matio"
)

// batchJob is one manifest line of the test manifests.
type batchJob struct {
	ID      string   `json:"id"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

// failingJob is the manifest's deliberately failing job, and its message.
const (
	failingJob     = "missing-gram"
	failingMessage = "dpsolve solve: matio: open missing.npy: no such file or directory (exit status 1)"
)

// testManifest writes a manifest of 24 small jobs into dir: solves of
// several workloads and sizes (some from a workload file given by a path
// relative to the manifest), plans of two multi-attribute specs (also
// relative paths; some write a strategy folder), compare tables, and one
// job that fails because its input file does not exist.
func testManifest(t *testing.T, dir string) (string, []batchJob) {
	t.Helper()
	// A 6×12 workload matrix for the relative-path jobs.
	w := make([][]float64, 6)
	for i := range w {
		w[i] = make([]float64, 12)
		for j := range w[i] {
			if j >= i && j <= i+6 {
				w[i][j] = 1
			}
		}
		w[i][(i*5)%12] += 2
	}
	var sb strings.Builder
	for _, row := range w {
		for j, v := range row {
			if j > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, "%g", v)
		}
		sb.WriteByte('\n')
	}
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "inputs"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "inputs", "w.csv"), []byte(sb.String()), 0o644))

	// Two small multi-attribute specs for the plan jobs.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "inputs", "pairs.json"), []byte(`{"domain": [{"name": "a", "size": 3}, {"name": "b", "size": 4}, {"name": "c", "size": 2}],
 "workload": [{"name": "m", "marginals": {"k": 2}}]}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "inputs", "mixed.json"), []byte(`{"domain": [{"name": "a", "size": 4}, {"name": "b", "size": 6}],
 "workload": [{"name": "p", "product": {"a": "identity", "b": "prefix"}},
              {"name": "r", "weight": 2, "product": {"b": "allrange"}}]}`), 0o644))

	var jobs []batchJob
	specs := []string{"prefix", "allrange", "identity", "width:k=3", "wrange:m=400,seed=2", "total"}
	for i := 0; len(jobs) < 14; i++ {
		spec := specs[i%len(specs)]
		n := 8 + 8*(i%6)
		jobs = append(jobs, batchJob{fmt.Sprintf("solve-%02d", i), "solve",
			[]string{"--workload", spec, "--n", fmt.Sprint(n), "--json", "--quiet", "--out-a", "{out}/A.npy"}})
	}
	jobs = append(jobs,
		batchJob{"file-w", "solve", []string{"--w", "inputs/w.csv", "--json", "--quiet", "--out-x", "{out}/X.csv"}},
		batchJob{"file-w-yuan", "solve", []string{"--w", "inputs/w.csv", "--method", "yuan2016", "--json", "--quiet"}},
		batchJob{"plan-pairs-kron", "plan", []string{"--spec", "inputs/pairs.json", "--template", "kron", "--json", "--quiet", "--out", "{out}/strategy"}},
		batchJob{"plan-pairs-pure", "plan", []string{"--spec", "inputs/pairs.json", "--privacy", "pure", "--json", "--quiet"}},
		batchJob{"plan-mixed-best", "plan", []string{"--spec", "inputs/mixed.json", "--json", "--quiet", "--out", "{out}/strategy"}},
		batchJob{"plan-mixed-dense", "plan", []string{"--spec", "inputs/mixed.json", "--template", "dense", "--json", "--quiet", "--out", "{out}/strategy"}},
		batchJob{"compare-prefix", "compare", []string{"--workload", "prefix", "--n", "32", "--json", "--quiet"}},
		batchJob{"compare-range", "compare", []string{"--workload", "allrange", "--n", "24", "--json", "--quiet"}},
		batchJob{"compare-laplace", "compare", []string{"--workload", "width:k=4", "--n", "16", "--mechanism", "laplace", "--json", "--quiet", "--strategies", "identity,h2,wavelet,optimized"}},
	)
	// The failing job sits at index 3, in shard 0 of 3 and 3 of 4.
	jobs = append(jobs[:3], append([]batchJob{{failingJob, "solve", []string{"--gram", "missing.npy", "--json"}}}, jobs[3:]...)...)
	require.Len(t, jobs, 24)
	var buf bytes.Buffer
	for _, j := range jobs {
		b, err := json.Marshal(j)
		require.NoError(t, err)
		buf.Write(append(b, '\n'))
	}
	p := filepath.Join(dir, "jobs.jsonl")
	require.NoError(t, os.WriteFile(p, buf.Bytes(), 0o644))
	return p, jobs
}

// dpsolveCmd runs the test binary as dpsolve.
func dpsolveCmd(t testing.TB, dir string, env []string, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "DPSOLVE_TEST_AS_DPSOLVE=1"), env...)
	return cmd
}

// runDpsolve runs dpsolve to completion and returns its exit status, stdout
// and stderr.
func runDpsolve(t *testing.T, dir string, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := dpsolveCmd(t, dir, env, args...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), so.String(), se.String()
}

// statusOf reads a job's status.json (nil when there is none).
func statusOf(t *testing.T, out, id string) *batch.Status {
	t.Helper()
	st, err := batch.ReadStatus(filepath.Join(out, id))
	require.NoError(t, err)
	return st
}

// snapshotSucceeded returns the bytes of every succeeded job's status.json.
func snapshotSucceeded(t *testing.T, out string, jobs []batchJob) map[string][]byte {
	t.Helper()
	snap := map[string][]byte{}
	for _, j := range jobs {
		if st := statusOf(t, out, j.ID); st != nil && st.State == batch.Succeeded {
			b, err := os.ReadFile(filepath.Join(out, j.ID, batch.StatusFile))
			require.NoError(t, err)
			snap[j.ID] = b
		}
	}
	return snap
}

// dropSeconds removes every "seconds" field (timings) from decoded JSON.
func dropSeconds(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k == "seconds" || strings.HasSuffix(k, "_seconds") {
				delete(x, k)
			} else {
				x[k] = dropSeconds(e)
			}
		}
	case []any:
		for i := range x {
			x[i] = dropSeconds(x[i])
		}
	}
	return v
}

func decodeJSON(t *testing.T, s, what string, ignore ...string) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(s), &v), "%s: %q", what, s)
	if m, ok := v.(map[string]any); ok {
		for _, k := range ignore {
			delete(m, k)
		}
	}
	return dropSeconds(v)
}

// checkFinished checks a finished batch: every job but the failing one
// succeeded, its stdout and output files equal the same job run directly
// (one thread, in the manifest's folder), and batch status and batch
// collect report the failing job with its message.
//
// Fields named in ignore are left out of the comparison.
func checkFinished(t *testing.T, dir, out string, jobs []batchJob, ignore ...string) {
	t.Helper()
	direct := t.TempDir()
	for _, j := range jobs {
		st := statusOf(t, out, j.ID)
		require.NotNil(t, st, j.ID)
		if j.ID == failingJob {
			assert.Equal(t, batch.Failed, st.State)
			assert.Equal(t, 1, st.Exit)
			assert.Equal(t, failingMessage, st.Error)
			continue
		}
		require.Equal(t, batch.Succeeded, st.State, "%s: %s", j.ID, st.Error)
		args := make([]string, len(j.Args))
		jdir := filepath.Join(direct, j.ID)
		require.NoError(t, os.MkdirAll(jdir, 0o755))
		for i, a := range j.Args {
			args[i] = strings.ReplaceAll(a, "{out}", jdir)
		}
		code, so, se := runDpsolve(t, dir, []string{"OPENBLAS_NUM_THREADS=1", "GOMAXPROCS=1"}, append([]string{j.Command}, args...)...)
		require.Equal(t, 0, code, "%s run directly: %s", j.ID, se)
		got, err := os.ReadFile(filepath.Join(out, j.ID, batch.StdoutFile))
		require.NoError(t, err)
		// Output paths in the JSON (plan's "out") name each run's own folder.
		so = strings.ReplaceAll(so, jdir, "{out}")
		batchSo := strings.ReplaceAll(string(got), filepath.Join(out, j.ID), "{out}")
		assert.Equal(t, decodeJSON(t, so, j.ID+" direct", ignore...), decodeJSON(t, batchSo, j.ID+" batch", ignore...), "%s: batch and direct results differ", j.ID)
		files := 0
		require.NoError(t, filepath.WalkDir(jdir, func(f string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			files++
			rel, _ := filepath.Rel(jdir, f)
			want, _ := os.ReadFile(f)
			have, err := os.ReadFile(filepath.Join(out, j.ID, rel))
			require.NoError(t, err, "%s: output %s missing", j.ID, rel)
			assert.True(t, bytes.Equal(want, have), "%s: output %s differs from the direct run's", j.ID, rel)
			return nil
		}))
		if files == 0 && strings.Contains(strings.Join(j.Args, " "), "{out}") {
			t.Errorf("%s: the direct run wrote no output file", j.ID)
		}
	}
	code, so, _ := runDpsolve(t, dir, nil, "batch", "status", out)
	assert.Equal(t, 1, code, "status exits 1 while a job failed")
	assert.Contains(t, so, fmt.Sprintf("%d jobs: %d succeeded, 1 failed", len(jobs), len(jobs)-1))
	assert.Contains(t, so, failingJob+" (solve, exit 1): "+failingMessage)

	csvPath := filepath.Join(dir, "results.csv")
	code, _, se := runDpsolve(t, dir, nil, "batch", "collect", out, "--csv", csvPath, "--manifest", filepath.Join(dir, "jobs.jsonl"))
	require.Equal(t, 0, code, se)
	f, err := os.Open(csvPath)
	require.NoError(t, err)
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	require.Len(t, recs, len(jobs)+1)
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for _, h := range []string{"id", "state", "error", "objective", "gap", "seconds", "workload", "template"} {
		require.Contains(t, col, h)
	}
	for i, j := range jobs {
		rec := recs[i+1]
		assert.Equal(t, j.ID, rec[col["id"]])
		if j.ID == failingJob {
			assert.Equal(t, "failed", rec[col["state"]])
			assert.Equal(t, failingMessage, rec[col["error"]])
			continue
		}
		if j.Command == "plan" {
			var res planJSON
			b, _ := os.ReadFile(filepath.Join(out, j.ID, batch.StdoutFile))
			require.NoError(t, json.Unmarshal(b, &res))
			assert.Equal(t, fmt.Sprint(res.Objective), rec[col["objective"]], j.ID)
			assert.Equal(t, res.Template, rec[col["template"]], j.ID)
			continue
		}
		if j.Command != "solve" {
			continue
		}
		var res solveJSON
		b, _ := os.ReadFile(filepath.Join(out, j.ID, batch.StdoutFile))
		require.NoError(t, json.Unmarshal(b, &res))
		assert.Equal(t, fmt.Sprint(res.Objective), rec[col["objective"]], j.ID)
		assert.Equal(t, res.Workload, rec[col["workload"]], j.ID)
	}
}

// waitFor polls cond every 10 ms until it holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// shardJobs returns the jobs of shard i of n.
func shardJobs(jobs []batchJob, i, n int) []batchJob {
	var s []batchJob
	for k, j := range jobs {
		if k%n == i {
			s = append(s, j)
		}
	}
	return s
}

// processesMentioning lists the pids whose command line contains s.
func processesMentioning(s string) []string {
	var pids []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(s)) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// killMentioning kills the processes whose command line contains s.
func killMentioning(s string) {
	for _, pid := range processesMentioning(s) {
		if p, err := strconv.Atoi(pid); err == nil && p != os.Getpid() {
			syscall.Kill(p, syscall.SIGKILL)
		}
	}
}

// batchOutcomes decodes a batch's --json summary into result by id.
func batchOutcomes(t *testing.T, stdout string) map[string]batch.Outcome {
	t.Helper()
	var sum batchJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &sum), stdout)
	m := map[string]batch.Outcome{}
	for _, o := range sum.Outcomes {
		m[o.ID] = o
	}
	return m
}

// TestBatchShardsSurviveSIGKILL runs a 24-job manifest as three --shard
// processes, kills one with SIGKILL while a job runs, and resubmits it: the
// rest completes, nothing that finished runs again, and every result equals
// the job run directly.
func TestBatchShardsSurviveSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 48 dpsolve processes")
	}
	dir := t.TempDir()
	manifest, jobs := testManifest(t, dir)
	out := filepath.Join(dir, "out")
	const n = 3
	var procs [n]*exec.Cmd
	var outs [n]*bytes.Buffer
	for i := range n {
		env := []string{}
		if i == 1 {
			env = append(env, "DPSOLVE_TEST_JOB_DELAY=300ms") // keeps shard 1 mid-job long enough to kill
		}
		procs[i] = dpsolveCmd(t, dir, env, "batch", "--manifest", manifest, "--out", out, "--shard", fmt.Sprintf("%d/%d", i, n), "--workers", "1", "--threads", "1", "--json")
		outs[i] = &bytes.Buffer{}
		procs[i].Stdout = outs[i]
		require.NoError(t, procs[i].Start())
	}
	mine := shardJobs(jobs, 1, n)
	var victim string
	waitFor(t, 30*time.Second, "shard 1 to finish two jobs and start a third", func() bool {
		done, started := 0, ""
		for _, j := range mine {
			switch batch.ReadJob(out, j.ID).Category() {
			case "succeeded":
				done++
			case "running":
				started = j.ID
			}
		}
		victim = started
		return done >= 2 && started != ""
	})
	require.NoError(t, procs[1].Process.Signal(syscall.SIGKILL))
	err := procs[1].Wait()
	require.Error(t, err)
	assert.Equal(t, "signal: killed", err.Error())
	for _, i := range []int{0, 2} {
		err := procs[i].Wait()
		if i == 0 { // holds the failing job
			assert.Error(t, err)
		} else {
			assert.NoError(t, err)
		}
	}
	// The killed batch's job died with it (Pdeathsig), leaving "started".
	waitFor(t, 5*time.Second, "the killed batch's job to die with it", func() bool {
		return len(processesMentioning(filepath.Join(out, victim))) == 0
	})
	require.Equal(t, "interrupted", batch.ReadJob(out, victim).Category())
	assert.Nil(t, statusOf(t, out, victim), "a job that is not a release job writes status.json only when it ends")
	code, so, _ := runDpsolve(t, dir, nil, "batch", "status", out, "--manifest", manifest)
	assert.Equal(t, 1, code)
	assert.Regexp(t, `interrupted +`+victim, so)

	before := snapshotSucceeded(t, out, jobs)
	code, so, se := runDpsolve(t, dir, nil, "batch", "--manifest", manifest, "--out", out, "--shard", "1/3", "--workers", "2", "--json")
	require.Equal(t, 0, code, se)
	res := batchOutcomes(t, so)
	for _, j := range mine {
		if _, ok := before[j.ID]; ok {
			assert.Equal(t, batch.Skipped, res[j.ID].Result, j.ID)
		} else {
			assert.Equal(t, batch.Ran, res[j.ID].Result, j.ID)
		}
	}
	assert.Equal(t, batch.Ran, res[victim].Result)
	for id, b := range before {
		now, err := os.ReadFile(filepath.Join(out, id, batch.StatusFile))
		require.NoError(t, err)
		assert.Equal(t, string(b), string(now), "%s ran again", id)
	}
	// A second rerun of every shard finds nothing to do but the failure.
	for i := range n {
		code, so, _ := runDpsolve(t, dir, nil, "batch", "--manifest", manifest, "--out", out, "--shard", fmt.Sprintf("%d/%d", i, n), "--json")
		res := batchOutcomes(t, so)
		for _, j := range shardJobs(jobs, i, n) {
			want := batch.Skipped
			if j.ID == failingJob {
				want = batch.RanFailed
			}
			assert.Equal(t, want, res[j.ID].Result, j.ID)
		}
		assert.Equal(t, map[bool]int{true: 1, false: 0}[i == 0], code)
	}
	checkFinished(t, dir, out, jobs)
}

// TestBatchReleaseKilledAfterSampling kills a batch while its release job
// (dpsolve run) has drawn its noise and written its answers but not exited:
// the rerun must not run it again, and must report it.
func TestBatchReleaseKilledAfterSampling(t *testing.T) {
	if testing.Short() {
		t.Skip("runs dpsolve processes")
	}
	dir := t.TempDir()
	x := make([]float64, 16)
	for i := range x {
		x[i] = float64(i % 4)
	}
	require.NoError(t, matio.WriteVector(filepath.Join(dir, "x.csv"), x))
	lines := []batchJob{
		{"release-1", "run", []string{"--data", "x.csv", "--workload", "prefix", "--eps", "1", "--delta", "1e-6", "--out", "{out}/answers.npy", "--insecure-seed", "5", "--json", "--quiet"}},
		{"plain", "solve", []string{"--workload", "prefix", "--n", "16", "--json", "--quiet"}},
	}
	var buf bytes.Buffer
	for _, j := range lines {
		b, _ := json.Marshal(j)
		buf.Write(append(b, '\n'))
	}
	manifest := filepath.Join(dir, "m.jsonl")
	require.NoError(t, os.WriteFile(manifest, buf.Bytes(), 0o644))
	out := filepath.Join(dir, "out")
	answers := filepath.Join(out, "release-1", "answers.npy")
	t.Cleanup(func() { killMentioning(out) }) // a held job must not outlive a failed test

	p := dpsolveCmd(t, dir, []string{"DPSOLVE_TEST_HOLD_AFTER=run"}, "batch", "--manifest", manifest, "--out", out, "--workers", "1")
	require.NoError(t, p.Start())
	waitFor(t, 30*time.Second, "the release job to write its answers", func() bool {
		_, err := os.Stat(answers)
		return err == nil
	})
	st := statusOf(t, out, "release-1")
	require.Equal(t, batch.Started, st.State, "the release job's start is recorded before it runs")
	require.True(t, st.Releases)
	require.NoError(t, p.Process.Signal(syscall.SIGKILL))
	_ = p.Wait()
	waitFor(t, 5*time.Second, "the release job to die with its batch", func() bool {
		return len(processesMentioning(filepath.Join(out, "release-1"))) == 0
	})
	released, err := os.ReadFile(answers)
	require.NoError(t, err)
	info, err := os.Stat(answers)
	require.NoError(t, err)

	for round := range 2 {
		code, so, se := runDpsolve(t, dir, nil, "batch", "--manifest", manifest, "--out", out, "--json")
		assert.Equal(t, 1, code, "round %d: a job that needs review fails the batch", round)
		res := batchOutcomes(t, so)
		assert.Equal(t, batch.Review, res["release-1"].Result)
		assert.Contains(t, res["release-1"].Error, "interrupted after it started")
		assert.Contains(t, se, "release-1 (run) needs_review: interrupted after it started")
		wantPlain := batch.Ran
		if round > 0 {
			wantPlain = batch.Skipped
		}
		assert.Equal(t, wantPlain, res["plain"].Result)
		now, err := os.ReadFile(answers)
		require.NoError(t, err)
		info2, _ := os.Stat(answers)
		assert.True(t, bytes.Equal(released, now) && info.ModTime().Equal(info2.ModTime()), "round %d: the release job ran again", round)
		st := statusOf(t, out, "release-1")
		assert.Equal(t, batch.NeedsReview, st.State)
		assert.Contains(t, st.Error, "may have drawn noise")
	}
	code, so, _ := runDpsolve(t, dir, nil, "batch", "status", out, "--json")
	assert.Equal(t, 1, code)
	var rep batchStatusJSON
	require.NoError(t, json.Unmarshal([]byte(so), &rep))
	assert.Equal(t, map[string]int{"needs_review": 1, "succeeded": 1}, rep.Counts)
	require.Len(t, rep.Issues, 1)
	assert.Equal(t, "release-1", rep.Issues[0].ID)
	assert.Equal(t, "needs_review", rep.Issues[0].State)
}

func TestBatchCommandLine(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "m.jsonl")
	require.NoError(t, os.WriteFile(good, []byte(`{"id":"a","command":"version"}`+"\n"), 0o644))
	unknown := filepath.Join(dir, "u.jsonl")
	require.NoError(t, os.WriteFile(unknown, []byte(`{"id":"a","command":"sovle"}`+"\n"), 0o644))
	dup := filepath.Join(dir, "d.jsonl")
	require.NoError(t, os.WriteFile(dup, []byte("{\"id\":\"a\",\"command\":\"solve\"}\n{\"id\":\"a\",\"command\":\"solve\"}\n"), 0o644))
	out := filepath.Join(dir, "out")
	for _, tc := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no manifest", []string{"batch", "--out", out}, 2, "--manifest and --out are required"},
		{"bad shard", []string{"batch", "--manifest", good, "--out", out, "--shard", "4/4"}, 2, "outside 0..3"},
		{"oversubscribed", []string{"batch", "--manifest", good, "--out", out, "--workers", "64", "--threads", "64"}, 2, "exceeds the"},
		{"unknown command", []string{"batch", "--manifest", unknown, "--out", out}, 1, `unknown command "sovle"`},
		{"duplicate id", []string{"batch", "--manifest", dup, "--out", out}, 1, "repeats the id on line 1"},
		{"missing manifest", []string{"batch", "--manifest", filepath.Join(dir, "none"), "--out", out}, 1, "no such file"},
		{"status without dir", []string{"batch", "status"}, 2, "output folder"},
		{"collect without csv", []string{"batch", "collect", out}, 2, "--csv is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var so, se bytes.Buffer
			code := run(tc.args, &so, &se)
			assert.Equal(t, tc.code, code, se.String())
			assert.Contains(t, se.String(), tc.msg)
			// One "batch:" prefix, from the command line: the package's own
			// "batch: " is not repeated after it.
			assert.Equal(t, 1, strings.Count(se.String(), "batch:"), se.String())
		})
	}
	// The exact messages of a bad manifest line and a bad shard.
	bad := filepath.Join(dir, "b.jsonl")
	require.NoError(t, os.WriteFile(bad, []byte(`{"id":"a b","command":"solve"}`+"\n"), 0o644))
	var se0 bytes.Buffer
	assert.Equal(t, 1, run([]string{"batch", "--manifest", bad, "--out", out}, &bytes.Buffer{}, &se0))
	assert.Equal(t, "dpsolve batch: invalid input: "+bad+": line 1: job id \"a b\" contains ' '; use only letters, digits, '.', '_' and '-'\n", se0.String())
	se0.Reset()
	assert.Equal(t, 2, run([]string{"batch", "--manifest", good, "--out", out, "--shard", "x"}, &bytes.Buffer{}, &se0))
	assert.Equal(t, "dpsolve batch: usage error: invalid input: shard \"x\" is not I/N (for example 0/4)\n", se0.String())
	// --durable runs the jobs to the same statuses (as a subprocess: the
	// batch's jobs are this test binary acting as dpsolve).
	dur := filepath.Join(dir, "durable")
	code, _, errOut := runDpsolve(t, dir, nil, "batch", "--manifest", good, "--out", dur, "--durable", "--quiet")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, batch.Succeeded, statusOf(t, dur, "a").State)
	// --oversubscribe lifts the cores check.
	var se bytes.Buffer
	assert.NotEqual(t, 2, run([]string{"batch", "--manifest", unknown, "--out", out, "--workers", "64", "--threads", "64", "--oversubscribe"}, &bytes.Buffer{}, &se), se.String())
}

// TestBatchShape: --threads wins and is passed on; without it a thread
// count the user exported is inherited and counted; otherwise the cores
// are shared out.
func TestBatchShape(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	for _, tc := range []struct {
		name             string
		workers, threads int
		env              func(string) string
		k, t             int
		inherit          bool
	}{
		{"defaults", 0, 0, env(), 8, 1, false},
		{"workers", 2, 0, env(), 2, 4, false},
		{"threads", 0, 2, env(), 4, 2, false},
		{"both", 3, 2, env(), 3, 2, false},
		{"user's OpenBLAS threads", 0, 0, env("OPENBLAS_NUM_THREADS", "4"), 2, 4, true},
		{"user's GOMAXPROCS", 2, 0, env("GOMAXPROCS", "2"), 2, 2, true},
		{"OpenBLAS's first", 0, 0, env("OPENBLAS_NUM_THREADS", "2", "GOMAXPROCS", "8"), 4, 2, true},
		{"--threads beats the environment", 0, 1, env("OPENBLAS_NUM_THREADS", "4"), 8, 1, false},
		{"not a count", 0, 0, env("OPENBLAS_NUM_THREADS", "x", "GOMAXPROCS", "0"), 8, 1, false},
	} {
		k, th, inh := batchShape(tc.workers, tc.threads, 8, tc.env)
		assert.Equal(t, []any{tc.k, tc.t, tc.inherit}, []any{k, th, inh}, tc.name)
	}
}

func TestBatchCores(t *testing.T) {
	t.Setenv("SLURM_CPUS_PER_TASK", "")
	t.Setenv("SLURM_CPUS_ON_NODE", "")
	assert.Positive(t, batchCores())
	t.Setenv("SLURM_CPUS_ON_NODE", "3")
	assert.Equal(t, 3, batchCores())
	t.Setenv("SLURM_CPUS_PER_TASK", "5")
	assert.Equal(t, 5, batchCores())
}

// TestBatchInProcess runs the 24-job manifest with --in-process: the solve
// jobs run inside the batch, two at a time, and still give exactly the
// results of the same jobs run directly; the compare jobs run as children.
func TestBatchInProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("runs dpsolve processes")
	}
	dir := t.TempDir()
	manifest, jobs := testManifest(t, dir)
	// A relative --out resolves against the caller's folder, not the
	// manifest's, although the batch moves there to run jobs in-process.
	code, so, se := runDpsolve(t, filepath.Dir(dir), nil, "batch", "--manifest", manifest, "--out", filepath.Join(filepath.Base(dir), "out"),
		"--in-process", "--workers", "2", "--threads", "1", "--json")
	require.Equal(t, 1, code, se)
	res := batchOutcomes(t, so)
	assert.Len(t, res, len(jobs))
	assert.Contains(t, se, "1 failed")
	var ignore []string
	if blas.Current().Name() == "purego" {
		// The pure-Go backend reports GOMAXPROCS as its threads, and an
		// in-process job shares the batch's; the numbers are the same.
		ignore = []string{"threads"}
	}
	checkFinished(t, dir, filepath.Join(dir, "out"), jobs, ignore...)
}

func TestInProcessJobChoosesSolveWithoutThreads(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		args []string
		want bool
	}{
		{"solve", []string{"--workload", "prefix", "--n", "8", "--json", "--quiet"}, true},
		{"solve", []string{"--workload", "prefix", "--n", "8", "--threads", "2"}, false},
		{"solve", []string{"--workload", "prefix", "--n", "8", "-threads=2"}, false},
		{"compare", []string{"--workload", "prefix", "--n", "8"}, false},
	} {
		var so, se bytes.Buffer
		code, ok := inProcessJob(tc.cmd, tc.args, &so, &se)
		assert.Equal(t, tc.want, ok, "%s %v", tc.cmd, tc.args)
		if ok {
			assert.Equal(t, 0, code, se.String())
			assert.Contains(t, so.String(), `"objective"`)
		}
	}
}

// TestBatchSIGTERM stops a batch the way scancel or a deleted pod does: it
// starts no more jobs, passes the signal to the running one, records it as
// failed, exits 130, and a rerun finishes the rest.
func TestBatchSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("runs dpsolve processes")
	}
	dir := t.TempDir()
	var buf bytes.Buffer
	for i := range 4 {
		b, _ := json.Marshal(batchJob{fmt.Sprint("j", i), "solve", []string{"--workload", "prefix", "--n", "16", "--json", "--quiet"}})
		buf.Write(append(b, '\n'))
	}
	manifest := filepath.Join(dir, "m.jsonl")
	require.NoError(t, os.WriteFile(manifest, buf.Bytes(), 0o644))
	out := filepath.Join(dir, "out")
	p := dpsolveCmd(t, dir, []string{"DPSOLVE_TEST_JOB_DELAY=20s"}, "batch", "--manifest", manifest, "--out", out, "--workers", "1", "--json")
	var so, se bytes.Buffer
	p.Stdout, p.Stderr = &so, &se
	require.NoError(t, p.Start())
	waitFor(t, 20*time.Second, "the first job to run", func() bool { return batch.ReadJob(out, "j0").Category() == "running" })
	t0 := time.Now()
	require.NoError(t, p.Process.Signal(syscall.SIGTERM))
	_ = p.Wait()
	assert.Less(t, time.Since(t0), 15*time.Second, "the running job was not stopped")
	assert.Equal(t, exitInterrupted, p.ProcessState.ExitCode(), se.String())
	assert.Contains(t, se.String(), "run the same command again to finish the rest")
	res := batchOutcomes(t, so.String())
	assert.Equal(t, batch.RanFailed, res["j0"].Result)
	assert.Contains(t, res["j0"].Error, "interrupted")
	for _, id := range []string{"j1", "j2", "j3"} {
		assert.Equal(t, batch.NotRun, res[id].Result, id)
	}
	code, so2, se2 := runDpsolve(t, dir, nil, "batch", "--manifest", manifest, "--out", out, "--json")
	require.Equal(t, 0, code, se2)
	for id, o := range batchOutcomes(t, so2) {
		assert.Equal(t, batch.Ran, o.Result, id)
	}
}
