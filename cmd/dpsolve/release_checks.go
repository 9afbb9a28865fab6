package main

// The refusals of dpsolve release that come before the budget is charged
// and, where they need only the spec, the plan's file and the budget,
// before planning: the output directory, the input files, the plan's
// privacy model against the budget's, and whether the release can fit in
// memory at all. Plus the error of a release that failed after its charge.

import (
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"syscall"

	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/internal/resources"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/pipeline/records"
	"github.com/dpsolve/dpsolve/pipeline/tables"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/ledger"
)

// checkOutDir refuses, before anything is read, spent or drawn, an output
// directory that is a symbolic link, exists and is not an empty directory,
// or whose parent cannot take the temporary directory the output is
// written to. It removes the temporary directories of earlier releases to
// the same output whose process is gone (killed during the final write)
// and names any it cannot attribute.
func checkOutDir(dir string, stderr io.Writer) error {
	if fi, err := os.Lstat(dir); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return usageErrorf("--out %s is a symbolic link: the release would replace the link, not write into its target; give the target directory itself", dir)
	}
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case errors.Is(err, syscall.ENOTDIR):
		return usageErrorf("--out %s exists and is not a directory", dir)
	case err != nil:
		return usageErrorf("--out %s: %v", dir, err)
	case len(entries) > 0:
		return usageErrorf("--out %s exists and is not empty; choose a new directory", dir)
	}
	parent := filepath.Dir(filepath.Clean(dir))
	probe, err := os.MkdirTemp(parent, "."+filepath.Base(filepath.Clean(dir))+".probe-")
	if err != nil {
		return usageErrorf("--out %s: cannot write in %s: %v", dir, parent, err)
	}
	// The transaction (pipeline/publish, internal/atomicdir) reserves
	// the output and removes a killed earlier release's leftovers.
	return os.Remove(probe)
}

// checkInputFiles refuses a spec or data path that names something other
// than a regular file (a named pipe would block the read forever, a
// directory or device is no input) at once, before anything is read.
func (f *tblFlags) checkInputFiles() error {
	if err := regularInput(f.spec); err != nil {
		return inputerr.Errorf("release", "spec: %v", err)
	}
	if f.dryRun {
		return nil
	}
	if err := regularInput(f.data); err != nil {
		return inputerr.Errorf("release", "data: %v", err)
	}
	return nil
}

// regularInput returns an error when path exists and is not a regular
// file (symbolic links followed); a missing file is left to the reader.
func regularInput(path string) error {
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().IsRegular() {
		return nil
	}
	kind := "a directory"
	switch t := fi.Mode().Type(); {
	case t&os.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO)"
	case t&os.ModeSocket != 0:
		kind = "a socket"
	case t&os.ModeDevice != 0:
		kind = "a device"
	case !fi.IsDir():
		kind = "not a regular file"
	}
	return fmt.Errorf("%s is %s; give a regular file", path, kind)
}

// checkPlanPrivacy refuses a --plan made for another privacy model than
// the budget's: a Gaussian plan minimizes the error at L2 sensitivity, a
// pure plan at L1, and the other norm of the same matrix can be hundreds
// of times worse (a kron plan of six Adult attributes, 2-way marginals
// and cumulative age: 824× the expected error at ε = 1).
func (f *tblFlags) checkPlanPrivacy(b calibrate.Budget) error {
	if f.planDir == "" {
		return nil
	}
	template, privacy := tables.PlanInfo(f.planDir)
	want, model := "gaussian", "Gaussian noise, L2 sensitivity"
	budget := "a ρ-zCDP budget (--rho)"
	switch b.Kind() {
	case calibrate.Pure:
		want, model, budget = "pure", "Laplace noise, L1 sensitivity", "a pure ε-DP budget (--eps without --delta)"
	case calibrate.Approx:
		budget = "an (ε,δ)-DP budget (--eps with --delta)"
	}
	if privacy == "" || privacy == want {
		return nil
	}
	if template == "" {
		template = "best"
	}
	return inputerr.Errorf("release", "--plan %s was planned for --privacy %s, but %s needs a plan for --privacy %s (%s): its error would be far larger than planned; make the right plan with\n  dpsolve plan --spec %s --template %s --privacy %s --out NEWPLAN\nor plan in-process with --template %s instead of --plan",
		f.planDir, privacy, budget, want, model, f.spec, template, want, template)
}

