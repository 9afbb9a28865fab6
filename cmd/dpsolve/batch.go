package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/internal/batch"
)

func init() {
	register(&command{
		name:    "batch",
		summary: "run a manifest of jobs (a shard of it under Slurm or Kubernetes), resumably; batch status|collect DIR",
		run:     runBatch,
	})
}

// batchJSON is the machine-readable summary of one dpsolve batch run.
type batchJSON struct {
	Manifest  string          `json:"manifest"`
	Out       string          `json:"out"`
	Shard     string          `json:"shard"`
	Source    string          `json:"shard_source"`
	Workers   int             `json:"workers"`
	Threads   int             `json:"threads"`
	Jobs      int             `json:"jobs"`
	Counts    map[string]int  `json:"counts"`
	Seconds   float64         `json:"seconds"`
	Succeeded bool            `json:"succeeded"`
	Outcomes  []batch.Outcome `json:"outcomes"`
}

func runBatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "status":
			return runBatchStatus(args[1:], stdout, stderr)
		case "collect":
			return runBatchCollect(args[1:], stdout, stderr)
		}
	}
	fs := newFlagSet("batch", stderr)
	manifest := fs.String("manifest", "", "the jobs: JSON Lines, one {\"id\", \"command\", \"args\"} object per line (required)")
	out := fs.String("out", "", "output folder: job ID writes DIR/ID/stdout, DIR/ID/status.json, … (required)")
	shardFlag := fs.String("shard", "", "run only shard I/N of the jobs (default: from SLURM_ARRAY_TASK_ID/COUNT or JOB_COMPLETION_INDEX, else all)")
	shards := fs.Int("shards", 0, "number of shards, for Kubernetes' JOB_COMPLETION_INDEX (or to override SLURM_ARRAY_TASK_COUNT)")
	workers := fs.Int("workers", 0, "jobs run at once (0: cores / threads)")
	threads := fs.Int("threads", 0, "kernel threads per job, passed as OPENBLAS_NUM_THREADS and GOMAXPROCS (0: the user's OPENBLAS_NUM_THREADS or GOMAXPROCS, left as they are, else cores / workers, 1 when neither flag is given)")
	over := fs.Bool("oversubscribe", false, "allow workers × threads > cores")
	asJSON := fs.Bool("json", false, "print a JSON summary with every job's outcome on stdout")
	quiet := fs.Bool("quiet", false, "only the final summary on stderr")
	durable := fs.Bool("durable", false, "sync every job's outputs, then its status, to disk before counting it finished, so finished jobs survive a crash of the machine (release jobs always are); a few fsyncs per job")
	inProc := fs.Bool("in-process", false, "run solve jobs inside the batch process instead of as child processes (saves each one's process start; other commands still run as children)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: dpsolve batch --manifest M.jsonl --out DIR [--shard I/N] [--workers K] [--threads T] [--json]\n"+
			"       dpsolve batch status DIR [--manifest M.jsonl] [--json]\n"+
			"       dpsolve batch collect DIR --csv F [--manifest M.jsonl]\n\nflags of a batch run:\n")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *manifest == "" || *out == "" {
		return usageErrorf("--manifest and --out are required")
	}
	if err := checkOutDirPath("--out", *out, []string{*manifest}, true); err != nil {
		return err
	}
	if *workers < 0 || *threads < 0 {
		return usageErrorf("--workers and --threads must be non-negative")
	}
	shard, err := batch.ShardFrom(*shardFlag, *shards, os.Getenv)
	if err != nil {
		return fmt.Errorf("%w: %w", errUsage, batchPkgErr{err})
	}
	cores := batchCores()
	k, t, inherit := batchShape(*workers, *threads, cores, os.Getenv)
	if k*t > cores && !*over {
		return usageErrorf("--workers %d × --threads %d exceeds the %d cores available; lower them or add --oversubscribe", k, t, cores)
	}
	m, err := batch.ReadManifest(*manifest)
	if err != nil {
		return batchPkgErr{err}
	}
	for _, j := range m.Jobs {
		if _, ok := commands[j.Command]; !ok || j.Command == "batch" {
			return fmt.Errorf("%s: line %d: job %q: unknown command %q", *manifest, j.Line, j.ID, j.Command)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot find the dpsolve binary to run jobs with: %w", err)
	}
	jobs := shard.Select(m.Jobs)
	defer shareMemory(min(k, len(jobs)), stderr)()
	from := ""
	if inherit {
		from = " (from the environment's " + threadVars + ")"
	}
	fmt.Fprintf(stderr, "dpsolve batch: %d of %d jobs (shard %s from %s), %d workers × %d threads%s on %d cores\n",
		len(jobs), len(m.Jobs), shard, shard.Source, k, t, from, cores)

	outDir, err := filepath.Abs(*out)
	if err != nil {
		return err
	}
	r := &batch.Runner{Exe: exe, Manifest: m, Out: outDir, Workers: k, Threads: t, Shard: shard, Durable: *durable}
	if inherit {
		r.Threads = 0 // the children inherit the user's thread variables
	}
	if *inProc {
		// Children run in the manifest's folder; in-process jobs share the
		// batch's, so the batch moves there (every path it holds is absolute).
		if err := os.Chdir(m.Dir); err != nil {
			return err
		}
		blas.Current().SetThreads(t)
		r.InProcess = inProcessJob
	}
	r.Progress = progressTo(stderr, "batch", *quiet)
	t0 := time.Now()
	outcomes, err := r.Run(ctx, jobs)
	if err != nil {
		return err
	}
	sum := batchJSON{Manifest: m.Path, Out: *out, Shard: shard.String(), Source: shard.Source, Workers: k, Threads: t,
		Jobs: len(jobs), Counts: map[string]int{}, Seconds: time.Since(t0).Seconds(), Succeeded: true, Outcomes: outcomes}
	var notOK []batch.Outcome
	for _, o := range outcomes {
		sum.Counts[string(o.Result)]++
		if !o.OK() {
			sum.Succeeded = false
			notOK = append(notOK, o)
		}
	}
	fmt.Fprintf(stderr, "dpsolve batch: shard %s finished in %.2f s: %s\n", shard, sum.Seconds, countsLine(sum.Counts))
	for _, o := range notOK {
		fmt.Fprintf(stderr, "  %s (%s) %s: %s\n", o.ID, o.Command, o.Result, o.Error)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(sum); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "dpsolve batch: interrupted; the jobs that finished are recorded, run the same command again to finish the rest\n")
		return errCancelled(ctx)
	}
	if !sum.Succeeded {
		return fmt.Errorf("%d of %d jobs did not succeed (see above, or dpsolve batch status %s)", len(notOK), len(jobs), *out)
	}
	return nil
}

