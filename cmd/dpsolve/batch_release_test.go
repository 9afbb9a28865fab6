package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dpsolve/dpsolve/cmd/dpsolve/internal/batch"
	"github.com/dpsolve/dpsolve/internal/testkit/budgettest"
	"github.com/dpsolve/dpsolve/privacy/ledger"
)

// TestBatchReleasesShareOneLedger runs eight dpsolve release jobs (seeded
// noise) that share one budget ledger from two concurrent --shard
// processes with two workers each. The ledger (ρ = 1) fits three of the
// ρ = 0.3 releases: exactly three are released and charged, the other five
// are refused by the ledger before drawing noise, leave no output and are
// marked failed — safe to retry — and so is a release whose --out cannot
// be created: dpsolve release checks its output before it reads, charges
// or draws anything (the needs_review path of a release killed after
// sampling is TestBatchReleaseKilledAfterSampling's). Reruns
// never repeat a released job; once the limit is raised, the refused jobs
// run again and are released.
func TestBatchReleasesShareOneLedger(t *testing.T) {
	if testing.Short() {
		t.Skip("runs dpsolve processes")
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "spec.json"), []byte(`{"domain": [{"name": "a", "size": 3}, {"name": "b", "size": 4}, {"name": "c", "size": 2}],
 "workload": [{"name": "m", "marginals": {"k": 2}}]}`), 0o644))
	var csv strings.Builder
	csv.WriteString("a,b,c\n")
	rng := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		fmt.Fprintf(&csv, "%d,%d,%d\n", rng.IntN(3), rng.IntN(4), rng.IntN(2))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "data.csv"), []byte(csv.String()), 0o644))
	// L.json is shared by rel-0…7; rel-nodata (a missing records file)
	// and rel-bad-out have their own.
	for _, l := range []string{"L.json", "L2.json", "L3.json"} {
		require.NoError(t, ledger.Create(filepath.Join(dir, l), budgettest.ZCDP(1)))
	}
	releaseArgs := func(id, data, ledgerFile, out string, seed int) []string {
		return []string{"--spec", "spec.json", "--data", data, "--template", "marginals", "--rho", "0.3",
			"--budget-file", ledgerFile, "--label", id, "--out", out, "--insecure-seed", fmt.Sprint(seed), "--json"}
	}
	var jobs []batchJob
	var rel []string
	for i := range 8 {
		id := fmt.Sprintf("rel-%d", i)
		rel = append(rel, id)
		jobs = append(jobs, batchJob{id, "release", releaseArgs(id, "data.csv", "L.json", "{out}/release", i+1)})
	}
	jobs = append(jobs,
		batchJob{"rel-nodata", "release", releaseArgs("rel-nodata", "missing.csv", "L3.json", "{out}/release", 9)},
		batchJob{"rel-bad-out", "release", releaseArgs("rel-bad-out", "data.csv", "L2.json", "{out}/missing/release", 10)},
		batchJob{"plan", "plan", []string{"--spec", "spec.json", "--json", "--quiet"}},
	)
	var buf bytes.Buffer
	for _, j := range jobs {
		b, _ := json.Marshal(j)
		buf.Write(append(b, '\n'))
	}
	manifest := filepath.Join(dir, "jobs.jsonl")
	require.NoError(t, os.WriteFile(manifest, buf.Bytes(), 0o644))
	out := filepath.Join(dir, "out")
	runShards := func() map[string]batch.Outcome {
		t.Helper()
		var procs [2]*exec.Cmd
		var outs [2]bytes.Buffer
		for i := range procs {
			procs[i] = dpsolveCmd(t, dir, nil, "batch", "--manifest", manifest, "--out", out, "--shard", fmt.Sprintf("%d/2", i),
				"--workers", "2", "--threads", "1", "--oversubscribe", "--json", "--quiet")
			procs[i].Stdout = &outs[i]
			require.NoError(t, procs[i].Start())
		}
		res := map[string]batch.Outcome{}
		for i := range procs {
			err := procs[i].Wait()
			assert.Equal(t, 1, procs[i].ProcessState.ExitCode(), "shard %d: %v", i, err)
			for id, o := range batchOutcomes(t, outs[i].String()) {
				res[id] = o
			}
		}
		require.Len(t, res, len(jobs))
		return res
	}
	spent := func(name string) map[string]int {
		t.Helper()
		f, err := ledger.Read(filepath.Join(dir, name))
		require.NoError(t, err)
		// The ledger never overspends (its comparison's slack is 1e-12).
		assert.LessOrEqual(t, f.Total().Rho, f.Limit.Rho*(1+1e-12), "%s overspent", name)
		labels := map[string]int{}
		for _, e := range f.Spent {
			labels[e.Label]++
		}
		return labels
	}
	statusBytes := func(id string) string {
		b, err := os.ReadFile(filepath.Join(out, id, batch.StatusFile))
		require.NoError(t, err)
		return string(b)
	}
	answers := func(id string) string {
		b, err := os.ReadFile(filepath.Join(out, id, "release", "answers.csv"))
		require.NoError(t, err, id)
		return string(b)
	}

	// Round 1: three releases fit.
	res := runShards()
	charged := spent("L.json")
	require.Len(t, charged, 3, "%v", charged)
	released := map[string]string{} // id → status.json
	for _, id := range rel {
		st := statusOf(t, out, id)
		require.NotNil(t, st, id)
		if charged[id] > 0 {
			assert.Equal(t, 1, charged[id], id)
			assert.Equal(t, batch.Ran, res[id].Result, id)
			require.Equal(t, batch.Succeeded, st.State, "%s: %s", id, st.Error)
			answers(id)
			_, err := os.Stat(filepath.Join(out, id, "release", "release.json"))
			assert.NoError(t, err, id)
			released[id] = statusBytes(id)
			continue
		}
		assert.Equal(t, batch.RanFailed, res[id].Result, id)
		assert.Equal(t, batch.Failed, st.State, id)
		assert.Equal(t, 1, st.Exit, id)
		assert.Regexp(t, `^dpsolve release: ledger: invalid input: budget exceeded: L\.json: this release costs rho=0\.3 but rho=0\.9 of the limit rho=1 is already spent over 3 release\(s\) and rho=0\.1 remains; nothing was released \(exit status 1\); it failed before drawing any noise \(its outcome record says so\), so a rerun runs it again$`, st.Error, id)
		_, err := os.Stat(filepath.Join(out, id, "release"))
		assert.True(t, os.IsNotExist(err), "%s: a refused release left output", id)
	}
	require.Len(t, released, 3)
	nd := statusOf(t, out, "rel-nodata")
	assert.Equal(t, batch.Failed, nd.State)
	assert.Equal(t, "dpsolve release: release: invalid input: data: open missing.csv: no such file or directory (exit status 1); it failed before drawing any noise (its outcome record says so), so a rerun runs it again", nd.Error)
	assert.Empty(t, spent("L3.json"), "a release that cannot read its data is not charged")
	bo := statusOf(t, out, "rel-bad-out")
	assert.Equal(t, batch.Failed, bo.State)
	assert.Equal(t, 2, bo.Exit, "an unusable --out is a bad command line")
	assert.Contains(t, bo.Error, "cannot write in")
	assert.Empty(t, spent("L2.json"), "a release refused for its --out is not charged")
	assert.Equal(t, batch.Ran, res["plan"].Result)

	// A released job's answers equal the same release run directly (the
	// seeded noise is the same; a fresh ledger, so that it fits).
	var some string
	for id := range released {
		some = id
	}
	require.NoError(t, ledger.Create(filepath.Join(dir, "direct.json"), budgettest.ZCDP(1)))
	var seed int
	fmt.Sscanf(some, "rel-%d", &seed)
	direct := filepath.Join(t.TempDir(), "release")
	code, _, se := runDpsolve(t, dir, nil, append([]string{"release"}, releaseArgs(some, "data.csv", "direct.json", direct, seed+1)...)...)
	require.Equal(t, 0, code, se)
	want, err := os.ReadFile(filepath.Join(direct, "answers.csv"))
	require.NoError(t, err)
	assert.Equal(t, string(want), answers(some), "%s: batch and direct answers differ", some)

	// Round 2: nothing released runs again; the refused jobs run again
	// and are refused again; the one that needs review is only reported.
	snap := map[string]string{}
	for id := range released {
		snap[id] = answers(id)
	}
	res = runShards()
	assert.Equal(t, charged, spent("L.json"))
	for _, id := range rel {
		if _, ok := released[id]; ok {
			assert.Equal(t, batch.Skipped, res[id].Result, id)
			assert.Equal(t, released[id], statusBytes(id), "%s ran again", id)
			assert.Equal(t, snap[id], answers(id), id)
		} else {
			assert.Equal(t, batch.RanFailed, res[id].Result, id)
			assert.Contains(t, res[id].Error, "budget exceeded", id)
		}
	}
	assert.Equal(t, batch.RanFailed, res["rel-bad-out"].Result)
	assert.Empty(t, spent("L2.json"))
	assert.Equal(t, batch.Skipped, res["plan"].Result)

	// Round 3: with the limit raised, the refused jobs are released; the
	// released ones still never run again.
	f, err := ledger.Read(filepath.Join(dir, "L.json"))
	require.NoError(t, err)
	f.Limit.Rho = 10
	b, err := json.Marshal(f)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "L.json"), b, 0o644))
	res = runShards()
	charged = spent("L.json")
	assert.Len(t, charged, 8)
	for _, id := range rel {
		assert.Equal(t, 1, charged[id], "%s charged %d times", id, charged[id])
		if _, ok := released[id]; ok {
			assert.Equal(t, batch.Skipped, res[id].Result, id)
			assert.Equal(t, released[id], statusBytes(id), "%s ran again", id)
		} else {
			assert.Equal(t, batch.Ran, res[id].Result, id)
		}
	}
	assert.Empty(t, spent("L2.json"))

	code, so, _ := runDpsolve(t, dir, nil, "batch", "status", out, "--json")
	assert.Equal(t, 1, code)
	var rep batchStatusJSON
	require.NoError(t, json.Unmarshal([]byte(so), &rep))
	assert.Equal(t, map[string]int{"succeeded": 9, "failed": 2}, rep.Counts)
}
