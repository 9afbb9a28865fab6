package main

// The bad-input suite for the commands that take spec files, records and
// manifests (plan, release, batch) and for bench's lists: bad specs, missing
// flags, outputs that name an input or cannot be written, trailing junk.
// Each case runs the built binary in a fresh directory and asserts the exit
// status, the message, the files on disk afterwards (recursively: these
// commands write directories), that every input is unchanged, and that no
// Go runtime text appears.

import (
	"crypto/sha256"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// specFixture is relFixture (spec.json, records.csv, plan/) plus the bad
// inputs the cases use.
func specFixture(t *testing.T) string {
	t.Helper()
	dir, _, _, _ := relFixture(t)
	good, err := os.ReadFile(filepath.Join(dir, "spec.json"))
	require.NoError(t, err)
	files := map[string]string{
		"junk.json":      string(good) + " {}\n",
		"short.json":     string(good[:len(good)/2]),
		"size0.json":     `{"domain": [{"name": "a", "size": 0}], "workload": [{"product": {"a": "prefix"}}]}`,
		"blockjunk.json": `{"domain": [{"name": "a", "size": 4}], "workload": [{"product": {"a": "wrange:m=3,"}}]}`,
		"badcode.csv":    "a,b,c\n0,0,0\n7,0,0\n",
		"fraction.csv":   "a,b,c\n0,0,0\n1.5,0,0\n",
		"ragged.csv":     "a,b,c\n0,0,0\n1,2\n",
		"noattr.csv":     "a,b\n0,0\n",
		"m.jsonl":        `{"id": "a", "command": "solve", "args": ["--workload", "prefix", "--n", "8", "--quiet"]}` + "\n",
		"mjunk.jsonl":    `{"id": "a", "command": "solve", "args": []} x` + "\n",
		"mdup.jsonl":     `{"id": "a", "command": "solve", "args": []}` + "\n" + `{"id": "A", "command": "solve", "args": []}` + "\n",
		"mcmd.jsonl":     `{"id": "a", "command": "bogus", "args": []}` + "\n",
		"mempty.jsonl":   "",
		"mmem.jsonl": `{"id": "a", "command": "solve", "args": ["--workload", "prefix", "--n", "1024", "--quiet"]}` + "\n" +
			`{"id": "b", "command": "solve", "args": ["--workload", "prefix", "--n", "8", "--quiet"]}` + "\n",
		"notdir": "a file, not a directory\n",
	}
	for name, body := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	require.NoError(t, os.Mkdir(filepath.Join(dir, "full"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "full", "keep.txt"), []byte("not a plan\n"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "ro"), 0o555))
	t.Cleanup(func() { os.Chmod(filepath.Join(dir, "ro"), 0o755) })
	return dir
}

// treeHashes records every regular file under dir by relative path.
func treeHashes(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = sha256.Sum256(b)
		return nil
	}))
	return out
}

// rootCanWrite reports whether a read-only directory is writable anyway
// (the tests run as root): the non-writable cases are then skipped.
func rootCanWrite(dir string) bool { return probeWritable(filepath.Join(dir, "ro")) == nil }

