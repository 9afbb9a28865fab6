package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/cmd/dpsolve/internal/batch"
)

// TestBatchSlurm runs the 24-job manifest as a 4-task Slurm array on a
// private single-node cluster (scripts/slurm-local.sh), cancels one task
// with scancel while it runs a job, resubmits the array and checks that the
// rest completes without re-running finished jobs, that every result equals
// the job run directly, and that the failing job is reported.
//
// It needs root (or sudo) to install and run Slurm, so it runs only with
// DPSOLVE_SLURM_TEST=1, as .ci/run sets it; it is skipped then only when
// Slurm cannot be installed (a daemon that will not start fails it). It
// stops the daemons afterwards if it started them.
func TestBatchSlurm(t *testing.T) {
	if os.Getenv("DPSOLVE_SLURM_TEST") != "1" {
		t.Skip("set DPSOLVE_SLURM_TEST=1 to install and start a local Slurm and run the array test (.ci/run does)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 110*time.Second)
	defer cancel()
	script, err := filepath.Abs("../../scripts/slurm-local.sh")
	require.NoError(t, err)
	sbatchFile, err := filepath.Abs("../../examples/slurm/batch.sbatch")
	require.NoError(t, err)

	st, _ := exec.Command("bash", script, "status").Output()
	wasRunning := strings.Count(string(st), " running") == 3
	start := exec.CommandContext(ctx, "bash", script, "start")
	var startOut bytes.Buffer
	start.Stdout, start.Stderr = &startOut, &startOut
	if err := start.Run(); err != nil {
		if start.ProcessState != nil && start.ProcessState.ExitCode() == 3 { // cannot install; 4: installed but not starting, a failure
			t.Skipf("Slurm cannot be installed on this machine:\n%s", startOut.String())
		}
		t.Fatalf("slurm-local.sh start: %v\n%s", err, startOut.String())
	}
	if !wasRunning {
		t.Cleanup(func() {
			if out, err := exec.Command("bash", script, "stop").CombinedOutput(); err != nil {
				t.Errorf("slurm-local.sh stop: %v\n%s", err, out)
			}
		})
	}
	conf := ""
	for _, line := range strings.Split(startOut.String(), "\n") {
		if v, ok := strings.CutPrefix(line, "export SLURM_CONF="); ok {
			conf = v
		}
	}
	require.NotEmpty(t, conf, startOut.String())
	slurm := func(name string, args ...string) *exec.Cmd {
		c := exec.CommandContext(ctx, name, args...)
		c.Env = append(os.Environ(), "SLURM_CONF="+conf)
		return c
	}

	dir := t.TempDir()
	manifest, jobs := testManifest(t, dir)
	out := filepath.Join(dir, "out")
	exe, err := os.Executable()
	require.NoError(t, err)
	submit := func(extraEnv string, wait bool) string {
		args := []string{"--parsable", "--array=0-3", "--chdir", dir, "--output", filepath.Join(dir, "slurm-%A_%a.out"),
			"--export=ALL,DPSOLVE=" + exe + ",DPSOLVE_TEST_AS_DPSOLVE=1" + extraEnv}
		if wait {
			args = append(args, "--wait")
		}
		c := slurm("sbatch", append(args, sbatchFile, manifest, out)...)
		var so, se bytes.Buffer
		c.Stdout, c.Stderr = &so, &se
		err := c.Run()
		// --wait exits with the array's highest task exit status; one task
		// holds the failing job, so 1 is expected.
		if err != nil && !(wait && c.ProcessState != nil && c.ProcessState.ExitCode() == 1) {
			t.Fatalf("sbatch: %v\n%s%s", err, so.String(), se.String())
		}
		id, _, _ := strings.Cut(strings.TrimSpace(so.String()), ";")
		require.NotEmpty(t, id, se.String())
		return id
	}
	logs := func() string {
		files, _ := filepath.Glob(filepath.Join(dir, "slurm-*.out"))
		var b strings.Builder
		for _, f := range files {
			data, _ := os.ReadFile(f)
			fmt.Fprintf(&b, "== %s\n%s", filepath.Base(f), data)
		}
		return b.String()
	}
	defer func() {
		if t.Failed() {
			t.Log(logs())
		}
	}()

	// First submission, with every job slowed down so that task 1 is
	// caught mid-job.
	jobID := submit(",DPSOLVE_TEST_JOB_DELAY=300ms", false)
	t.Cleanup(func() {
		c := exec.Command("scancel", jobID)
		c.Env = append(os.Environ(), "SLURM_CONF="+conf)
		c.Run()
	})
	mine := shardJobs(jobs, 1, 4)
	waitFor(t, 60*time.Second, "array task 1 to finish a job and start another", func() bool {
		done, started := 0, false
		for _, j := range mine {
			c := batch.ReadJob(out, j.ID).Category()
			done += map[bool]int{true: 1}[c == "succeeded"]
			started = started || c == "running"
		}
		return done >= 1 && started
	})
	require.NoError(t, slurm("scancel", jobID+"_1").Run())
	waitFor(t, 60*time.Second, "the first array to end", func() bool {
		so, err := slurm("squeue", "-h", "-j", jobID).Output()
		return err == nil && strings.TrimSpace(string(so)) == ""
	})
	unfinished := 0
	for _, j := range mine {
		if st := statusOf(t, out, j.ID); st == nil || st.State != batch.Succeeded {
			unfinished++
		}
	}
	require.Positive(t, unfinished, "scancel came too late to interrupt task 1")
	code, so, _ := runDpsolve(t, dir, nil, "batch", "status", out, "--manifest", manifest)
	assert.Equal(t, 1, code)
	t.Logf("after scancel:\n%s", so)

	// Resubmit: the rest completes, nothing finished runs again.
	before := snapshotSucceeded(t, out, jobs)
	require.GreaterOrEqual(t, len(before), 4)
	submit("", true)
	for id, b := range before {
		now, err := os.ReadFile(filepath.Join(out, id, batch.StatusFile))
		require.NoError(t, err)
		assert.Equal(t, string(b), string(now), "%s ran again after the resubmission", id)
	}
	checkFinished(t, dir, out, jobs)
}
