package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/dpsolve/dpsolve/blas"
)

// dpsolveBin is the dpsolve binary the subprocess tests (faults_test.go,
// badinput_test.go) run, built once by TestMain with this test binary's
// build tags; binErr says why it is missing.
var (
	dpsolveBin string
	binErr     error
)

// buildTags is set by purego_test.go in the purego build, so the binary
// under test uses the same kernels as the in-process tests.
var buildTags []string

func TestMain(m *testing.M) {
	// As main does: the in-process tests run the commands on the kernels
	// the binary installs.
	blas.Use(blas.Default())
	if bin := os.Getenv("DPSOLVE_TEST_BIN"); bin != "" {
		// Run the subprocess suites against another build (e.g. an older
		// commit's, to see which cases it fails).
		dpsolveBin = bin
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "dpsolve-test-bin-")
	if err != nil {
		binErr = err
	} else {
		dpsolveBin = filepath.Join(dir, "dpsolve")
		args := append([]string{"build"}, buildTags...)
		args = append(args, "-o", dpsolveBin, ".")
		if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	}
	code := m.Run()
	if dir != "" {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// needBinary returns the built binary or fails the test.
func needBinary(t *testing.T) string {
	t.Helper()
	if binErr != nil {
		t.Fatalf("no dpsolve binary: %v", binErr)
	}
	return dpsolveBin
}
