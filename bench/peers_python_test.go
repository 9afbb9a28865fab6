//go:build !purego

package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// This file runs in the default build only: the Python suite does not depend
// on the Go kernel backend, so running it again under -tags purego would
// repeat the same ~12 s of work.

// The peers' own test suite (reference optima, CLI contract, bad input),
// run with the interpreter the harness uses.
func TestPeersPythonSuite(t *testing.T) {
	newTestPeers(t)
	cmd := exec.Command(DefaultPython, "-B", "-m", "unittest", "discover", "-s", "peers", "-p", "test_*.py")
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "OK")
}

// The training-loop noise module's suite (python/dpsolve_noise.py, numpy
// only): each strategy format against dense C⁻¹Z, its state size, its
// command line and its refusal of bad files.
func TestNoisePythonSuite(t *testing.T) {
	newTestPeers(t)
	cmd := exec.Command(DefaultPython, "-B", "-m", "unittest", "discover", "-s", filepath.Join("..", "python"), "-p", "test_*.py")
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "OK")
}
