package atomicdir

import (
	"os"
	"path/filepath"
	"sync"
)

// File is a reserved output file: a temporary file beside the target,
// written by the caller, renamed onto the target at Commit. It is
// reserved as a Dir is (ReserveFile): a second reservation of the same
// path, as a file or a directory, in this process or another, fails with
// ErrBusy until Commit or Abort. Its methods are safe for concurrent use.
type File struct {
	target, tmp string
	unlock      func()
	mu          sync.Mutex
	done        bool
}

// ReserveFile reserves target (a path made absolute by the caller, so
// that two spellings of one file are one reservation) for an output file:
// it refuses the target while another writer holds it (ErrBusy naming the
// writer, as Reserve), runs check (the caller's refusal of what exists at
// target, e.g. a directory) while holding the parent's lock, removes dead
// writers' temporary entries (telling stale) and creates an empty
// temporary file, mode 0666 less the umask, beside the target (which also
// proves the directory writable). Errors are *TargetError or check's.
func ReserveFile(target string, check func() error, stale Stale) (*File, error) {
	target = filepath.Clean(target)
	if check == nil {
		check = func() error { return nil }
	}
	res, err := reserve(target, check, func(tmp string) error {
		fh, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if err != nil {
			return err
		}
		return fh.Close()
	}, stale)
	if err != nil {
		return nil, err
	}
	return &File{target: target, tmp: res.tmp, unlock: res.unlock}, nil
}

// Target is the reserved path.
func (f *File) Target() string { return f.target }

// Temp is the temporary file to write.
func (f *File) Temp() string { return f.tmp }

// Commit renames the temporary file onto the target (replacing a file
// there) and releases the reservation; the caller fsyncs the file before
// and the directory after. After a failed rename the File stays reserved
// (Abort it).
func (f *File) Commit() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return ErrClosed
	}
	if err := os.Rename(f.tmp, f.target); err != nil {
		return err
	}
	f.done = true
	f.unlock()
	return nil
}

// Abort removes the temporary file and releases the reservation; after
// Commit it does nothing.
func (f *File) Abort() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return
	}
	f.done = true
	os.Remove(f.tmp) // a leftover would be removed by the next writer
	f.unlock()
}
