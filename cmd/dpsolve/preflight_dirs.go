package main

// Preflight for the commands whose output is a directory (plan --out,
// batch --out): the same rule as checkOutputs for files — checked before
// any work, distinct from every input, in a directory that exists (or, for
// batch, can be created) and can be written — so that a mistake is reported
// in milliseconds instead of after a long plan or with half a batch run.

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// checkOutDirPath validates an output directory dir given by flag. It must
// not be (or be a hard link or symbolic link to) one of inputs, must not be
// an existing non-directory, and its parent must be an existing, writable
// directory. With createParents (batch: mkdir -p semantics) missing parents
// are allowed and the nearest existing ancestor must be writable instead.
// An existing dir itself must be writable. Errors are usage errors (exit 2).
func checkOutDirPath(flag, dir string, inputs []string, createParents bool) error {
	if dir == "" {
		return nil
	}
	key := canonicalPath(dir)
	info, statErr := os.Stat(dir)
	for _, in := range inputs {
		if in == "" {
			continue
		}
		same := canonicalPath(in) == key
		if !same && statErr == nil {
			if ii, err := os.Stat(in); err == nil {
				same = os.SameFile(ii, info)
			}
		}
		if same {
			return usageErrorf("%s %s is also an input (%s): writing it would destroy the input; choose another path", flag, dir, in)
		}
	}
	switch {
	case statErr == nil && !info.IsDir():
		return usageErrorf("%s %s exists and is not a directory", flag, dir)
	case statErr == nil:
		if err := probeWritable(dir); err != nil {
			return usageErrorf("%s %s: cannot write in %s (%v)", flag, dir, dir, err)
		}
		return nil
	case !missing(statErr):
		return usageErrorf("%s %s: %v", flag, dir, statErr)
	}
	parent := filepath.Dir(filepath.Clean(dir))
	for {
		st, err := os.Stat(parent)
		switch {
		case missing(err) && createParents && parent != filepath.Dir(parent):
			parent = filepath.Dir(parent)
			continue
		case errors.Is(err, os.ErrNotExist):
			return usageErrorf("%s %s: directory %s does not exist", flag, dir, parent)
		case errors.Is(err, syscall.ENOTDIR):
			parent = filepath.Dir(parent) // a file on the way: reported below
			continue
		case err != nil:
			return usageErrorf("%s %s: %v", flag, dir, err)
		case !st.IsDir():
			return usageErrorf("%s %s: %s is not a directory", flag, dir, parent)
		}
		if err := probeWritable(parent); err != nil {
			return usageErrorf("%s %s: cannot write in %s (%v)", flag, dir, parent, err)
		}
		return nil
	}
}

// checkPlanOut is dpsolve plan's --out rule, before planning: checkOutDirPath,
// and an existing directory must be empty or hold a previous plan
// (strategy.json), the only kind writeStrategyDir replaces.
func checkPlanOut(dir string, inputs ...string) error {
	if err := checkOutDirPath("--out", dir, inputs, false); err != nil {
		return err
	}
	if dir == "" {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) == 0 {
		return nil // absent (checked above) or empty
	}
	if _, err := os.Stat(filepath.Join(dir, "strategy.json")); err != nil {
		return usageErrorf("--out %s exists and is not a plan directory (no strategy.json); choose a new directory", dir)
	}
	return nil
}

// missing reports a path that does not exist, or cannot (a regular file in
// its directory part: ENOTDIR); the parent walk then names the culprit.
func missing(err error) bool {
	return errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}
