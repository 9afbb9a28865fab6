package main

import (
	"fmt"
	"os"
	"time"
)

// With DPSOLVE_TEST_AS_DPSOLVE=1 the test binary is dpsolve itself, so the
// batch tests can run real jobs as child processes of os.Executable(), as
// the batch command does in production. Test files' init functions run after
// every command registered itself, so the whole command table is there.
//
// Two more variables stage interruptions: DPSOLVE_TEST_JOB_DELAY (a
// duration) makes every command but batch sleep first, so a job is reliably
// "mid-job" for a while; DPSOLVE_TEST_HOLD_AFTER=CMD makes command CMD
// stay alive after it finished successfully (a release job that has drawn
// its noise and written its outputs but not exited), until it is killed.
func init() {
	if os.Getenv("DPSOLVE_TEST_AS_DPSOLVE") != "1" {
		return
	}
	args := os.Args[1:]
	cmd := ""
	if len(args) > 0 {
		cmd = args[0]
	}
	if d, err := time.ParseDuration(os.Getenv("DPSOLVE_TEST_JOB_DELAY")); err == nil && cmd != "batch" {
		time.Sleep(d)
	}
	code := run(args, os.Stdout, os.Stderr)
	if code == 0 && cmd != "" && os.Getenv("DPSOLVE_TEST_HOLD_AFTER") == cmd {
		fmt.Fprintf(os.Stderr, "test: %s finished; holding until killed\n", cmd)
		time.Sleep(time.Hour)
	}
	os.Exit(code)
}
