// Package atomicdir writes an output directory all at once: its files are
// written into a fresh temporary directory beside the target, each file
// and the directory are fsynced, and the directory is renamed into place;
// the parent is fsynced after the rename. A reader sees no directory or the
// whole one, a crash or kill leaves at worst a temporary directory that the
// next writer of the same target removes.
//
// Reserve refuses, before any work, a target that is a symbolic link, is
// not a directory, or is a non-empty directory: nothing of the user's is
// ever deleted. An empty existing directory is replaced. While a Dir is
// reserved, a second Reserve of the same target (in this process or
// another) fails with ErrBusy, so two writers never both believe they own
// it. Output files that are not directories are reserved the same way
// (ReserveFile: pipeline/publish's RunHistogram).
//
// The reservation shared with other processes is the writer's temporary
// entry (".NAME.tmp-PID-RANDOM" beside the target), created under a lock
// on the parent directory after the target is checked, and locked with an
// advisory flock until it is renamed onto the target or removed: another
// writer that finds a locked entry is refused with ErrBusy naming the
// entry and its process. The kernel drops the lock of a killed writer; its
// entry is then a leftover, and the next writer removes it. No lock file
// is written. flock works on local file systems (on a network file system
// it is as good as that system's); where there is none (not unix) an
// entry counts as a live writer's by its process id, which cannot be
// checked there, so a directory's leftover is never removed and a file's
// is ignored: the reservation of an output file is within one process.
//
// Files are created with mode 0666 and directories 0777, both less the
// process's umask (0644 and 0755 under the usual umask 022).
package atomicdir

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// held records the targets this process has reserved.
var held sync.Map

var (
	// ErrNotEmpty: the target exists and is a non-empty directory.
	ErrNotEmpty = errors.New("exists and is not empty")
	// ErrNotDir: the target exists and is not a directory (a file, a
	// symbolic link, a device).
	ErrNotDir = errors.New("exists and is not a directory")
	// ErrBusy: another writer has reserved the target.
	ErrBusy = errors.New("is being written by another process")
	// ErrClosed: the Dir was committed or aborted already.
	ErrClosed = errors.New("atomicdir: the directory was already committed or aborted")
)

// TargetError is a refusal of the target itself (ErrNotEmpty, ErrNotDir,
// ErrBusy, or an unwritable parent): the caller's input, not a failure.
type TargetError struct {
	Target string
	Err    error
}

func (e *TargetError) Error() string { return e.Target + " " + e.Err.Error() }

// Unwrap returns the reason.
func (e *TargetError) Unwrap() error { return e.Err }

// Dir is a reserved target and the temporary directory its files are
// written to. Its methods are safe for concurrent use; Abort may be called
// at any time, also after Commit (it then does nothing).
type Dir struct {
	target, parent, tmp string
	// replace: the target held an earlier output of the same writer
	// (ReserveReplacing), moved aside and removed at Commit.
	replace bool

	mu     sync.Mutex
	done   bool
	unlock func()
}

// Stale is told every temporary directory of a dead writer that Reserve
// removes (nil: none is reported).
type Stale func(path string)

// TempPrefix is the name prefix of target's temporary directories:
// ".NAME.tmp-", followed by the writer's process id and a random suffix.
func TempPrefix(target string) string {
	return "." + filepath.Base(filepath.Clean(target)) + ".tmp-"
}

// Check refuses target as Reserve would (a link, not a directory, a
// non-empty directory), without reserving it: a cheap early check.
func Check(target string) error {
	fi, err := os.Lstat(target)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return &TargetError{target, err}
	case fi.Mode()&os.ModeSymlink != 0:
		return &TargetError{target, fmt.Errorf("%w (a symbolic link: the link would be replaced, not its target)", ErrNotDir)}
	case !fi.IsDir():
		return &TargetError{target, ErrNotDir}
	}
	f, err := os.Open(target)
	if err != nil {
		return &TargetError{target, err}
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	if len(names) > 0 {
		return &TargetError{target, ErrNotEmpty}
	}
	if err != nil && err != io.EOF {
		return &TargetError{target, err}
	}
	return nil
}

