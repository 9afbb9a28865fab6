package batch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dpsolve/dpsolve/progress"
)

// Result is what a batch did with one job.
type Result string

// The results of one job in one batch run.
const (
	// Skipped: the job had already succeeded with the same manifest line.
	Skipped Result = "skipped"
	// Ran: the job ran and succeeded.
	Ran Result = "succeeded"
	// RanFailed: the job ran and failed (or could not be launched).
	RanFailed Result = "failed"
	// Review: a release job that may have drawn noise; not run (again).
	Review Result = "needs_review"
	// Busy: another batch process holds the job's lock.
	Busy Result = "busy"
	// NotRun: the batch was stopped before it reached the job.
	NotRun Result = "not_run"
)

// Outcome is one job's result in one batch run.
type Outcome struct {
	ID      string  `json:"id"`
	Command string  `json:"command"`
	Result  Result  `json:"result"`
	Exit    int     `json:"exit"`
	Seconds float64 `json:"seconds"`
	Error   string  `json:"error,omitempty"`
}

// OK reports whether the job is done successfully (now or before).
func (o Outcome) OK() bool { return o.Result == Skipped || o.Result == Ran }

// Counts counts a batch's jobs while it runs; it is the Detail of the
// runner's progress events.
type Counts struct {
	// Done counts jobs succeeded now or skipped as succeeded before.
	Done int
	// Failed counts failed, needs-review, busy and not-run jobs.
	Failed  int
	Running int
	Left    int
	// Last is the job that just finished (nil for the first report).
	Last *Outcome
}

// Runner runs a shard of a manifest's jobs, each as a child process.
type Runner struct {
	// Exe is the dpsolve binary jobs run as ("Exe Command Args...").
	Exe string
	// Manifest supplies the jobs' working folder.
	Manifest *Manifest
	// Out is the batch's output folder; job j writes to Out/<j.ID>.
	Out string
	// Workers is how many jobs run at once (at least 1).
	Workers int
	// Threads is each job's kernel threads: the children get
	// OPENBLAS_NUM_THREADS and GOMAXPROCS set to it (0: leave them).
	Threads int
	// Env is the children's environment before those two (nil: os.Environ()).
	Env []string
	// Shard is recorded in the status files.
	Shard Shard
	// Durable makes every job's result survive a crash of the machine, not
	// only a release job's: its outputs (the regular files in its folder)
	// are synced to disk, then its status is written durably (temporary
	// file, fsync, rename, fsync of the folder). Without it a job's status
	// is still atomic but only as durable as its outputs, which are not
	// synced: a crash can lose both, and the job then simply runs again.
	// (Syncing the status alone would be worse: a durable "succeeded"
	// could outlive the stdout it vouches for.) It costs a few fsyncs per
	// job, several milliseconds on some disks.
	Durable bool
	// Progress, if set, receives dpsolve's progress events, from one
	// goroutine at a time: after each job finishes (Stage "batch", Count
	// the jobs finished, Total the shard's jobs, Unit "jobs", Detail the
	// Counts, Note the job and its error when it failed) and once more
	// with Done set when Run returns its outcomes.
	Progress progress.Func
	// GracePeriod is how long a job may take to exit after the batch is
	// cancelled and sends it SIGTERM, before it is killed (0: 10 s).
	GracePeriod time.Duration
	// InProcess, if set, may run a job inside this process instead of as a
	// child: it gets the job's command and expanded arguments and returns
	// the exit status and true, or false to have the job run as a child.
	// It saves the child's start (a few ms), so it suits many small jobs
	// of a command that is safe to run concurrently; the caller must have
	// made the working folder the manifest's folder. Jobs that release
	// data are never run in-process (so that each runs isolated and dies
	// with a killed batch exactly like a child).
	InProcess func(command string, args []string, stdout, stderr io.Writer) (int, bool)
}