func TestBadInputSpecCommands(t *testing.T) {
	rel := func(extra ...string) []string {
		return append([]string{"release", "--spec", "spec.json", "--data", "records.csv", "--plan", "plan", "--eps", "1", "--delta", "1e-6", "--insecure-seed", "1"}, extra...)
	}
	relOut := func(out string) []string { return rel("--out", out) }
	quick := time.Second // refused before any work: well under a second
	cases := []badCase{
		// plan
		{name: "plan no spec", args: []string{"plan"}, code: 2, stderr: []string{"--spec is required"}},
		{name: "plan truncated spec", args: []string{"plan", "--spec", "short.json"}, code: 1, stderr: []string{"short.json", "ends too early"}},
		{name: "plan spec trailing junk", args: []string{"plan", "--spec", "junk.json", "--out", "p2"}, code: 1, stderr: []string{"unexpected data after the JSON value"}, absent: []string{"p2"}},
		{name: "plan size 0", args: []string{"plan", "--spec", "size0.json"}, code: 1, stderr: []string{`attribute "a"`, "size must be an integer"}},
		{name: "plan block trailing comma", args: []string{"plan", "--spec", "blockjunk.json"}, code: 1, stderr: []string{`"wrange:m=3,"`, "bad parameter"}},
		{name: "plan bad template", args: []string{"plan", "--spec", "spec.json", "--template", "bogus"}, code: 2, stderr: []string{"--template must be one of"}},
		{name: "plan out = spec", args: []string{"plan", "--spec", "spec.json", "--out", "spec.json"}, code: 2, stderr: []string{"--out spec.json is also an input"}, not: []string{"dpsolve plan: plan "}, within: quick},
		{name: "plan out = spec via ./", args: []string{"plan", "--spec", "spec.json", "--out", "./full/../spec.json"}, code: 2, stderr: []string{"is also an input"}, within: quick},
		{name: "plan out missing dir", args: []string{"plan", "--spec", "spec.json", "--out", "missing_dir/p"}, code: 2, stderr: []string{"directory missing_dir does not exist"}, not: []string{"dpsolve plan: plan "}, absent: []string{"missing_dir"}, within: quick},
		{name: "plan out under a file", args: []string{"plan", "--spec", "spec.json", "--out", "notdir/p"}, code: 2, stderr: []string{"notdir is not a directory"}, within: quick},
		{name: "plan out not a plan dir", args: []string{"plan", "--spec", "spec.json", "--out", "full"}, code: 2, stderr: []string{"not a plan directory"}, not: []string{"dpsolve plan: plan "}, within: quick},
		{name: "plan out non-writable", args: []string{"plan", "--spec", "spec.json", "--out", "ro/p"}, code: 2, stderr: []string{"cannot write in ro"}, absent: []string{"ro/p"}, within: quick},
		{name: "plan out ok", args: []string{"plan", "--spec", "spec.json", "--out", "p2", "--quiet"}, code: 0, exist: []string{"p2/strategy.json"}},
		// release
		{name: "release no spec", args: []string{"release", "--data", "records.csv", "--eps", "1", "--out", "o"}, code: 2, stderr: []string{"--spec is required"}},
		{name: "release no data", args: []string{"release", "--spec", "spec.json", "--eps", "1", "--out", "o"}, code: 2, stderr: []string{"--data is required"}},
		{name: "release no out", args: rel(), code: 2, stderr: []string{"--out is required"}},
		{name: "release no budget", args: []string{"release", "--spec", "spec.json", "--data", "records.csv", "--out", "o"}, code: 2, stderr: []string{"give a budget"}, absent: []string{"o"}},
		{name: "release truncated spec", args: []string{"release", "--spec", "short.json", "--data", "records.csv", "--eps", "1", "--out", "o"}, code: 1, stderr: []string{"ends too early"}, absent: []string{"o"}},
		{name: "release spec trailing junk", args: []string{"release", "--spec", "junk.json", "--data", "records.csv", "--eps", "1", "--out", "o"}, code: 1, stderr: []string{"unexpected data after the JSON value"}, absent: []string{"o"}},
		{name: "release out = data", args: relOut("records.csv"), code: 2, stderr: []string{"--out records.csv"}, not: []string{"released"}, within: quick},
		{name: "release out = spec", args: relOut("spec.json"), code: 2, stderr: []string{"--out spec.json"}, not: []string{"released"}, within: quick},
		{name: "release out = plan", args: relOut("plan"), code: 2, stderr: []string{"--out plan exists and is not empty"}, within: quick},
		{name: "release out missing dir", args: relOut("missing_dir/o"), code: 2, stderr: []string{"cannot write in missing_dir"}, absent: []string{"missing_dir"}, within: quick},
		{name: "release out under a file", args: relOut("notdir/o"), code: 2, stderr: []string{"not a directory"}, within: quick},
		{name: "release out non-writable", args: relOut("ro/o"), code: 2, stderr: []string{"cannot write in ro"}, absent: []string{"ro/o"}, within: quick},
		{name: "release seed junk", args: []string{"release", "--spec", "spec.json", "--data", "records.csv", "--eps", "1", "--out", "o", "--insecure-seed", "1x"}, code: 2, stderr: []string{"--insecure-seed must be a non-negative integer"}, absent: []string{"o"}},
		{name: "release eps junk", args: []string{"release", "--spec", "spec.json", "--data", "records.csv", "--eps", "1x", "--out", "o"}, code: 2, stderr: []string{"-eps"}, absent: []string{"o"}},
		{name: "release code out of range", args: []string{"release", "--spec", "spec.json", "--data", "badcode.csv", "--plan", "plan", "--eps", "1", "--out", "o"}, code: 1, stderr: []string{`column "a"`, `value "7" is not an integer code in [0, 3)`}, absent: []string{"o"}},
		{name: "release fractional code", args: []string{"release", "--spec", "spec.json", "--data", "fraction.csv", "--plan", "plan", "--eps", "1", "--out", "o"}, code: 1, stderr: []string{`value "1.5" is not an integer code`}, absent: []string{"o"}},
		{name: "release ragged records", args: []string{"release", "--spec", "spec.json", "--data", "ragged.csv", "--plan", "plan", "--eps", "1", "--out", "o"}, code: 1, stderr: []string{"line 3", "different number of fields"}, absent: []string{"o"}},
		{name: "release header lacks attribute", args: []string{"release", "--spec", "spec.json", "--data", "noattr.csv", "--plan", "plan", "--eps", "1", "--out", "o"}, code: 1, stderr: []string{`lacks the attribute(s) "c"`}, absent: []string{"o"}},
		{name: "release ok", args: relOut("o"), code: 0, exist: []string{"o/answers.csv", "o/release.json"}},
		// batch
		{name: "batch no flags", args: []string{"batch"}, code: 2, stderr: []string{"--manifest and --out are required"}},
		{name: "batch no out", args: []string{"batch", "--manifest", "m.jsonl"}, code: 2, stderr: []string{"--manifest and --out are required"}},
		{name: "batch missing manifest", args: []string{"batch", "--manifest", "none.jsonl", "--out", "b"}, code: 1, stderr: []string{"none.jsonl"}, absent: []string{"b"}},
		{name: "batch manifest trailing junk", args: []string{"batch", "--manifest", "mjunk.jsonl", "--out", "b"}, code: 1, stderr: []string{"line 1", "more than one JSON value"}, absent: []string{"b"}},
		{name: "batch duplicate id", args: []string{"batch", "--manifest", "mdup.jsonl", "--out", "b"}, code: 1, stderr: []string{"line 2", `"A" repeats the id on line 1`}, absent: []string{"b"}},
		{name: "batch unknown command", args: []string{"batch", "--manifest", "mcmd.jsonl", "--out", "b"}, code: 1, stderr: []string{`unknown command "bogus"`}, absent: []string{"b"}},
		{name: "batch empty manifest", args: []string{"batch", "--manifest", "mempty.jsonl", "--out", "b"}, code: 1, stderr: []string{"no jobs"}, absent: []string{"b"}},
		{name: "batch out = manifest", args: []string{"batch", "--manifest", "m.jsonl", "--out", "m.jsonl"}, code: 2, stderr: []string{"--out m.jsonl is also an input"}, within: quick},
		{name: "batch out under a file", args: []string{"batch", "--manifest", "m.jsonl", "--out", "notdir/b"}, code: 2, stderr: []string{"notdir is not a directory"}, within: quick},
		{name: "batch out is a file", args: []string{"batch", "--manifest", "m.jsonl", "--out", "notdir"}, code: 2, stderr: []string{"exists and is not a directory"}, within: quick},
		{name: "batch out non-writable", args: []string{"batch", "--manifest", "m.jsonl", "--out", "ro/b/c"}, code: 2, stderr: []string{"cannot write in ro"}, absent: []string{"ro/b"}, within: quick},
		{name: "batch shard junk", args: []string{"batch", "--manifest", "m.jsonl", "--out", "b", "--shard", "1/2x"}, code: 2, stderr: []string{`"1/2x" is not I/N`}, absent: []string{"b"}},
		{name: "batch shard out of range", args: []string{"batch", "--manifest", "m.jsonl", "--out", "b", "--shard", "3/2"}, code: 2, stderr: []string{"shard index 3"}, absent: []string{"b"}},
		{name: "batch ok", args: []string{"batch", "--manifest", "m.jsonl", "--out", "nested/b", "--quiet"}, code: 0, exist: []string{"nested/b/a/status.json"}},
		// Memory: two concurrent jobs each plan for half the limit. Solve at
		// n = 1024 needs 64 MiB + 80 MiB (memSolve·8·n²): it fits 0.85·256 MiB
		// alone but not 0.85·128 MiB.
		{name: "batch shares memory", args: []string{"batch", "--manifest", "mmem.jsonl", "--out", "mm", "--workers", "2", "--oversubscribe"}, env: []string{"DPSOLVE_MEMORY_LIMIT=256MiB"},
			code: 1, stderr: []string{"each of the 2 concurrent jobs plans for at most 128 MiB", "n = 1024 needs about", "1 of 2 jobs did not succeed"}, exist: []string{"mm/a/status.json", "mm/b/status.json"}},
		// sdp --solve: CSDP's Schur complement grows with n⁴.
		{name: "sdp solve n=1000", args: []string{"sdp", "--workload", "prefix", "--n", "1000", "--solve"}, code: 1, stderr: []string{"needs about", "TiB", "Schur complement", "the largest n that fits"}, within: quick},
		// bench and lrm lists and options
		{name: "bench empty n entry", args: []string{"bench", "--n", "256,,512"}, code: 2, stderr: []string{`--n "256,,512" has an empty entry`}, within: quick},
		{name: "bench trailing comma", args: []string{"bench", "--n", "256,"}, code: 2, stderr: []string{"empty entry"}, within: quick},
		{name: "bench empty workload entry", args: []string{"bench", "--n", "16", "--workload", "prefix,,allrange"}, code: 2, stderr: []string{"--workload", "empty entry"}, within: quick},
		{name: "bench empty scaling entry", args: []string{"bench", "--n", "16", "--scaling", "--scaling-n", "16,,32"}, code: 2, stderr: []string{"--scaling-n", "empty entry"}, within: quick},
		{name: "lrm rank factor words", args: []string{"lrm", "--workload", "prefix", "--n", "8", "--rank-factor", "0.5"}, code: 1, stderr: []string{"rank factor", "at least 1"}, not: []string{"RankFactor"}},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			dir := specFixture(t)
			if strings.Contains(c.name, "non-writable") && rootCanWrite(dir) {
				t.Skip("running as root: a read-only directory is writable")
			}
			checkBadCase(t, dir, c, treeHashes)
		})
	}
}