// Reserve checks target (Check), refuses it while another writer holds it
// (ErrBusy: its temporary entry is locked, or exists unlocked and its
// process runs, or it is reserved in this process), removes the temporary
// entries of dead writers of the same target (telling stale of each), and
// makes a fresh temporary directory to write into, which reserves the
// target until Commit or Abort.
func Reserve(target string, stale Stale) (*Dir, error) {
	return ReserveReplacing(target, nil, stale)
}

// ReserveReplacing is Reserve that also accepts a non-empty target
// directory for which owned returns true (an earlier output of the same
// command, recognized by its files): Commit then replaces it, moving it
// aside, renaming the new directory into place and removing the old one.
// Any other non-empty directory is refused as by Reserve.
func ReserveReplacing(target string, owned func(dir string) bool, stale Stale) (*Dir, error) {
	target = filepath.Clean(target)
	check := func() (replace bool, err error) {
		err = Check(target)
		if errors.Is(err, ErrNotEmpty) && owned != nil && owned(target) {
			return true, nil
		}
		return false, err
	}
	replace, err := check()
	if err != nil {
		return nil, err
	}
	res, err := reserve(target, func() (err error) {
		replace, err = check() // again: a writer may have committed meanwhile
		return err
	}, func(tmp string) error { return os.Mkdir(tmp, 0o777) }, stale)
	if err != nil {
		return nil, err
	}
	return &Dir{target: target, parent: res.parent, tmp: res.tmp, unlock: res.unlock, replace: replace}, nil
}

// reservation is what reserve returns: the temporary entry (a directory
// or a file) beside the target, and unlock, which gives the reservation up.
type reservation struct {
	parent, tmp string
	unlock      func()
}

// reserve reserves target for this process (held) and for every other one
// (the temporary entry's lock). Under the parent directory's lock it runs
// check, refuses the target while another writer holds one of its
// temporary entries, removes dead writers' leftovers (telling stale), and
// creates its own temporary entry (create, at a fresh name) and locks it
// (lockTemp), so that no other writer can pass the same steps until the
// entry is renamed onto the target or removed. The parent's lock is held
// for these few system calls only; a writer killed at any time leaves no
// lock held, only its temporary entry, which the next writer removes.
func reserve(target string, check func() error, create func(tmp string) error, stale Stale) (*reservation, error) {
	parent := filepath.Dir(target)
	if _, loaded := held.LoadOrStore(target, true); loaded {
		return nil, &TargetError{target, ErrBusy}
	}
	var tmp string
	var release func()
	err := withParentLock(parent, func() error {
		if err := check(); err != nil {
			return err
		}
		if err := cleanStale(target, stale); err != nil {
			return err
		}
		for i := 0; ; i++ {
			var r [6]byte
			rand.Read(r[:])
			tmp = filepath.Join(parent, TempPrefix(target)+strconv.Itoa(os.Getpid())+"-"+hex.EncodeToString(r[:]))
			err := create(tmp)
			if err == nil {
				break
			}
			if !errors.Is(err, os.ErrExist) || i > 10 {
				return &TargetError{target, fmt.Errorf("cannot write in %s: %w", parent, err)}
			}
		}
		var err error
		if release, err = lockTemp(tmp); err != nil {
			os.RemoveAll(tmp)
			return &TargetError{target, fmt.Errorf("locking %s: %w", tmp, err)}
		}
		return nil
	})
	if err != nil {
		held.Delete(target)
		return nil, err
	}
	return &reservation{parent: parent, tmp: tmp, unlock: func() {
		release()
		held.Delete(target)
	}}, nil
}

// Target is the directory the files will appear in.
func (d *Dir) Target() string { return d.target }

// Temp is the temporary directory being written.
func (d *Dir) Temp() string { return d.tmp }

