package batch

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseManifest(t *testing.T) {
	src := `# a comment
{"id": "a-1", "command": "solve", "args": ["--n", "8", "--out-a", "{out}/A.npy"]}

   {"command":"plan","id":"B_2.x"}
`
	jobs, err := ParseManifest(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 || jobs[0].ID != "a-1" || jobs[1].ID != "B_2.x" || jobs[0].Line != 2 || jobs[1].Line != 4 {
		t.Fatalf("jobs = %+v", jobs)
	}
	if jobs[1].Args == nil || len(jobs[1].Args) != 0 {
		t.Errorf("missing args should parse as empty, got %#v", jobs[1].Args)
	}
	got := jobs[0].ExpandArgs("/o/a-1")
	if got[3] != "/o/a-1/A.npy" || jobs[0].Args[3] != "{out}/A.npy" {
		t.Errorf("ExpandArgs = %v (args %v)", got, jobs[0].Args)
	}
}

func TestManifestHash(t *testing.T) {
	parse := func(line string) Job {
		t.Helper()
		jobs, err := ParseManifest(strings.NewReader(line))
		if err != nil {
			t.Fatal(err)
		}
		return jobs[0]
	}
	a := parse(`{"id":"x","command":"solve","args":["--n","8"]}`)
	b := parse(`{ "args" : [ "--n", "8" ], "command": "solve", "id": "x" }`)
	if a.Hash != b.Hash {
		t.Errorf("spacing and key order changed the hash: %s vs %s", a.Hash, b.Hash)
	}
	for _, other := range []string{
		`{"id":"x","command":"solve","args":["--n","9"]}`,
		`{"id":"x","command":"solve","args":["--n","8",""]}`,
		`{"id":"x","command":"plan","args":["--n","8"]}`,
		`{"id":"y","command":"solve","args":["--n","8"]}`,
		`{"id":"x","command":"solve","args":["--n8"]}`,
	} {
		if parse(other).Hash == a.Hash {
			t.Errorf("%s has the same hash as the original line", other)
		}
	}
}

func TestParseManifestErrors(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"empty", "\n# only a comment\n", "no jobs"},
		{"not json", "{id: 1}\n", "line 1"},
		{"unknown field", `{"id":"a","command":"solve","argz":[]}`, "argz"},
		{"two values", `{"id":"a","command":"solve"} {"id":"b","command":"solve"}`, "more than one"},
		{"no command", `{"id":"a"}`, "no command"},
		{"batch in batch", `{"id":"a","command":"batch"}`, "cannot run another batch"},
		{"flag as command", `{"id":"a","command":"--json"}`, "flag"},
		{"duplicate", "{\"id\":\"a\",\"command\":\"solve\"}\n{\"id\":\"A\",\"command\":\"solve\"}\n", "line 2: job id \"A\" repeats the id on line 1"},
		{"slash", `{"id":"a/b","command":"solve"}`, "'/'"},
		{"dotdot", `{"id":"..","command":"solve"}`, "start with a letter or digit"},
		{"no id", `{"command":"solve"}`, "no id"},
		{"args not strings", `{"id":"a","command":"solve","args":[1]}`, "line 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseManifest(strings.NewReader(tc.src))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrInput) {
				t.Errorf("err = %v, want an input error containing %q", err, tc.want)
			}
			checkOnePrefix(t, err)
		})
	}
}

// checkOnePrefix checks that err says "batch: invalid input: " once, at
// the start: an error wrapped on its way up must not repeat the prefix.
func checkOnePrefix(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "batch: invalid input: ") || strings.Count(msg, "batch:") != 1 || strings.Count(msg, "invalid input") != 1 {
		t.Errorf("%q: want exactly one leading \"batch: invalid input: \"", msg)
	}
}

// TestReadManifestErrorNamesTheFile: the file's errors name it once, after
// the one prefix, then the line: what the CLI prints after "dpsolve batch: ".
func TestReadManifestErrorNamesTheFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "m.jsonl")
	if err := os.WriteFile(p, []byte("{\"id\":\"a\",\"command\":\"solve\"}\n{\"id\":\"a b\",\"command\":\"solve\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadManifest(p)
	want := "batch: invalid input: " + p + ": line 2: job id \"a b\" contains ' '; use only letters, digits, '.', '_' and '-'"
	if err == nil || err.Error() != want || !errors.Is(err, ErrInput) {
		t.Errorf("err = %v\nwant   %s", err, want)
	}
	if err := os.WriteFile(p, []byte("# nothing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ReadManifest(p)
	checkOnePrefix(t, err)
	if err == nil || !strings.Contains(err.Error(), p+": the manifest has no jobs") {
		t.Errorf("err = %v", err)
	}
}

func TestCheckID(t *testing.T) {
	for _, ok := range []string{"a", "county-06037", "2024.tables_v2", strings.Repeat("x", MaxIDLength)} {
		if err := CheckID(ok); err != nil {
			t.Errorf("CheckID(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", ".", "..", ".hidden", "-flag", "_x", "a/b", `a\b`, "a b", "é", "a\x00", "a:b", strings.Repeat("x", MaxIDLength+1)} {
		err := CheckID(bad)
		if err == nil || !errors.Is(err, ErrInput) {
			t.Errorf("CheckID(%q) accepted an unsafe id", bad)
		}
		checkOnePrefix(t, err)
	}
}

func TestReadManifestDir(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "m.jsonl")
	if err := os.WriteFile(p, []byte(`{"id":"a","command":"solve"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := ReadManifest(p)
	if err != nil {
		t.Fatal(err)
	}
	if m.Dir != dir || m.Path != p || len(m.Jobs) != 1 {
		t.Errorf("manifest = %+v, want dir %s", m, dir)
	}
	if _, err := ReadManifest(filepath.Join(dir, "missing.jsonl")); err == nil {
		t.Error("a missing manifest was accepted")
	}
}

func TestReleases(t *testing.T) {
	for cmd, want := range map[string]bool{"release": true, "answer": true, "run": true, "solve": false, "plan": false, "compare": false} {
		if Releases(cmd) != want {
			t.Errorf("Releases(%q) = %v", cmd, !want)
		}
	}
}