// inProcessJob runs solve jobs in-process, through the same command table a
// child would use, so their stdout, stderr and exit status are the same. A
// job with its own --threads runs as a child instead: the kernel thread
// count is global to the process, shared by the concurrent jobs.
func inProcessJob(command string, args []string, stdout, stderr io.Writer) (int, bool) {
	if command != "solve" {
		return 0, false
	}
	for _, a := range args {
		if name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); strings.HasPrefix(a, "-") && name == "threads" {
			return 0, false
		}
	}
	return run(append([]string{command}, args...), stdout, stderr), true
}

// threadVars names the environment variables that set a job's threads.
const threadVars = "OPENBLAS_NUM_THREADS/GOMAXPROCS"

// batchShape chooses the workers k and the threads per job t from the
// flags (0: not given) and the cores. --threads, when given, is passed to
// every job as OPENBLAS_NUM_THREADS and GOMAXPROCS. Without it, a thread
// count the user exported (OPENBLAS_NUM_THREADS, else GOMAXPROCS, a
// positive integer) is left to the jobs as it is (inherit) and counted as
// t; otherwise t is cores/k (1 when neither flag is given: one job per
// core). k defaults to cores/t.
func batchShape(workers, threads, cores int, getenv func(string) string) (k, t int, inherit bool) {
	k, t = workers, threads
	if t == 0 {
		for _, v := range []string{"OPENBLAS_NUM_THREADS", "GOMAXPROCS"} {
			if n, err := strconv.Atoi(getenv(v)); err == nil && n > 0 {
				t, inherit = n, true
				break
			}
		}
	}
	switch {
	case k == 0 && t == 0:
		k, t = cores, 1
	case k == 0:
		k = max(1, cores/t)
	case t == 0:
		t = max(1, cores/k)
	}
	return k, t, inherit
}

// batchCores is the number of cores this batch may use: the Slurm
// allocation when running inside one (SLURM_CPUS_PER_TASK, else
// SLURM_CPUS_ON_NODE), otherwise Go's default GOMAXPROCS, which counts the
// CPUs this process may run on and honours a container's CPU limit.
func batchCores() int {
	for _, v := range []string{"SLURM_CPUS_PER_TASK", "SLURM_CPUS_ON_NODE"} {
		if n, err := strconv.Atoi(os.Getenv(v)); err == nil && n > 0 {
			return n
		}
	}
	return runtime.GOMAXPROCS(0)
}