// WriteFile creates name in the temporary directory, fills it, fsyncs and
// closes it. name must be a plain file name.
func (d *Dir) WriteFile(name string, fill func(io.Writer) error) (err error) {
	if name == "" || name != filepath.Base(name) || name == "." || name == ".." {
		return fmt.Errorf("atomicdir: %q is not a plain file name", name)
	}
	d.mu.Lock()
	closed := d.done
	d.mu.Unlock()
	if closed {
		return ErrClosed
	}
	fh, err := os.OpenFile(filepath.Join(d.tmp, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := fh.Close(); err == nil {
			err = cerr
		}
	}()
	if err := fill(fh); err != nil {
		return err
	}
	return fh.Sync()
}

// Commit fsyncs the temporary directory, renames it onto the target (which
// must still be absent or an empty directory), fsyncs the parent and
// releases the reservation. ready, if not nil, is called under the Dir's
// lock just before the rename and may refuse it (an interrupt's decision);
// the rename then does not happen and the Dir stays reserved (Abort it).
func (d *Dir) Commit(ready func() error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done {
		return ErrClosed
	}
	if err := settle(d.tmp); err != nil {
		return fmt.Errorf("syncing %s: %w", d.tmp, err)
	}
	if ready != nil {
		if err := ready(); err != nil {
			return err
		}
	}
	var old string
	if d.replace {
		// rename(2) cannot replace a non-empty directory: the earlier
		// output is moved aside first and put back if the rename fails.
		old = d.tmp + ".old"
		if err := os.Rename(d.target, old); err != nil {
			return fmt.Errorf("moving the earlier output aside: %w", err)
		}
	}
	if err := rename(d.tmp, d.target); err != nil {
		if old != "" {
			err = errors.Join(err, os.Rename(old, d.target))
		}
		if errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, os.ErrExist) {
			return &TargetError{d.target, ErrNotEmpty}
		}
		return fmt.Errorf("moving the output into place: %w", err)
	}
	if old != "" {
		os.RemoveAll(old)
	}
	d.done = true
	syncDir(d.parent) // the rename is done; a failed fsync of the parent cannot undo it
	d.unlock()
	return nil
}

// Abort removes the temporary directory and releases the reservation,
// unless the Dir was committed.
func (d *Dir) Abort() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done {
		return
	}
	d.done = true
	os.RemoveAll(d.tmp)
	d.unlock()
}

// settle gives every regular file in dir the mode 0666 less the umask
// (the directory was made 0777 less the umask, so its mode tells the
// umask; writers that create files 0600, as temporary-file helpers do,
// are brought in line) and fsyncs the files and dir.
func settle(dir string) error {
	di, err := os.Stat(dir)
	if err != nil {
		return err
	}
	mode := di.Mode().Perm() & 0o666
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		fi, err := f.Stat()
		if err == nil && fi.Mode().Perm() != mode {
			err = f.Chmod(mode)
		}
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return syncDir(dir)
}

func syncDir(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}

// cleanStale looks at target's temporary entries (directories and files
// named TempPrefix(target), a process id and a random suffix) in its
// parent: one a live writer holds (writerOf) refuses the target with
// ErrBusy naming that writer; one a dead writer left is removed (and
// stale told of it); one whose writer cannot be judged is left alone.
func cleanStale(target string, stale Stale) error {
	parent := filepath.Dir(target)
	prefix := TempPrefix(target)
	entries, err := os.ReadDir(parent)
	if err != nil {
		return nil
	}
	var busy error
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !e.IsDir() && !e.Type().IsRegular() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 {
			continue // not a writer's
		}
		path := filepath.Join(parent, e.Name())
		switch writerOf(path, e.IsDir(), pid) {
		case writerLive:
			if busy == nil {
				busy = &TargetError{target, fmt.Errorf("%w (process %d is writing %s)", ErrBusy, pid, path)}
			}
		case writerDead:
			if os.RemoveAll(path) == nil && stale != nil {
				stale(path)
			}
		}
	}
	return busy
}

// A writer is what writerOf finds of a temporary entry's writer.
type writer int

const (
	writerUnknown writer = iota // leave the entry alone
	writerLive                  // the target is busy
	writerDead                  // the entry is a leftover: remove it
)
