//go:build unix

package atomicdir

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

func write(t *testing.T, d *Dir, name, text string) {
	t.Helper()
	if err := d.WriteFile(name, func(w io.Writer) error { _, err := io.WriteString(w, text); return err }); err != nil {
		t.Fatal(err)
	}
}

// TestNothingOfTheUsersIsDeleted: a non-empty directory, a file and a
// symbolic link at the target are refused before any work and left as
// they were; an empty directory is replaced.
func TestNothingOfTheUsersIsDeleted(t *testing.T) {
	root := t.TempDir()
	full := filepath.Join(root, "full")
	os.Mkdir(full, 0o755)
	os.WriteFile(filepath.Join(full, "mine.txt"), []byte("keep"), 0o644)
	file := filepath.Join(root, "file")
	os.WriteFile(file, []byte("keep"), 0o644)
	link := filepath.Join(root, "link")
	os.Symlink(root, link)
	for target, want := range map[string]error{full: ErrNotEmpty, file: ErrNotDir, link: ErrNotDir} {
		d, err := Reserve(target, nil)
		if !errors.Is(err, want) {
			t.Fatalf("%s: got %v, %v; want %v", target, d, err, want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(full, "mine.txt")); string(b) != "keep" {
		t.Fatal("the user's file changed")
	}
	if b, _ := os.ReadFile(file); string(b) != "keep" {
		t.Fatal("the user's file changed")
	}
	empty := filepath.Join(root, "empty")
	os.Mkdir(empty, 0o700)
	d, err := Reserve(empty, nil)
	if err != nil {
		t.Fatal(err)
	}
	write(t, d, "a.txt", "A")
	if err := d.Commit(nil); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(empty, "a.txt")); string(b) != "A" {
		t.Fatalf("a.txt = %q", b)
	}
	left, _ := filepath.Glob(filepath.Join(root, ".empty.*"))
	if len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
}

// TestModesFollowUmask: 0666 and 0777 less the umask (022 here: 0644 and
// 0755).
func TestModesFollowUmask(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	out := filepath.Join(t.TempDir(), "out")
	d, err := Reserve(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	write(t, d, "x.npy", "x")
	if err := d.Commit(nil); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(out)
	fx, _ := os.Stat(filepath.Join(out, "x.npy"))
	if fi.Mode().Perm() != 0o755 || fx.Mode().Perm() != 0o644 {
		t.Fatalf("modes %v %v", fi.Mode(), fx.Mode())
	}
}

// TestOneWriterAtATime: while reserved, a second Reserve in this process
// fails with ErrBusy (another process: TestStaleTempOfDeadWriterRemoved);
// after Commit the target is non-empty and refused; after Abort nothing
// is left and the target can be reserved again.
func TestOneWriterAtATime(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	d, err := Reserve(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Reserve(out, nil); !errors.Is(err, ErrBusy) {
		t.Fatalf("second reserve: %v", err)
	}
	d.Abort()
	if _, err := os.Stat(d.Temp()); !os.IsNotExist(err) {
		t.Fatalf("temp left: %v", err)
	}
	d2, err := Reserve(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	write(t, d2, "a", "a")
	if err := d2.Commit(nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Reserve(out, nil); !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("after commit: %v", err)
	}
	if err := d2.Commit(nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("second commit: %v", err)
	}
}

// TestStaleTempOfDeadWriterRemoved: a .NAME.tmp-PID-* of a process that
// no longer runs (as kill -9 leaves it) is removed by the next Reserve; one
// of a live process reserves the target (ErrBusy) and is kept; no lock file
// is ever left beside the target.
func TestStaleTempOfDeadWriterRemoved(t *testing.T) {
	root := t.TempDir()
	out := filepath.Join(root, "out")
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip(err)
	}
	dead := filepath.Join(root, TempPrefix(out)+strconv.Itoa(cmd.Process.Pid)+"-abc")
	os.Mkdir(dead, 0o700)
	os.WriteFile(filepath.Join(dead, "C.npy"), []byte("x"), 0o600)
	var told []string
	d, err := Reserve(out, func(p string) { told = append(told, p) })
	if err != nil {
		t.Fatal(err)
	}
	d.Abort()
	if _, err := os.Stat(dead); !os.IsNotExist(err) || len(told) != 1 || told[0] != dead {
		t.Fatalf("dead writer's temp: %v, told %v", err, told)
	}
	live := filepath.Join(root, TempPrefix(out)+"1-abc") // pid 1 is alive
	os.Mkdir(live, 0o700)
	if _, err := Reserve(out, nil); !errors.Is(err, ErrBusy) {
		t.Fatalf("a live writer's target: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Fatalf("live writer's temp removed: %v", err)
	}
	os.Remove(live)
	entries, _ := os.ReadDir(root)
	if len(entries) != 0 {
		t.Fatalf("left beside the target: %v", entries)
	}
}

// TestCommitRefusedByReady: ready's error stops the rename; Abort then
// removes everything.
func TestCommitRefusedByReady(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	d, err := Reserve(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	write(t, d, "a", "a")
	stop := errors.New("interrupted")
	if err := d.Commit(func() error { return stop }); err != stop {
		t.Fatal(err)
	}
	d.Abort()
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("target: %v", err)
	}
}

// TestReplaceOwnedOnly: ReserveReplacing replaces an earlier output that
// owned recognizes (dpsolve plan's strategy.json) and refuses any other
// non-empty directory; a file written 0600 into the temporary directory
// (as temporary-file helpers do) is committed 0666 less the umask.
func TestReplaceOwnedOnly(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	root := t.TempDir()
	out := filepath.Join(root, "plan")
	os.Mkdir(out, 0o755)
	os.WriteFile(filepath.Join(out, "strategy.json"), []byte("old"), 0o644)
	os.WriteFile(filepath.Join(out, "A.npy"), []byte("old"), 0o644)
	owned := func(dir string) bool { _, err := os.Stat(filepath.Join(dir, "strategy.json")); return err == nil }
	d, err := ReserveReplacing(out, owned, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d.Temp(), "strategy.json"), []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := d.Commit(nil); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(out, "strategy.json"))
	fi, _ := os.Stat(filepath.Join(out, "strategy.json"))
	if string(b) != "new" || fi.Mode().Perm() != 0o644 {
		t.Fatalf("strategy.json %q %v", b, fi.Mode())
	}
	if _, err := os.Stat(filepath.Join(out, "A.npy")); !os.IsNotExist(err) {
		t.Fatal("the old plan's file survived the replacement")
	}
	if left, _ := filepath.Glob(filepath.Join(root, ".plan*")); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
	other := filepath.Join(root, "other")
	os.Mkdir(other, 0o755)
	os.WriteFile(filepath.Join(other, "thesis.tex"), []byte("mine"), 0o644)
	if _, err := ReserveReplacing(other, owned, nil); !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("a foreign directory: %v", err)
	}
}