// Run runs jobs (normally a shard of r.Manifest.Jobs) and returns one
// outcome per job, in the order given. A failing job never stops the others.
// When ctx is cancelled, running jobs get SIGTERM, jobs not yet started are
// reported NotRun, and Run returns once every child has exited and its
// status is written. The error is non-nil only when the batch itself cannot
// work (the output folder cannot be created).
func (r *Runner) Run(ctx context.Context, jobs []Job) ([]Outcome, error) {
	out, err := filepath.Abs(r.Out)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	workers := max(r.Workers, 1)
	host, _ := os.Hostname()
	env := r.childEnv()
	outcomes := make([]Outcome, len(jobs))
	var (
		mu    sync.Mutex
		prog  = Counts{Left: len(jobs)}
		start = time.Now()
	)
	event := func(c Counts) progress.Event {
		return progress.Event{Stage: "batch", Count: int64(c.Done + c.Failed), Total: int64(len(jobs)), Unit: "jobs",
			Objective: math.NaN(), Bound: math.NaN(), Gap: math.NaN(), Seconds: time.Since(start).Seconds(), Detail: c}
	}
	report := func(o *Outcome, started bool) {
		mu.Lock()
		defer mu.Unlock()
		if started {
			prog.Running++
			prog.Left--
			return
		}
		prog.Running--
		if o.OK() {
			prog.Done++
		} else {
			prog.Failed++
		}
		prog.Last = o
		if r.Progress.Enabled() {
			e := event(prog)
			if !o.OK() {
				e.Note = fmt.Sprintf("job %s %s: %s", o.ID, o.Result, o.Error)
			}
			r.Progress(e)
		}
	}
	next := make(chan int)
	go func() {
		defer close(next)
		for i := range jobs {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if ctx.Err() != nil {
					break
				}
				report(nil, true)
				outcomes[i] = r.runJob(ctx, jobs[i], filepath.Join(out, jobs[i].ID), host, env)
				report(&outcomes[i], false)
			}
		}()
	}
	wg.Wait()
	for i := range outcomes {
		if outcomes[i].Result == "" {
			outcomes[i] = Outcome{ID: jobs[i].ID, Command: jobs[i].Command, Result: NotRun, Exit: -1, Error: "the batch was stopped before this job started"}
		}
	}
	if r.Progress.Enabled() {
		e := event(prog)
		e.Done = true
		e.Note = fmt.Sprintf("succeeded %d, failed %d, not run %d", prog.Done, prog.Failed, len(jobs)-prog.Done-prog.Failed)
		r.Progress(e)
	}
	return outcomes, nil
}

func (r *Runner) childEnv() []string {
	env := r.Env
	if env == nil {
		env = os.Environ()
	}
	if r.Threads <= 0 {
		return env
	}
	t := strconv.Itoa(r.Threads)
	var kept []string
	for _, kv := range env {
		if strings.HasPrefix(kv, "OPENBLAS_NUM_THREADS=") || strings.HasPrefix(kv, "GOMAXPROCS=") {
			continue
		}
		kept = append(kept, kv)
	}
	return append(kept, "OPENBLAS_NUM_THREADS="+t, "GOMAXPROCS="+t)
}

// runJob decides what to do with one job under its lock, and does it.
func (r *Runner) runJob(ctx context.Context, j Job, dir, host string, env []string) Outcome {
	o := Outcome{ID: j.ID, Command: j.Command, Exit: -1}
	fail := func(res Result, msg string) Outcome {
		o.Result, o.Error = res, msg
		return o
	}
	if err := checkJobDir(dir); err != nil {
		res := RanFailed
		if Releases(j.Command) {
			res = Review
		}
		return fail(res, err.Error())
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fail(RanFailed, err.Error())
	}
	if err := checkJobDir(dir); err != nil { // replaced meanwhile
		return fail(RanFailed, err.Error())
	}
	lk, err := tryLock(filepath.Join(dir, LockFile))
	if errors.Is(err, errLocked) {
		return fail(Busy, err.Error())
	}
	if err != nil {
		return fail(RanFailed, "cannot lock the job: "+err.Error())
	}
	defer lk.unlock()

	// Under the lock the status cannot change behind our back.
	prev, err := ReadStatus(dir)
	releases := Releases(j.Command)
	if err != nil {
		if releases {
			return fail(Review, "unreadable status of a job that releases data: "+err.Error())
		}
		prev = nil // a non-release job is simply run again
	}
	if prev != nil {
		switch {
		case prev.State == Succeeded && prev.Hash == j.Hash:
			o.Result, o.Exit, o.Seconds = Skipped, prev.Exit, prev.Seconds
			return o
		case releases && prev.State == NeedsReview:
			return fail(Review, prev.Error)
		case releases && prev.State == Started:
			// We hold the lock, so the process that wrote "started" is
			// gone: it was interrupted, possibly after drawing noise.
			st := *prev
			st.State = NeedsReview
			st.Error = fmt.Sprintf("interrupted after it started (batch pid %d on %s); it may have drawn noise, so it is not re-run: review its outputs, then delete %s to run it again", prev.PID, prev.Host, filepath.Join(dir, StatusFile))
			now := time.Now().UTC()
			st.Finished = &now
			if err := WriteStatus(dir, &st, true); err != nil {
				return fail(Review, st.Error+" (and its status could not be updated: "+err.Error()+")")
			}
			return fail(Review, st.Error)
		case releases && prev.State == Succeeded:
			return fail(Review, "the manifest line changed after this job released data; it is not re-run: delete "+filepath.Join(dir, StatusFile)+" to run it again")
		}
		// Failed, interrupted or changed non-release jobs, and release jobs
		// that failed before they could draw noise, run again.
	}
	return r.launch(ctx, j, dir, host, env, releases, lk)
}

