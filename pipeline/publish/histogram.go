package publish

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"

	"github.com/dpsolve/dpsolve/internal/atomicdir"
	"github.com/dpsolve/dpsolve/pipeline/release"
	"github.com/dpsolve/dpsolve/privacy/ledger"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// OutputFile is one output file of a histogram release: Write fills it
// from the release's result after the noise. It is written to a temporary
// file beside Path, fsynced, and renamed onto Path at the commit.
type OutputFile struct {
	Path  string
	Write func(w io.Writer, r *release.Result) error
}

// HistogramRequest is one release of a single histogram's workload through
// a dense strategy (pipeline/release): dpsolve answer and run.
type HistogramRequest struct {
	// Release is the strategy, budget, data, workload and post-processing;
	// Release.Noise nil is the secure source (noise.NewSecure).
	Release release.Request
	// Ledger, if not empty, is charged with Release.Budget before the
	// noise; Label is the release's label in it (default: the first
	// output's path).
	Ledger, Label string
	// Outputs are the files to publish; each Path must not be a
	// directory (nor anything but a regular file) and is reserved from the
	// start. None: the answers are returned in the result only.
	Outputs []OutputFile
	// Drawing, if not nil, is called once, after every check and the
	// charge, just before the noise is drawn (a seeded source's warning).
	Drawing func()
	// Charged, if not nil, is told the ledger's status after the charge.
	Charged func(ledger.Status)

	fault func(ctx context.Context, step string) error
}

// HistogramResult is what a histogram release did and produced.
type HistogramResult struct {
	// Outcome is what happened; Reason is why, when not Released.
	Outcome Outcome
	Reason  error
	// Prepared is the checked release (nil if refused before).
	Prepared *release.Prepared
	// Release holds the answers (nil unless released).
	Release *release.Result
	// Ledger is the ledger's status (nil without a ledger).
	Ledger *ledger.Status
}

// Charged reports whether the budget was spent (Released or
// ChargedNotReleased).
func (r *HistogramResult) Charged() bool {
	return r.Outcome == Released || r.Outcome == ChargedNotReleased
}

// RunHistogram is the release transaction of a single histogram, in the
// order of Run: every check that can refuse (the outputs, reserved; the
// strategy, budget, data and noise grid: release.Prepare; the ledger's
// room), then the charge if ctx is not cancelled, then the noise, the
// reconstruction and the answers, then the commit of every output file
// (each written to a temporary file and fsynced, all renamed into place
// under the interrupt gate). A panic before the charge is a refusal, after
// it a ChargedNotReleased outcome with its message. The result is never
// nil and the error is its Reason.
func RunHistogram(ctx context.Context, req HistogramRequest) (res *HistogramResult, err error) {
	res = &HistogramResult{}
	var outs []*fileOut
	defer func() {
		for _, o := range outs {
			o.abort()
		}
	}()
	prepare := func() (err error) {
		defer func() {
			if v := recover(); v != nil {
				err = &PanicError{Value: v, Stack: string(debug.Stack())}
			}
		}()
		if err := hstep(ctx, req.fault, "check"); err != nil {
			return err
		}
		if outs, err = reserveFiles(req.Outputs); err != nil {
			return err
		}
		if err := hstep(ctx, req.fault, "reserved"); err != nil {
			return err
		}
		p, err := release.Prepare(ctx, req.Release)
		if err != nil {
			return err
		}
		res.Prepared = p
		if req.Ledger != "" {
			st, err := ledger.Check(req.Ledger, req.Release.Budget)
			if err != nil {
				return err
			}
			res.Ledger = &st
		}
		return hstep(ctx, req.fault, "prepared")
	}
	if err := prepare(); err != nil {
		res.Outcome, res.Reason, res.Prepared = Refused, err, nil
		return res, err
	}
	g := &gate{}
	err = gated(ctx, g, func() error { return histogramWork(ctx, g, &req, res, outs) })
	charged, released := g.close()
	switch {
	case released:
		res.Outcome, res.Reason = Released, nil
		return res, nil
	case charged:
		se := &SpentError{Ledger: req.Ledger, Err: err}
		res.Outcome, res.Reason, res.Release = ChargedNotReleased, se, nil
		return res, se
	}
	if err == nil {
		err = errorf("the release stopped before the charge")
	}
	res.Outcome, res.Reason, res.Release = Refused, err, nil
	return res, err
}

func hstep(ctx context.Context, fault func(context.Context, string) error, name string) error {
	if fault == nil {
		fault = injected()
	}
	if fault != nil {
		return fault(ctx, name)
	}
	return nil
}

