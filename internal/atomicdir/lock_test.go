//go:build unix

package atomicdir

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// holderEnv makes TestHelperHoldsReservations, in a child copy of this
// test binary, reserve the directory and the file it names ("DIR|FILE"),
// print "held", and wait to be killed.
const holderEnv = "ATOMICDIR_TEST_HOLD"

func TestHelperHoldsReservations(t *testing.T) {
	spec := os.Getenv(holderEnv)
	if spec == "" {
		t.Skip("the child of TestReservationAcrossProcesses")
	}
	dir, file, _ := strings.Cut(spec, "|")
	if _, err := Reserve(dir, nil); err != nil {
		fmt.Println("error:", err)
		os.Exit(3)
	}
	if _, err := ReserveFile(file, nil, nil); err != nil {
		fmt.Println("error:", err)
		os.Exit(3)
	}
	fmt.Println("held")
	time.Sleep(time.Minute) // killed long before
	os.Exit(4)
}

// TestReservationAcrossProcesses: while another process (a child copy of
// this test binary) has reserved a directory and a file, this process is
// refused both with ErrBusy naming the target and the child's process id
// — also when the child's process id is not visible as running (another
// PID namespace sharing the directory), as the lock decides. Once the
// child is killed (SIGKILL: no cleanup runs) both are available at once,
// its leftovers are removed (and reported), and nothing is left beside the
// targets after this process is done with them.
func TestReservationAcrossProcesses(t *testing.T) {
	root := t.TempDir()
	dir, file := filepath.Join(root, "out"), filepath.Join(root, "answers.csv")
	child := exec.Command(os.Args[0], "-test.run=^TestHelperHoldsReservations$")
	child.Env = append(os.Environ(), holderEnv+"="+dir+"|"+file)
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "held\n" {
		t.Fatalf("child: %q, %v", line, err)
	}
	pid := "process " + strconv.Itoa(child.Process.Pid)
	if _, err := Reserve(dir, nil); !errors.Is(err, ErrBusy) || !strings.HasPrefix(err.Error(), dir+" ") || !strings.Contains(err.Error(), pid) {
		t.Errorf("Reserve of the child's directory: %v; want ErrBusy naming %s and %s", err, dir, pid)
	}
	_, err = ReserveFile(file, nil, nil)
	var te *TargetError
	if !errors.Is(err, ErrBusy) || !errors.As(err, &te) || te.Target != file || !strings.Contains(err.Error(), pid) {
		t.Errorf("ReserveFile of the child's file: %v; want ErrBusy for %s naming %s", err, file, pid)
	}
	// The child's entries renamed to a process id that is not running
	// here: the lock alone keeps them live.
	moved := renamePids(t, root, child.Process.Pid, deadPid(t))
	if _, err := Reserve(dir, nil); !errors.Is(err, ErrBusy) {
		t.Errorf("Reserve while the child holds an entry under another pid: %v", err)
	}
	if _, err := ReserveFile(file, nil, nil); !errors.Is(err, ErrBusy) {
		t.Errorf("ReserveFile while the child holds an entry under another pid: %v", err)
	}
	child.Process.Signal(syscall.SIGKILL)
	child.Wait()
	var told []string
	d, err := Reserve(dir, func(p string) { told = append(told, p) })
	if err != nil {
		t.Fatalf("after the child died: %v", err)
	}
	f, err := ReserveFile(file, nil, func(p string) { told = append(told, p) })
	if err != nil {
		t.Fatalf("after the child died: %v", err)
	}
	sort.Strings(told)
	if strings.Join(told, ",") != strings.Join(moved, ",") {
		t.Errorf("leftovers removed %v, want %v", told, moved)
	}
	d.Abort()
	f.Abort()
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("left beside the targets: %v", entries)
	}
}

// deadPid is the id of a process that has exited.
func deadPid(t *testing.T) int {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip(err)
	}
	return cmd.Process.Pid
}

// renamePids renames root's temporary entries named with process id from
// to name process id to instead, and returns the new paths, sorted.
func renamePids(t *testing.T, root string, from, to int) []string {
	t.Helper()
	entries, _ := os.ReadDir(root)
	var out []string
	for _, e := range entries {
		n := e.Name()
		i := strings.Index(n, ".tmp-"+strconv.Itoa(from)+"-")
		if i < 0 {
			continue
		}
		p := filepath.Join(root, n[:i]+".tmp-"+strconv.Itoa(to)+n[i+len(".tmp-"+strconv.Itoa(from)):])
		if err := os.Rename(filepath.Join(root, n), p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	if len(out) != 2 {
		t.Fatalf("the child's entries: %v", entries)
	}
	sort.Strings(out)
	return out
}

// ReserveFile in one process: check refuses before anything is created;
// a second reservation of the path, as a file or a directory, is busy; a
// Commit replaces an existing file and releases the path; Abort removes
// the temporary file; Commit after Commit is ErrClosed, Abort after it
// does nothing.
func TestReserveFile(t *testing.T) {
	root := t.TempDir()
	target := filepath.Join(root, "x.csv")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	no := errors.New("refused")
	if _, err := ReserveFile(target, func() error { return no }, nil); err != no {
		t.Fatalf("check: %v", err)
	}
	f, err := ReserveFile(target, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ReserveFile(target, nil, nil); !errors.Is(err, ErrBusy) {
		t.Errorf("second ReserveFile: %v", err)
	}
	if _, err := Reserve(target, nil); !errors.Is(err, ErrBusy) && !errors.Is(err, ErrNotDir) {
		t.Errorf("Reserve of a reserved file path: %v", err)
	}
	if err := os.WriteFile(f.Temp(), []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "new" {
		t.Errorf("target holds %q", b)
	}
	if err := f.Commit(); !errors.Is(err, ErrClosed) {
		t.Errorf("second Commit: %v", err)
	}
	f.Abort()
	if b, _ := os.ReadFile(target); string(b) != "new" {
		t.Errorf("Abort after Commit changed the target: %q", b)
	}
	g, err := ReserveFile(target, nil, nil)
	if err != nil {
		t.Fatalf("after Commit: %v", err)
	}
	g.Abort()
	if entries, _ := os.ReadDir(root); len(entries) != 1 {
		t.Errorf("left beside the target: %v", entries)
	}
	_, err = ReserveFile(filepath.Join(root, "missing", "y.csv"), nil, nil)
	var te *TargetError
	if !errors.As(err, &te) || errors.Is(err, ErrBusy) {
		t.Errorf("a missing directory: %v", err)
	}
}