// launch runs the job and records its status.
func (r *Runner) launch(ctx context.Context, j Job, dir, host string, env []string, releases bool, lk *jobLock) Outcome {
	o := Outcome{ID: j.ID, Command: j.Command, Exit: -1}
	st := &Status{
		ID: j.ID, Command: j.Command, State: Started, Exit: -1, Hash: j.Hash,
		Releases: releases, Host: host, PID: os.Getpid(), Shard: r.Shard.String(),
		Start: time.Now().UTC(),
	}
	b, err := json.Marshal(st)
	if err == nil {
		err = lk.record(b)
	}
	// A release job's "started" must be on disk, in the status that
	// decides reruns, before it can draw noise.
	if err == nil && releases {
		err = WriteStatus(dir, st, true)
	}
	if err != nil {
		o.Result, o.Error = RanFailed, "cannot record its start: "+err.Error()
		return o
	}
	if releases {
		// The child's outcome record (outcome.go): an old one must not
		// speak for this run.
		outcomePath := filepath.Join(dir, OutcomeFile)
		if err := os.Remove(outcomePath); err != nil && !errors.Is(err, fs.ErrNotExist) {
			o.Result, o.Error = Review, "cannot remove the previous outcome record: "+err.Error()
			return o
		}
		env = append(env[:len(env):len(env)], OutcomeEnv+"="+outcomePath)
	}
	exit, secs, runErr := r.runChild(ctx, j, dir, env)
	st.Exit, st.Seconds = exit, secs
	now := time.Now().UTC()
	st.Finished = &now
	// A release job's failure is safe to retry only when its own record
	// says that nothing was charged and no noise drawn (outcome.go); dpsolve
	// release writes one for every return, a bad command line included. No
	// record after a start, a crash included, is needs_review.
	noNoise := !releases
	if releases {
		rec, rerr := ReadOutcome(dir)
		switch {
		case rerr != nil:
			noNoise = false
		case rec != nil:
			st.Outcome = rec.Outcome
			noNoise = rec.provedNoNoise()
		default:
			// No record: even exit status 2 proves nothing, since a Go
			// program that crashes in a panic exits with 2 as well.
			noNoise = false
		}
	}
	switch {
	case runErr == nil && exit == 0:
		st.State = Succeeded
	case releases && !noNoise:
		st.State = NeedsReview
		st.Error = failureMessage(dir, exit, runErr, ctx) + "; the job releases data and may have drawn noise, so it is not re-run: review it, then delete " + filepath.Join(dir, StatusFile) + " to run it again"
	default:
		st.State = Failed
		st.Error = failureMessage(dir, exit, runErr, ctx)
		if releases {
			st.Error += "; it failed before drawing any noise (its outcome record says so), so a rerun runs it again"
		}
	}
	durable := releases || r.Durable
	if durable {
		// Outputs first, then the status that vouches for them.
		if err := syncTree(dir); err != nil && st.Error == "" {
			st.Error = "cannot sync its outputs to disk: " + err.Error()
			if releases {
				st.State = NeedsReview
			} else {
				st.State = Failed
			}
		}
	}
	if err := WriteStatus(dir, st, durable); err != nil {
		o.Result, o.Error = RanFailed, "cannot write its status: "+err.Error()
		if releases {
			o.Result = Review
		}
		return o
	}
	o.Exit, o.Seconds, o.Error = st.Exit, st.Seconds, st.Error
	switch st.State {
	case Succeeded:
		o.Result = Ran
	case NeedsReview:
		o.Result = Review
	default:
		o.Result = RanFailed
	}
	return o
}