// histogramWork is the transaction after the checks; a panic in it is
// recovered and returned as a *PanicError.
func histogramWork(ctx context.Context, g *gate, req *HistogramRequest, res *HistogramResult, outs []*fileOut) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: string(debug.Stack())}
		}
	}()
	label := req.Label
	if label == "" && len(req.Outputs) > 0 {
		label = req.Outputs[0].Path
	}
	err = g.chargeLedger(ctx, func() error { return hstep(ctx, req.fault, "charge") }, req.Ledger, req.Release.Budget, label, &res.Ledger, req.Charged)
	if err != nil {
		return err
	}
	if err := hstep(ctx, req.fault, "charged"); err != nil {
		return err
	}
	var src noise.Source = req.Release.Noise
	if noise.Missing(src) {
		src = noise.NewSecure()
	}
	if req.Drawing != nil {
		req.Drawing()
	}
	r, err := res.Prepared.Draw(src)
	if err != nil {
		return err
	}
	if err := hstep(ctx, req.fault, "drawn"); err != nil {
		return err
	}
	for i, o := range outs {
		if err := hstep(ctx, req.fault, "write "+o.target); err != nil {
			return fmt.Errorf("writing %s: %w", o.target, err)
		}
		w := req.Outputs[i].Write
		if err := o.write(func(f io.Writer) error { return w(f, r) }); err != nil {
			return fmt.Errorf("writing %s: %w", o.target, err)
		}
	}
	if err := hstep(ctx, req.fault, "commit"); err != nil {
		return err
	}
	unlock, err := g.ready(ctx)
	if err != nil {
		return err
	}
	err = commitFiles(outs)
	if err == nil {
		g.released = true
		res.Release = r
	}
	unlock()
	if err != nil {
		return err
	}
	hstep(ctx, req.fault, "committed") // in place: a later fault changes nothing
	return nil
}

// fileOut is a reserved output file (atomicdir.File: the reservation is
// shared with every process, taken with the check and held until the
// commit) and whether its temporary file was written.
type fileOut struct {
	target  string
	file    *atomicdir.File
	written bool
}

// errIsDir refuses an output file path that is a directory.
var errIsDir = errors.New("is a directory (an output file is written there, not into it)")

// reserveFiles reserves and checks every output (atomicdir.ReserveFile):
// a path that another writer holds, in this process or another, is busy
// (two outputs may not name one file); a path that exists must be a
// regular file. A temporary file is created beside each (which also
// proves the directory writable).
func reserveFiles(files []OutputFile) (outs []*fileOut, err error) {
	defer func() {
		if err != nil {
			for _, o := range outs {
				o.abort()
			}
			outs = nil
		}
	}()
	for _, f := range files {
		if f.Path == "" || f.Write == nil {
			return outs, errorf("an output file needs a path and a writer")
		}
		abs, err := filepath.Abs(f.Path)
		if err != nil {
			return outs, fmt.Errorf("%w: %w", ErrOutput, &atomicdir.TargetError{Target: f.Path, Err: err})
		}
		file, err := atomicdir.ReserveFile(abs, func() error { return checkOutputFile(abs) }, nil)
		if err != nil {
			var te *atomicdir.TargetError
			if errors.As(err, &te) { // name the path as the caller gave it
				err = te.Err
			}
			return outs, fmt.Errorf("%w: %w", ErrOutput, &atomicdir.TargetError{Target: f.Path, Err: err})
		}
		outs = append(outs, &fileOut{target: abs, file: file})
	}
	return outs, nil
}

// checkOutputFile refuses what exists at an output file's path unless it
// is a regular file (which the release replaces).
func checkOutputFile(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.IsDir():
		return errIsDir
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%w (not a regular file)", atomicdir.ErrNotDir)
	}
	return nil
}

// write fills the temporary file and fsyncs it.
func (o *fileOut) write(fill func(io.Writer) error) (err error) {
	fh, err := os.OpenFile(o.file.Temp(), os.O_WRONLY|os.O_TRUNC, 0)
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
	o.written = true
	return fh.Sync()
}

// abort removes the temporary file and releases the reservation, unless
// the file was committed.
func (o *fileOut) abort() { o.file.Abort() }

// commitMu is held while a release's files are renamed into place; Quiesce
// takes it so that an exiting process leaves no release half-renamed.
var commitMu sync.Mutex

// Quiesce waits for a commit of output files in progress in this process
// to finish and keeps any other from starting; the returned function lifts
// that. A program about to exit at once (a second interrupt) calls it so
// that no release is left with some of its files in place and not others.
func Quiesce() (resume func()) {
	commitMu.Lock()
	return commitMu.Unlock
}

// commitFiles renames every written temporary file onto its target, in
// order, and fsyncs the directories. Once the first rename has happened the
// rest are attempted all the same; a failure is returned.
func commitFiles(outs []*fileOut) error {
	commitMu.Lock()
	defer commitMu.Unlock()
	var errs []error
	dirs := map[string]bool{}
	for _, o := range outs {
		if !o.written {
			errs = append(errs, fmt.Errorf("%s: not written", o.target))
		} else if err := o.file.Commit(); err != nil {
			errs = append(errs, err)
		} else {
			dirs[filepath.Dir(o.target)] = true
		}
	}
	for d := range dirs {
		if f, err := os.Open(d); err == nil {
			f.Sync()
			f.Close()
		}
	}
	return errors.Join(errs...)
}
