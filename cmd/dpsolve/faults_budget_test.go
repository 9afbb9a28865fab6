package main

// Interrupts of releases that charge a ledger, and of plan: an interrupt
// before the charge leaves the ledger byte-for-byte unchanged; one after it
// says that the budget was spent and nothing released; the records are
// read with the interrupt checked between buffers; plan reports progress
// at once and stops within half a second.

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// interruptRelease runs args (a release to "o" charging L.json) and sends
// SIGINT at random points over its duration; each round asserts the
// ledger/output invariant. Before: an interrupt 10–120 ms into a release
// exited 130 with "no output … was written" and the ledger charged.
func interruptRelease(t *testing.T, dir string, args []string, stopWithin time.Duration) {
	t.Helper()
	rng := faultRand(t)
	ledgerPath := filepath.Join(dir, "L.json")
	d := baseline(t, dir, args...)
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "o")))
	counts := map[string]int{}
	defer func() { t.Logf("baseline %v; outcomes %v", d, counts) }()
	for round := 0; round < 2*faultRounds; round++ {
		before, err := os.ReadFile(ledgerPath)
		require.NoError(t, err)
		s := startBin(t, dir, args...)
		time.Sleep(10*time.Millisecond + time.Duration(rng.Float64()*float64(d)))
		sent := time.Now()
		_ = s.cmd.Process.Signal(syscall.SIGINT)
		code, _ := s.wait(t)
		stopped := time.Since(sent)
		after, err := os.ReadFile(ledgerPath)
		require.NoError(t, err)
		charged := !bytes.Equal(before, after)
		_, statErr := os.Stat(filepath.Join(dir, "o"))
		released := statErr == nil
		msg := s.errb.String()
		switch {
		case code == exitInterrupted && !charged:
			counts["interrupted, not charged"]++
			assert.False(t, released, "round %d", round)
			assert.NotContains(t, msg, "budget was charged", "round %d", round)
		case code == exitInterrupted && charged:
			counts["interrupted after the charge"]++
			assert.False(t, released, "round %d", round)
			assert.Contains(t, msg, "interrupted after the budget was charged", "round %d: the ledger was charged but the message does not say so: %s", round, msg)
			assert.Contains(t, msg, "nothing was released", "round %d", round)
		case code == 0:
			counts["released"]++
			assert.True(t, charged && released, "round %d: exit 0, charged %v, released %v", round, charged, released)
		default:
			t.Errorf("round %d: exit %d: %s", round, code, msg)
		}
		assert.Less(t, stopped, stopWithin, "round %d: stopped %v after SIGINT", round, stopped)
		require.NoError(t, os.RemoveAll(filepath.Join(dir, "o")))
		for _, l := range leftovers(dir) {
			assert.NotContains(t, l, ".o.tmp-", "round %d: a temporary output is left", round)
		}
	}
}

func TestFaultInterruptReleaseLedger(t *testing.T) {
	dir := budgetFixture(t)
	interruptRelease(t, dir, relArgs("0.01", "L.json", "o"), 2*time.Second)
}

// The records read is interruptible: SIGINT 0.3–0.6 s into reading a
// million records charged the ledger before (the read ran to its end).
func TestFaultInterruptReleaseReadingRecords(t *testing.T) {
	dir := budgetFixture(t)
	b, err := os.ReadFile(adultCSV(t))
	require.NoError(t, err)
	header, body, _ := strings.Cut(string(b), "\n")
	var sb strings.Builder
	sb.WriteString(header + "\n")
	for i := 0; i < 20; i++ { // 976,840 records
		sb.WriteString(body)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big.csv"), []byte(sb.String()), 0o644))
	args := []string{"release", "--spec", "m.json", "--data", "big.csv", "--template", "marginals",
		"--rho", "0.01", "--budget-file", "L.json", "--out", "o", "--insecure-seed", "7"}
	interruptRelease(t, dir, args, time.Second)
}

// plan prints its first progress line within 1 s and stops within 0.5 s
// of SIGINT (before: 1.0–6.3 s to exit, no progress for 8 s, on a
// 6-attribute spec).
func TestFaultPlanPromptProgressAndStop(t *testing.T) {
	rng := faultRand(t)
	dir := t.TempDir()
	spec := `{"domain": [{"name": "fnlwgt", "size": 100}, {"name": "capital-gain", "size": 100}, {"name": "capital-loss", "size": 100},
	  {"name": "hours-per-week", "size": 99}, {"name": "age", "size": 85}, {"name": "native-country", "size": 42}],
	 "workload": [{"name": "m2", "marginals": {"k": 2}}, {"name": "m3", "marginals": {"k": 3}},
	              {"name": "r", "product": {"fnlwgt": "allrange", "capital-gain": "allrange"}}]}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "spec.json"), []byte(spec), 0o644))
	args := []string{"plan", "--spec", "spec.json", "--template", "best", "--out", "p"}
	d := baseline(t, dir, args...)
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "p")))
	for round := 0; round < faultRounds; round++ {
		start := time.Now()
		s := startBin(t, dir, args...)
		waitForText(t, &s.errb, " step 1 ", time.Second)
		t.Logf("round %d: first progress step after %v", round, time.Since(start))
		time.Sleep(time.Duration(rng.Float64() * float64(d) / 2))
		sent := time.Now()
		_ = s.cmd.Process.Signal(syscall.SIGINT)
		code, _ := s.wait(t)
		stopped := time.Since(sent)
		if code == 0 {
			require.NoError(t, os.RemoveAll(filepath.Join(dir, "p")))
			continue
		}
		assert.Equal(t, exitInterrupted, code, "round %d: %s", round, s.errb.String())
		assert.Less(t, stopped, 500*time.Millisecond, "round %d: stopped %v after SIGINT", round, stopped)
		assert.NoDirExists(t, filepath.Join(dir, "p"))
	}
}