// runChild runs "Exe Command Args..." in the manifest's folder with stdout
// to dir/stdout (through a temporary file renamed when the job ends) and
// stderr to dir/stderr. It returns the exit status (-1: killed or not
// started), the wall time, and an error when the child could not be run or
// was killed by a signal.
func (r *Runner) runChild(ctx context.Context, j Job, dir string, env []string) (int, float64, error) {
	stdoutTmp := filepath.Join(dir, "."+StdoutFile+".tmp")
	so, err := os.Create(stdoutTmp)
	if err != nil {
		return -1, 0, err
	}
	se, err := os.Create(filepath.Join(dir, StderrFile))
	if err != nil {
		so.Close()
		return -1, 0, err
	}
	defer se.Close()
	if r.InProcess != nil && !Releases(j.Command) {
		if exit, secs, ok := r.runInProcess(j, dir, so, se); ok {
			err := so.Close()
			if err == nil {
				err = os.Rename(stdoutTmp, filepath.Join(dir, StdoutFile))
			}
			return exit, secs, err
		}
	}
	cmd := exec.Command(r.Exe, append([]string{j.Command}, j.ExpandArgs(dir)...)...)
	cmd.Dir = r.Manifest.Dir
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = so, se
	cmd.SysProcAttr = childAttr()
	// Pdeathsig is tied to the thread that forks the child.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		so.Close()
		return -1, 0, err
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			cmd.Process.Signal(syscall.SIGTERM)
			grace := r.GracePeriod
			if grace <= 0 {
				grace = 10 * time.Second
			}
			select {
			case <-time.After(grace):
				cmd.Process.Kill()
			case <-done:
			}
		case <-done:
		}
	}()
	waitErr := cmd.Wait()
	close(done)
	secs := time.Since(t0).Seconds()
	exit := cmd.ProcessState.ExitCode()
	if err := so.Close(); err != nil && waitErr == nil {
		waitErr = err
	}
	if err := os.Rename(stdoutTmp, filepath.Join(dir, StdoutFile)); err != nil && waitErr == nil {
		waitErr = err
	}
	if exit == 0 || waitErr == nil {
		return exit, secs, waitErr
	}
	var ee *exec.ExitError
	if errors.As(waitErr, &ee) && exit > 0 {
		return exit, secs, nil // a plain failure: the message is on stderr
	}
	return exit, secs, waitErr
}

// runInProcess runs the job through r.InProcess, turning a panic into a
// failure of the job rather than of the batch.
func (r *Runner) runInProcess(j Job, dir string, so, se *os.File) (exit int, secs float64, ok bool) {
	t0 := time.Now()
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(se, "dpsolve batch: job %s panicked in-process: %v\n", j.ID, p)
			exit, secs, ok = -1, time.Since(t0).Seconds(), true
		}
	}()
	exit, ok = r.InProcess(j.Command, j.ExpandArgs(dir), so, se)
	return exit, time.Since(t0).Seconds(), ok
}

// failureMessage says why a job failed: its last line on stderr, and how it
// ended.
func failureMessage(dir string, exit int, runErr error, ctx context.Context) string {
	var how string
	switch {
	case runErr != nil && ctx.Err() != nil:
		how = "interrupted: the batch was stopped (" + runErr.Error() + ")"
	case runErr != nil:
		how = runErr.Error()
	default:
		how = fmt.Sprintf("exit status %d", exit)
	}
	if last := lastLine(filepath.Join(dir, StderrFile)); last != "" {
		return last + " (" + how + ")"
	}
	return how
}

// lastLine returns the last non-empty line of a file (at most 500 bytes).
func lastLine(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const tail = 4096
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(fi.Size()-tail, 0)
	buf := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil {
		return ""
	}
	lines := bytes.Split(bytes.TrimRight(buf, "\r\n\t "), []byte("\n"))
	last := strings.TrimSpace(string(lines[len(lines)-1]))
	if len(last) > 500 {
		last = last[:500] + "…"
	}
	return last
}
