package main

// --out-w: the workload matrix W that a command actually used. The random
// built-ins (wrange, wdiscrete, wrelated) are generated from a seed, so
// without it a user could not tell which answer belongs to which query;
// for every workload, row i of W is the query of answer i.

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/dpsolve/dpsolve/internal/matio"
	"github.com/dpsolve/dpsolve/internal/resources"
	"github.com/dpsolve/dpsolve/model/workload"
)

// registerOutW adds the --out-w flag to fs.
func registerOutW(fs *flag.FlagSet) *string {
	return fs.String("out-w", "", outWUsage)
}

// outWUsage is --out-w's help text.
const outWUsage = "write the workload matrix W (m×n) actually used to this .npy or .csv file: row i is the query of answer i"

// writeOutW writes w's query matrix to path (nothing when path is empty).
// A workload known only by its Gram (--gram) has no W to write.
func writeOutW(path string, w workload.Workload) error {
	if path == "" {
		return nil
	}
	ex, ok := w.(workload.Explicit)
	if !ok {
		return fmt.Errorf("--out-w %s: workload %s is given by its Gram matrix only; there is no W to write", path, w.Name())
	}
	need := 8 * float64(w.Queries()) * float64(w.Domain())
	if err := resources.Check(memBase+need, resources.Available(), fmt.Sprintf("--out-w (W is %d×%d)", w.Queries(), w.Domain())); err != nil {
		return err
	}
	return matio.WriteMatrix(path, ex.Matrix())
}

// writeFileAtomic writes a non-matrix output (CSV report, SDPA program)
// through a temporary file in the same directory and renames it into
// place, so an interrupted or failed write never leaves a partial file at
// path (the convention matio's writers follow for matrices).
func writeFileAtomic(path string, write func(io.Writer) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriter(tmp)
	if err = write(bw); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = bw.Flush(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return os.Rename(tmp.Name(), path)
}
