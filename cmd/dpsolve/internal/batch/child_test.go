package batch

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"
)

// TestMain lets the test binary stand in for dpsolve: with
// BATCH_TEST_CHILD=1 it runs as a job, "<bin> COMMAND [flags]", whose
// behaviour the flags script (see fakeJob), so the runner's bookkeeping is
// tested without the real solvers.
func TestMain(m *testing.M) {
	if os.Getenv("BATCH_TEST_CHILD") == "1" {
		os.Exit(fakeJob(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// fakeJob: --stdout S prints S; --stderr S prints S on stderr; --write P
// creates file P; --sleep D sleeps; --cwd prints the working folder;
// --env NAME prints NAME=value; --exit N exits with N (default 0).
func fakeJob(args []string) int {
	code := 0
	for i := 1; i < len(args); i++ {
		a := args[i]
		val := ""
		if i+1 < len(args) {
			val = args[i+1]
		}
		switch a {
		case "--stdout":
			fmt.Println(val)
			i++
		case "--stderr":
			fmt.Fprintln(os.Stderr, val)
			i++
		case "--write":
			if err := os.WriteFile(val, []byte("written\n"), 0o644); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			i++
		case "--sleep":
			d, _ := time.ParseDuration(val)
			time.Sleep(d)
			i++
		case "--cwd":
			wd, _ := os.Getwd()
			fmt.Println(wd)
		case "--env":
			fmt.Printf("%s=%s\n", val, os.Getenv(val))
			i++
		case "--outcome":
			// A release child's record: "refused", "released" or
			// "charged_not_released".
			if path := os.Getenv(OutcomeEnv); path != "" {
				if err := WriteOutcome(path, OutcomeRecord{Outcome: val, NoiseMayBeDrawn: val != "refused"}); err != nil {
					fmt.Fprintln(os.Stderr, err)
					return 1
				}
			}
			i++
		case "--exit":
			code, _ = strconv.Atoi(val)
			i++
		}
	}
	return code
}