// checkBadCase runs c in dir and asserts everything a badCase declares;
// snapshot lists the files that count as inputs (before) and outputs.
func checkBadCase(t *testing.T, dir string, c badCase, snapshot func(*testing.T, string) map[string][32]byte) {
	t.Helper()
	before := snapshot(t, dir)
	code, stdout, stderr, took := runBin(t, dir, c.env, c.args...)
	assert.Equal(t, c.code, code, "stderr: %s", stderr)
	for _, s := range c.stderr {
		assert.Contains(t, stderr, s)
	}
	for _, s := range c.stdout {
		assert.Contains(t, stdout, s)
	}
	for _, s := range append(append([]string{}, c.not...), runtimeNoise...) {
		assert.NotContains(t, stderr+stdout, s)
	}
	for _, f := range c.exist {
		assert.FileExists(t, filepath.Join(dir, f))
	}
	for _, f := range c.absent {
		assert.NoFileExists(t, filepath.Join(dir, f))
		assert.NoDirExists(t, filepath.Join(dir, f))
	}
	after := snapshot(t, dir)
	for name, h := range before {
		assert.Equal(t, h, after[name], "input %s changed", name)
	}
	// Nothing appears but under a declared output (no temporary files or
	// directories left, no probe files).
	for name := range after {
		if _, ok := before[name]; ok {
			continue
		}
		declared := false
		for _, e := range c.exist {
			declared = declared || name == e || strings.HasPrefix(name, filepath.Dir(e)+string(filepath.Separator))
		}
		assert.True(t, declared, "unexpected file %s", name)
	}
	if c.within > 0 {
		assert.Less(t, took, c.within, "took %v", took)
	}
}
