package main

import (
	"context"
	"encoding/json"
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
	"github.com/dpsolve/dpsolve/cmd/dpsolve/internal/batch"
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

// batchFlags are the flags of a batch run.
type batchFlags struct {
	manifest, out, shard     string
	shards, workers, threads int
	over, asJSON, quiet      bool
	durable, inProc          bool
}

func (f *batchFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.manifest, "manifest", "", "the jobs: JSON Lines, one {\"id\", \"command\", \"args\"} object per line (required)")
	fs.StringVar(&f.out, "out", "", "output folder: job ID writes DIR/ID/stdout, DIR/ID/status.json, … (required)")
	fs.StringVar(&f.shard, "shard", "", "run only shard I/N of the jobs (default: from SLURM_ARRAY_TASK_ID/COUNT or JOB_COMPLETION_INDEX, else all)")
	fs.IntVar(&f.shards, "shards", 0, "number of shards, for Kubernetes' JOB_COMPLETION_INDEX (or to override SLURM_ARRAY_TASK_COUNT)")
	fs.IntVar(&f.workers, "workers", 0, "jobs run at once (0: cores / threads)")
	fs.IntVar(&f.threads, "threads", 0, "kernel threads per job, passed as OPENBLAS_NUM_THREADS and GOMAXPROCS (0: the user's OPENBLAS_NUM_THREADS or GOMAXPROCS, left as they are, else cores / workers, 1 when neither flag is given)")
	fs.BoolVar(&f.over, "oversubscribe", false, "allow workers × threads > cores")
	fs.BoolVar(&f.asJSON, "json", false, "print a JSON summary with every job's outcome on stdout")
	fs.BoolVar(&f.quiet, "quiet", false, "only the final summary on stderr")
	fs.BoolVar(&f.durable, "durable", false, "sync every job's outputs, then its status, to disk before counting it finished, so finished jobs survive a crash of the machine (release jobs always are); a few fsyncs per job")
	fs.BoolVar(&f.inProc, "in-process", false, "run solve jobs inside the batch process instead of as child processes (saves each one's process start; other commands still run as children)")
}

// batchPlan is what a batch run decided before starting a job: the shard,
// the workers × threads shape and the manifest.
type batchPlan struct {
	shard    batch.Shard
	cores    int
	k, t     int
	inherit  bool // the children keep the user's thread variables
	manifest *batch.Manifest
}

// plan checks the flags and reads the manifest. Every job's command must be
// known before any job starts, so a typo fails the whole run up front.
func (f *batchFlags) plan() (*batchPlan, error) {
	if f.manifest == "" || f.out == "" {
		return nil, usageErrorf("--manifest and --out are required")
	}
	if err := checkOutDirPath("--out", f.out, []string{f.manifest}, true); err != nil {
		return nil, err
	}
	if f.workers < 0 || f.threads < 0 {
		return nil, usageErrorf("--workers and --threads must be non-negative")
	}
	shard, err := batch.ShardFrom(f.shard, f.shards, os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errUsage, batchPkgErr{err})
	}
	p := &batchPlan{shard: shard, cores: batchCores()}
	p.k, p.t, p.inherit = batchShape(f.workers, f.threads, p.cores, os.Getenv)
	if p.k*p.t > p.cores && !f.over {
		return nil, usageErrorf("--workers %d × --threads %d exceeds the %d cores available; lower them or add --oversubscribe", p.k, p.t, p.cores)
	}
	if p.manifest, err = batch.ReadManifest(f.manifest); err != nil {
		return nil, batchPkgErr{err}
	}
	for _, j := range p.manifest.Jobs {
		if _, ok := commands[j.Command]; !ok || j.Command == "batch" {
			return nil, fmt.Errorf("%s: line %d: job %q: unknown command %q", f.manifest, j.Line, j.ID, j.Command)
		}
	}
	return p, nil
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
	var f batchFlags
	f.register(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: dpsolve batch --manifest M.jsonl --out DIR [--shard I/N] [--workers K] [--threads T] [--json]\n"+
			"       dpsolve batch status DIR [--manifest M.jsonl] [--json]\n"+
			"       dpsolve batch collect DIR --csv F [--manifest M.jsonl]\n\nflags of a batch run:\n")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	p, err := f.plan()
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot find the dpsolve binary to run jobs with: %w", err)
	}
	m := p.manifest
	jobs := p.shard.Select(m.Jobs)
	defer shareMemory(min(p.k, len(jobs)), stderr)()
	from := ""
	if p.inherit {
		from = " (from the environment's " + threadVars + ")"
	}
	fmt.Fprintf(stderr, "dpsolve batch: %d of %d jobs (shard %s from %s), %d workers × %d threads%s on %d cores\n",
		len(jobs), len(m.Jobs), p.shard, p.shard.Source, p.k, p.t, from, p.cores)
	r, err := f.runner(p, exe, stderr)
	if err != nil {
		return err
	}
	t0 := time.Now()
	outcomes, err := r.Run(ctx, jobs)
	if err != nil {
		return err
	}
	sum := batchJSON{Manifest: m.Path, Out: f.out, Shard: p.shard.String(), Source: p.shard.Source, Workers: p.k, Threads: p.t,
		Jobs: len(jobs), Counts: map[string]int{}, Seconds: time.Since(t0).Seconds(), Succeeded: true, Outcomes: outcomes}
	return f.report(ctx, &sum, stdout, stderr)
}

// runner builds the job runner of plan p. With --in-process the batch
// itself moves into the manifest's folder, where children would run, since
// in-process jobs share the batch's working directory (every path the
// batch holds is absolute by then).
func (f *batchFlags) runner(p *batchPlan, exe string, stderr io.Writer) (*batch.Runner, error) {
	outDir, err := filepath.Abs(f.out)
	if err != nil {
		return nil, err
	}
	r := &batch.Runner{Exe: exe, Manifest: p.manifest, Out: outDir, Workers: p.k, Threads: p.t, Shard: p.shard, Durable: f.durable}
	if p.inherit {
		r.Threads = 0 // the children inherit the user's thread variables
	}
	if f.inProc {
		if err := os.Chdir(p.manifest.Dir); err != nil {
			return nil, err
		}
		blas.Current().SetThreads(p.t)
		r.InProcess = inProcessJob
	}
	r.Progress = progressTo(stderr, "batch", f.quiet)
	return r, nil
}

// report counts the outcomes into sum, prints the summary (and the JSON)
// and turns an interruption or a failed job into the run's error.
func (f *batchFlags) report(ctx context.Context, sum *batchJSON, stdout, stderr io.Writer) error {
	var notOK []batch.Outcome
	for _, o := range sum.Outcomes {
		sum.Counts[string(o.Result)]++
		if !o.OK() {
			sum.Succeeded = false
			notOK = append(notOK, o)
		}
	}
	fmt.Fprintf(stderr, "dpsolve batch: shard %s finished in %.2f s: %s\n", sum.Shard, sum.Seconds, countsLine(sum.Counts))
	for _, o := range notOK {
		fmt.Fprintf(stderr, "  %s (%s) %s: %s\n", o.ID, o.Command, o.Result, o.Error)
	}
	if f.asJSON {
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
		return fmt.Errorf("%d of %d jobs did not succeed (see above, or dpsolve batch status %s)", len(notOK), sum.Jobs, f.out)
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

// batchPkgErr is an error from cmd/dpsolve/internal/batch without its leading
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
	dir, err := positionalArg(fs, args, "the batch's output folder DIR")
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
	dir, err := positionalArg(fs, args, "the batch's output folder DIR")
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
