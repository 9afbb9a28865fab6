package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/pipeline/tables"
)

// checkTablesDir refuses, before anything is read or spent, a --tables
// directory that exists and is not empty, is a symbolic link or a file, is
// the --out directory, or whose parent does not exist.
func checkTablesDir(dir, out string) error {
	if dir == "" {
		return nil
	}
	if filepath.Clean(dir) == filepath.Clean(out) {
		return usageErrorf("--tables %s is the --out directory; give another directory (for example %s)", dir, filepath.Join(out+"-tables"))
	}
	fi, err := os.Lstat(dir)
	switch {
	case err == nil && fi.Mode()&os.ModeSymlink != 0:
		return usageErrorf("--tables %s is a symbolic link; give the directory itself", dir)
	case err == nil && !fi.IsDir():
		return usageErrorf("--tables %s exists and is not a directory", dir)
	case err == nil:
		entries, rerr := os.ReadDir(dir)
		if rerr != nil {
			return usageErrorf("--tables %s: %v", dir, rerr)
		}
		if len(entries) > 0 {
			return usageErrorf("--tables %s is not empty; give a new or empty directory", dir)
		}
		return nil
	case !errors.Is(err, os.ErrNotExist):
		return usageErrorf("--tables %s: %v", dir, err)
	}
	if pi, err := os.Stat(filepath.Dir(filepath.Clean(dir))); err != nil || !pi.IsDir() {
		return usageErrorf("--tables %s: the parent directory does not exist", dir)
	}
	return nil
}

// writeTablesDir writes one CSV per table (tables.WriteTableFiles) into a
// temporary directory beside dir, syncs it and renames it into place. It
// runs after the release is in out, so a failure loses nothing: the error
// says so, and every table is also in out/answers.csv.
func writeTablesDir(dir, out string, w *domain.Kron, res *tables.Result, quiet bool, stderr io.Writer) (err error) {
	if dir == "" || res == nil {
		return nil
	}
	fail := func(e error) error {
		return fmt.Errorf("the release is in %s; writing the per-table files into %s failed (every table is also in %s): %w",
			out, dir, filepath.Join(out, "answers.csv"), e)
	}
	parent := filepath.Dir(filepath.Clean(dir))
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return fail(err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	names, err := tables.WriteTableFiles(tmp, w, res)
	if err != nil {
		return fail(err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fail(err)
	}
	if d, err := os.Open(tmp); err == nil {
		d.Sync()
		d.Close()
	}
	if fi, err := os.Lstat(dir); err == nil && fi.IsDir() {
		if err := os.Remove(dir); err != nil { // empty (checked before the release); a non-empty one fails here
			return fail(err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fail(err)
	}
	if d, err := os.Open(parent); err == nil {
		d.Sync()
		d.Close()
	}
	if !quiet {
		fmt.Fprintf(stderr, "dpsolve release: wrote %d table files to %s\n", len(names), dir)
	}
	return nil
}