// batchPkgErr is an error from internal/batch without its leading
// "batch: ": the command line prints "dpsolve batch: " before every error
// already, so the user reads "dpsolve batch: invalid input: m.jsonl: line
// 3: …" rather than "dpsolve batch: batch: invalid input: …". It wraps the
// original, so errors.Is(err, batch.ErrInput) still holds.
type batchPkgErr struct{ err error }

func (e batchPkgErr) Error() string { return strings.TrimPrefix(e.err.Error(), "batch: ") }
func (e batchPkgErr) Unwrap() error { return e.err }

// countsLine formats result counts in a fixed order.
func countsLine(c map[string]int) string {
	var parts []string
	for _, k := range []string{"succeeded", "skipped", "failed", "needs_review", "busy", "not_run", "running", "interrupted", "not_started", "unreadable"} {
		if c[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c[k], k))
		}
	}
	if len(parts) == 0 {
		return "no jobs"
	}
	return strings.Join(parts, ", ")
}

// batchDirArgs splits "DIR [flags]" or "[flags] DIR" for status and collect.
func batchDirArgs(fs *flag.FlagSet, args []string) (string, error) {
	dir := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		dir, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return "", err
		}
		return "", fmt.Errorf("%w: %v", errUsage, err)
	}
	rest := fs.Args()
	if dir == "" && len(rest) > 0 {
		dir, rest = rest[0], rest[1:]
	}
	if len(rest) > 0 {
		return "", usageErrorf("unexpected arguments: %v", rest)
	}
	if dir == "" {
		return "", usageErrorf("give the batch's output folder DIR")
	}
	return dir, nil
}

// scanBatch reads a batch's job folders (exactly the manifest's jobs when
// manifest is given).
func scanBatch(dir, manifest string) ([]batch.JobReport, error) {
	var m *batch.Manifest
	if manifest != "" {
		var err error
		if m, err = batch.ReadManifest(manifest); err != nil {
			return nil, batchPkgErr{err}
		}
	}
	return batch.Scan(dir, m)
}

// batchStatusJSON is the machine-readable output of dpsolve batch status.
type batchStatusJSON struct {
	Out    string           `json:"out"`
	Jobs   int              `json:"jobs"`
	Counts map[string]int   `json:"counts"`
	Issues []batchIssueJSON `json:"issues"`
}

type batchIssueJSON struct {
	ID      string `json:"id"`
	Command string `json:"command,omitempty"`
	State   string `json:"state"`
	Exit    int    `json:"exit"`
	Error   string `json:"error,omitempty"`
}

func runBatchStatus(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("batch status", stderr)
	manifest := fs.String("manifest", "", "also count the manifest's jobs that have not started")
	asJSON := fs.Bool("json", false, "print one JSON object on stdout")
	dir, err := batchDirArgs(fs, args)
	if err != nil {
		return err
	}
	reps, err := scanBatch(dir, *manifest)
	if err != nil {
		return err
	}
	out := batchStatusJSON{Out: dir, Jobs: len(reps), Counts: map[string]int{}, Issues: []batchIssueJSON{}}
	for _, r := range reps {
		c := r.Category()
		out.Counts[c]++
		if c == "succeeded" || c == "running" || c == "not_started" {
			continue
		}
		is := batchIssueJSON{ID: r.ID, State: c, Exit: -1, Error: r.Message()}
		switch {
		case r.Attempt != nil:
			is.Command = r.Attempt.Command
		case r.Status != nil:
			is.Command, is.Exit = r.Status.Command, r.Status.Exit
		}
		out.Issues = append(out.Issues, is)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(stdout, "%s: %d jobs: %s\n", dir, len(reps), countsLine(out.Counts))
		for _, is := range out.Issues {
			fmt.Fprintf(stdout, "  %-12s %s (%s, exit %d): %s\n", is.State, is.ID, is.Command, is.Exit, is.Error)
		}
	}
	if out.Counts["succeeded"] != len(reps) {
		return fmt.Errorf("%d of %d jobs have not succeeded", len(reps)-out.Counts["succeeded"], len(reps))
	}
	return nil
}

func runBatchCollect(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("batch collect", stderr)
	csvPath := fs.String("csv", "", "write one row per job to this CSV file (required)")
	manifest := fs.String("manifest", "", "one row per manifest job, in manifest order (default: every job folder, by id)")
	dir, err := batchDirArgs(fs, args)
	if err != nil {
		return err
	}
	if *csvPath == "" {
		return usageErrorf("--csv is required")
	}
	reps, err := scanBatch(dir, *manifest)
	if err != nil {
		return err
	}
	if err := batch.CollectCSV(*csvPath, reps); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "dpsolve batch collect: %d jobs → %s\n", len(reps), *csvPath)
	return nil
}
