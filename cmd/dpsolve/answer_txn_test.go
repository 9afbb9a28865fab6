package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/cmd/dpsolve/internal/batch"
	"github.com/dpsolve/dpsolve/internal/matio"
	"github.com/dpsolve/dpsolve/pipeline/publish"
)

// dpsolve answer and run release through pipeline/publish (issue #34):
// every refusal comes before the noise, and a failure after the draw is
// reported as such, in the message and in batch's outcome record.

// txnCommands are answer and run with their own arguments, on 16 cells.
func txnCommands(t *testing.T) (dir string, cmds map[string][]string) {
	dir, aPath, xPath, _ := releaseFixture(t)
	return dir, map[string][]string{
		"answer": {"answer", "--strategy", aPath, "--data", xPath, "--workload", "prefix", "--rho", "0.5", "--mechanism", "zcdp", "--insecure-seed", "3"},
		"run":    {"run", "--data", xPath, "--workload", "prefix", "--rho", "0.5", "--mechanism", "zcdp", "--insecure-seed", "3", "--quiet"},
	}
}

func readOutcome(t *testing.T, path string) batch.OutcomeRecord {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var rec batch.OutcomeRecord
	require.NoError(t, json.Unmarshal(b, &rec))
	return rec
}

// An --out (or --out-xhat) that is a non-empty directory is refused with
// exit 2 before any noise (no seeded-noise warning, which is printed just
// before the draw; the outcome record says refused), and nothing in it is
// touched.
func TestAnswerRunOutDirectoryRefusedBeforeNoise(t *testing.T) {
	dir, cmds := txnCommands(t)
	outcome := filepath.Join(dir, "outcome.json")
	t.Setenv(batch.OutcomeEnv, outcome)
	for name, args := range cmds {
		for _, flag := range []string{"--out", "--out-xhat"} {
			t.Run(name+flag, func(t *testing.T) {
				busy := filepath.Join(dir, name+flag+".npy")
				require.NoError(t, os.MkdirAll(busy, 0o755))
				keep := filepath.Join(busy, "keep.txt")
				require.NoError(t, os.WriteFile(keep, []byte("mine"), 0o644))
				os.Remove(outcome)
				a := append(append([]string(nil), args...), flag, busy)
				if flag == "--out-xhat" {
					a = append(a, "--out", filepath.Join(dir, name+"-answers.npy"))
				}
				code, _, stderr := releaseCLI(t, a...)
				assert.Equal(t, 2, code, stderr)
				assert.Contains(t, stderr, "is a directory")
				assert.NotContains(t, stderr, "NOT differentially private", "noise was about to be drawn")
				b, err := os.ReadFile(keep)
				require.NoError(t, err)
				assert.Equal(t, "mine", string(b))
				assert.NoFileExists(t, filepath.Join(dir, name+"-answers.npy"))
				rec := readOutcome(t, outcome)
				assert.Equal(t, "refused", rec.Outcome)
				assert.False(t, rec.NoiseMayBeDrawn)
			})
		}
	}
}

// A panic injected right after the noise is drawn (publish.InjectFault at
// step "drawn") is not a crash: the command exits 1 saying the noise may
// have been drawn and nothing was released, writes no output, and its
// outcome record says charged_not_released with noise_may_be_drawn. The
// same hook at "committed" (after the rename) changes nothing: released.
func TestAnswerRunPanicAfterDrawReported(t *testing.T) {
	dir, cmds := txnCommands(t)
	outcome := filepath.Join(dir, "outcome.json")
	t.Setenv(batch.OutcomeEnv, outcome)
	for name, args := range cmds {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(dir, name+"-ans.npy")
			xhat := filepath.Join(dir, name+"-xhat.csv")
			a := append(append([]string(nil), args...), "--out", out, "--out-xhat", xhat)
			restore := publish.InjectFault(func(_ context.Context, step string) error {
				if step == "drawn" {
					panic("injected after the draw")
				}
				return nil
			})
			code, _, stderr := releaseCLI(t, a...)
			restore()
			assert.Equal(t, 1, code, stderr)
			assert.Contains(t, stderr, "injected after the draw")
			assert.Contains(t, stderr, "the noise may have been drawn and nothing was released")
			assert.Contains(t, stderr, "NOT differentially private", "the draw happened")
			assert.NoFileExists(t, out)
			assert.NoFileExists(t, xhat)
			left, _ := filepath.Glob(filepath.Join(dir, "."+name+"-*.tmp-*"))
			assert.Empty(t, left)
			rec := readOutcome(t, outcome)
			assert.Equal(t, "charged_not_released", rec.Outcome)
			assert.True(t, rec.NoiseMayBeDrawn)

			restore = publish.InjectFault(func(_ context.Context, step string) error {
				if step == "committed" {
					panic("injected after the commit")
				}
				return nil
			})
			code, _, stderr = releaseCLI(t, a...)
			restore()
			assert.Equal(t, 0, code, stderr)
			v, err := matio.ReadVector(out)
			require.NoError(t, err)
			assert.Len(t, v, 16)
			_, err = matio.ReadVector(xhat)
			require.NoError(t, err)
			assert.Equal(t, "released", readOutcome(t, outcome).Outcome)
		})
	}
}