// histogramTemplates measure the full histogram (every cell of the domain).
var histogramTemplates = map[string]bool{"kron": true, "union": true, "dense": true}

// feasible refuses, before planning, a release whose histogram cannot fit
// in memory: the kron, union and dense templates measure all cells, and a
// release then holds at least the histogram, as many measurements (the
// strategy has full column rank) and the reconstructed histogram, 24 bytes
// a cell. Under the default template (best) a workload the marginals
// template can answer is planned with it alone instead, saying so.
func (f *tblFlags) feasible(k *domain.Kron, stderr io.Writer) error {
	template := f.template
	if f.planDir != "" {
		template, _ = tables.PlanInfo(f.planDir)
	}
	if template == "" {
		template = "best"
	}
	if !histogramTemplates[template] && template != "best" {
		return nil
	}
	attrs := k.Attributes()
	cells := cellCount(attrs)
	need := 24 * records.CellsFloat(attrs)
	_, overflow := records.Cells(attrs)
	mem, ok := records.AvailableMemory()
	if overflow == nil && (!ok || need <= mem.Bytes) {
		return nil
	}
	avail := "more than an int can count"
	if ok {
		avail = mem.String()
	}
	unit, err := calibrate.ZCDP(1) // a placeholder: whether the marginals plan applies does not depend on ρ
	if err != nil {
		return err
	}
	if template == "best" && f.planDir == "" {
		if _, err := tables.Prepare(k, tables.MarginalsStrategy{}, unit); err == nil {
			// Said even with --quiet: it is a choice of plan, not progress.
			fmt.Fprintf(stderr, "dpsolve release: the domain has %s cells, too many to hold its histogram (%s at least, %s available): planning with the marginals template only\n", cells, resources.FormatBytes(need), avail)
			f.template = "marginals"
			return nil
		}
	}
	hint := "use a marginals plan (--template marginals, when the workload is marginals) or fewer or smaller attributes"
	if !ok {
		return inputerr.Errorf("release", "template %s measures every cell of the domain: %s cells (%d attributes), so the release needs at least %s (histogram, measurements, reconstruction), but %s is available; %s",
			template, cells, len(attrs), resources.FormatBytes(need), avail, hint)
	}
	return inputerr.Errorf("release", "template %s measures every cell of the domain: %s cells (%d attributes), so %w", template, cells, len(attrs),
		&resources.Refusal{What: "the release (histogram, measurements, reconstruction)", Need: need, AtLeast: true,
			Avail: mem, Hint: hint})
}

// cellCount formats the domain's exact cell count (bigCount).
func cellCount(dom []domain.Attribute) string {
	n := big.NewInt(1)
	for _, a := range dom {
		n.Mul(n, big.NewInt(int64(a.Size)))
	}
	return bigCount(n)
}

// bigCount formats a count of arbitrary size: its digits up to 15 of them,
// beyond in 4 significant digits ("1.268e+30" for 2¹⁰⁰).
func bigCount(n *big.Int) string {
	s := n.String()
	if len(s) <= 15 {
		return s
	}
	return new(big.Float).SetInt(n).Text('g', 4)
}

// chargeInUnit describes budget b as the ledger with limit l charges it:
// "rho=0.5", or "eps=1 (rho=0.5 in this ledger's unit)" for a pure ε
// release charged to a ρ ledger.
func chargeInUnit(b calibrate.Budget, l *ledger.Limit) string {
	own := ledger.Cost(b).String()
	if l == nil {
		return own
	}
	in, err := ledger.InUnit(b, *l)
	if err != nil || in.String() == own {
		return own
	}
	return fmt.Sprintf("%s (%s in this ledger's unit)", own, in)
}

// spentError is a failure or interrupt after the budget was charged: the
// charge stands (refunding once noise may have been drawn is unsafe) and
// nothing was released.
type spentError struct {
	err          error
	cost, ledger string
}

func (e *spentError) Error() string {
	return fmt.Sprintf("%v; the budget was spent (%s charged to %s) and nothing was released", e.err, e.cost, e.ledger)
}

func (e *spentError) Unwrap() error { return e.err }
