// Package publish is the release transaction: the one place that orders a
// private release's steps so that the budget is charged if and only if the
// release is published, or the failure after the charge is reported.
//
// A release runs in this order, and only this order:
//
//  1. every check that can refuse: the request, the output directory
//     (free, and reserved so that no second release can take it), the plan
//     against the budget's privacy model, the release's finite figures
//     (noise, expected errors under the terms' weights), its memory, the
//     ledger's room for the budget, and the data;
//  2. the ledger charge, under the ledger's lock, only if ctx is not
//     cancelled;
//  3. the noise, the reconstruction and the post-processing;
//  4. the atomic, fsynced commit of every output file (answers.csv and the
//     caller's files) into the output directory.
//
// Result.Outcome says which of Refused (nothing charged, nothing written),
// Released (charged and published) or ChargedNotReleased (the budget is
// spent, nothing published; Result.Reason says why) happened. A panic
// before the charge is an ordinary refusal; after it, it is recovered and
// reported as ChargedNotReleased with its message. A cancelled ctx stops
// the transaction at once: before the charge nothing is charged, after it
// nothing is written, and a release already renamed into place is reported
// as released.
package publish

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/dpsolve/dpsolve/internal/atomicdir"
	"github.com/dpsolve/dpsolve/internal/ctxwait"
	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/internal/resources"
	"github.com/dpsolve/dpsolve/mechanism/plan"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/pipeline/records"
	"github.com/dpsolve/dpsolve/pipeline/tables"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/ledger"
	"github.com/dpsolve/dpsolve/privacy/noise"
	"github.com/dpsolve/dpsolve/progress"
)

// Outcome is what a release transaction did.
type Outcome int

const (
	// Refused: refused before the charge. Nothing was charged, no noise
	// was drawn, nothing was written.
	Refused Outcome = iota + 1
	// Released: the budget was charged (to the ledger, if any) and every
	// output file is in place.
	Released
	// ChargedNotReleased: the budget was charged (or, without a ledger,
	// noise may have been drawn) and nothing was published; Reason says
	// why. The charge stands: refunding a budget whose noise may have been
	// drawn is unsafe.
	ChargedNotReleased
)

// String names the outcome as status records spell it.
func (o Outcome) String() string {
	switch o {
	case Refused:
		return "refused"
	case Released:
		return "released"
	case ChargedNotReleased:
		return "charged_not_released"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// File is an output file the caller adds to the release (a report such as
// release.json); Write fills it. It is written after answers.csv, into the
// same temporary directory, and committed with it.
type File struct {
	Name  string
	Write func(io.Writer) error
}

// Data says where the release's data come from: exactly one of a
// histogram in domain order, a records CSV (header naming the spec's
// attributes), or a loader the caller provides.
type Data struct {
	// Histogram is the histogram in domain order.
	Histogram []float64
	// Records is a records CSV; RecordsOptions (may be nil) tunes its
	// reading (progress, total size).
	Records        io.Reader
	RecordsOptions *records.Options
	// Load reads the data itself: histogram says whether the strategies
	// need the histogram, sets which marginal tables they need
	// (tables.Parts.Needs). It returns the data and the number of records
	// read (0 when unknown). It must stop when ctx is cancelled.
	Load func(ctx context.Context, histogram bool, sets [][]int) (tables.Data, int64, error)
}

// Request is one release.
type Request struct {
	// Workload is the spec's workload (domain.LoadSpec, or built).
	Workload *domain.Kron
	// Budget is the whole release's budget.
	Budget calibrate.Budget
	// PlanDir is a directory written by dpsolve plan --out (or
	// tables.WriteStrategy); when empty the release is planned in-process
	// with Template ("" is "best").
	PlanDir, Template string
	// SplitTerms divides the budget over the terms, in proportion to
	// TermShares (equal when empty); needs Template, not PlanDir.
	SplitTerms bool
	TermShares []float64
	// PostProcess selects the non-negative / integer tables.
	PostProcess tables.Publishable
	// Data is what is measured (not needed by Prepare alone).
	Data Data
	// Noise is the noise source; nil is the secure one
	// (noise.NewSecure). A seeded source makes the release NOT private.
	Noise *noise.Sampler
	// Ledger, if not empty, is the budget ledger charged before the noise;
	// Label is the release's label in it (default: Out).
	Ledger, Label string
	// Out, if not empty, is the output directory: it must not exist or be
	// an empty directory, and it is reserved from Prepare on. Empty: the
	// answers are returned in Result only.
	Out string
	// Files, if not nil, returns the caller's files to publish beside
	// answers.csv; it runs after the noise, with the release's result.
	Files func(*Result) ([]File, error)
	// Check, if not nil, may refuse the prepared release before anything
	// is charged (the caller's own rules).
	Check func(*tables.Parts) error
	// CheckPart, Progress and Planned are passed to tables.PrepareParts.
	CheckPart func(tables.PartCheck) error
	Progress  progress.Func
	Planned   func(*plan.Result)
	// Stale is told every unfinished output of a killed earlier release to
	// Out that is removed (may be nil).
	Stale func(path string)
	// Charged, if not nil, is told the ledger's status right after the
	// charge (before any noise).
	Charged func(ledger.Status)

	// fault is the test-only fault injector, called at each step.
	fault func(ctx context.Context, step string) error
}

// Result is what a release transaction did and produced.
type Result struct {
	// Outcome is what happened; Reason is why, when not Released.
	Outcome Outcome
	Reason  error
	// Parts is the prepared release (nil if it was refused before).
	Parts *tables.Parts
	// Tables holds the answers (nil unless the noise was drawn and the
	// answers computed).
	Tables *tables.Result
	// Records is the number of records read (0 for a histogram).
	Records int64
	// Ledger is the ledger's status: after the charge, or before it when
	// the release was refused.
	Ledger *ledger.Status
	// Out is the published directory (empty unless released to one).
	Out string
}

// Charged reports whether the budget was spent (Released or
// ChargedNotReleased).
func (r *Result) Charged() bool {
	return r.Outcome == Released || r.Outcome == ChargedNotReleased
}

// SpentError is the error of a transaction that charged the budget and
// released nothing.
type SpentError struct {
	// Ledger is the ledger charged ("" without one).
	Ledger string
	Err    error
}

func (e *SpentError) Error() string {
	if e.Ledger == "" {
		return fmt.Sprintf("%v; the noise may have been drawn and nothing was released", e.Err)
	}
	return fmt.Sprintf("%v; the budget was charged to %s and nothing was released", e.Err, e.Ledger)
}

// Unwrap returns the failure.
func (e *SpentError) Unwrap() error { return e.Err }

// PanicError is a panic recovered inside the transaction.
type PanicError struct {
	Value any
	Stack string
}

func (e *PanicError) Error() string { return fmt.Sprintf("internal error (panic): %v", e.Value) }

// ErrPartsPostProcess refuses non-negative or integer tables for a release
// measured in several parts (their tables could not share one grand
// total), before anything is charged.
var ErrPartsPostProcess = errors.New("non-negative or integer tables need one measurement of every term")

// ErrOutput marks a refusal of the output directory (atomicdir's
// ErrNotEmpty, ErrNotDir or ErrBusy are wrapped too).
var ErrOutput = errors.New("output directory refused")

func errorf(format string, a ...any) error { return inputerr.Errorf("publish", format, a...) }

// Prepared is a release whose every check passed and whose output
// directory (if any) is reserved; nothing is charged yet. Release it once,
// or Close it.
type Prepared struct {
	req    Request
	parts  *tables.Parts
	dir    *atomicdir.Dir
	ledger *ledger.Status
	mu     sync.Mutex
	used   bool
}

// Prepare runs every check that needs no data: the request, the output
// directory (reserved), the plan (planned in-process or read) against the
// budget, the release's finite figures, its memory and the ledger's room.
// A dry run is Prepare without Out. A panic inside is returned as an
// error; nothing is charged.
func Prepare(ctx context.Context, req Request) (p *Prepared, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: string(debug.Stack())}
		}
		if err != nil && p != nil {
			p.Close()
			p = nil
		}
	}()
	if req.Workload == nil {
		return nil, errorf("no workload")
	}
	if req.Budget.Kind() == "" {
		return nil, errorf("no budget")
	}
	p = &Prepared{req: req}
	if err := p.step(ctx, "check"); err != nil {
		return p, err
	}
	if req.Out != "" {
		d, err := atomicdir.Reserve(req.Out, atomicdir.Stale(req.Stale))
		if err != nil {
			return p, fmt.Errorf("%w: %w", ErrOutput, err)
		}
		p.dir = d
	}
	if err := p.step(ctx, "reserved"); err != nil {
		return p, err
	}
	// Planning and preparing (factorizations, expected errors: O(n³) on a
	// 4096-value attribute) do not all look at ctx; an interrupt returns
	// at once and the abandoned work, which writes nothing, is dropped.
	parts, err := ctxwait.Abandon(ctx, func() (parts *tables.Parts, err error) {
		defer func() {
			if v := recover(); v != nil {
				err = &PanicError{Value: v, Stack: string(debug.Stack())}
			}
		}()
		parts, err = tables.PrepareParts(ctx, tables.PartsRequest{Workload: req.Workload, Budget: req.Budget,
			PlanDir: req.PlanDir, Template: req.Template, SplitTerms: req.SplitTerms, TermShares: req.TermShares,
			Progress: req.Progress, Planned: req.Planned, CheckPart: req.CheckPart})
		if err == nil {
			err = checkFinite(parts)
		}
		return parts, err
	})
	if err != nil {
		return p, err
	}
	p.parts = parts
	if n := len(parts.Parts()); n > 1 && req.PostProcess.Any() {
		return p, fmt.Errorf("%w: this release is measured in %d parts (a union of marginals and Kronecker parts measured part by part, or a split over terms), each with its own least-squares total, so non-negative or integer tables would not share one grand total nor agree with one another; release the least-squares answers, or plan one measurement of every term (template kron or dense) for publishable tables", ErrPartsPostProcess, n)
	}
	if err := checkMemory(parts, req.PostProcess); err != nil {
		return p, err
	}
	if req.Check != nil {
		if err := req.Check(parts); err != nil {
			return p, err
		}
	}
	if req.Ledger != "" {
		st, err := ledger.Check(req.Ledger, req.Budget)
		if err != nil {
			return p, err
		}
		p.ledger = &st
	}
	if err := p.step(ctx, "prepared"); err != nil {
		return p, err
	}
	return p, nil
}

// Parts is the prepared release (its plan, noise and expected errors).
func (p *Prepared) Parts() *tables.Parts { return p.parts }

// Ledger is the ledger's status before the charge (nil without a ledger).
func (p *Prepared) Ledger() *ledger.Status { return p.ledger }

// Close releases the output directory's reservation of a prepared release
// that is not released. It is safe to call more than once.
func (p *Prepared) Close() {
	if p.dir != nil {
		p.dir.Abort()
	}
}

func (p *Prepared) step(ctx context.Context, name string) error {
	return hstep(ctx, p.req.fault, name)
}

// injectedFault is the fault injector of InjectFault.
var injectedFault atomic.Pointer[func(ctx context.Context, step string) error]

// InjectFault is for tests of programs built on this package: until
// restore is called, every transaction of this process (Run, Prepare,
// Release, RunHistogram) calls f at each of its steps ("check",
// "reserved", "prepared", "charge", "charged", then "read", "answered"
// for Run or "drawn" for RunHistogram, "write NAME", "commit",
// "committed"); an error or a panic from f acts as a failure at that
// step. It is not safe to use while transactions run concurrently with
// the call.
func InjectFault(f func(ctx context.Context, step string) error) (restore func()) {
	prev := injectedFault.Swap(&f)
	return func() { injectedFault.Store(prev) }
}

func injected() func(context.Context, string) error {
	if f := injectedFault.Load(); f != nil {
		return *f
	}
	return nil
}

// Run prepares and releases req (Prepare, then Prepared.Release). The
// Result is never nil; its Outcome says what happened, and the error is
// Result.Reason.
func Run(ctx context.Context, req Request) (*Result, error) {
	p, err := Prepare(ctx, req)
	if err != nil {
		return &Result{Outcome: Refused, Reason: err}, err
	}
	defer p.Close()
	return p.Release(ctx)
}

// checkFinite refuses a release whose planned figures overflow: a noise
// scale, a sensitivity or an expected error that is not finite (term
// weights such as 1e-300 and 1e300 make the weighted error +Inf). Such a
// release could not be reported, so it is refused before the charge.
func checkFinite(ps *tables.Parts) error {
	for _, part := range ps.Parts() {
		r := part.Release
		sens, _ := r.Sensitivity()
		for _, v := range []struct {
			name string
			x    float64
		}{{"the noise's standard deviation", r.Sigma()}, {"the noise scale", r.NoiseScale()}, {"the sensitivity", sens},
			{"the expected total squared error", r.ExpectedTotalSquaredError()},
			{"the weighted expected error", r.ExpectedWeightedError()}} {
			if math.IsNaN(v.x) || math.IsInf(v.x, 0) {
				return errorf("%s of the release is %v: the spec's term weights or the budget are too extreme to plan and report a release (rescale the weights to a range such as 1e-6 … 1e6)", v.name, v.x)
			}
		}
		for _, e := range r.TermErrors() {
			for _, x := range []float64{e.Weight, e.TotalVariance, e.MaxStd, e.HalfWidth95} {
				if math.IsNaN(x) || math.IsInf(x, 0) {
					return errorf("term %s: its expected error is %v (weight %g): rescale the spec's term weights", e.Name, x, e.Weight)
				}
			}
		}
	}
	return nil
}

// checkMemory refuses a release whose data, measurements and answers do
// not fit in the available memory.
func checkMemory(ps *tables.Parts, pp tables.Publishable) error {
	need := ps.MemoryEstimate(pp)
	mem, ok := records.AvailableMemory()
	if ok && need > mem.Bytes {
		return errorf("%w", &resources.Refusal{What: "this release (data, measurements and answers)", Need: need,
			Avail: mem, Hint: "use a marginals plan or fewer attributes"})
	}
	return nil
}

// gate orders the two irreversible steps — the charge and the commit —
// with an interrupt's decision: each runs holding mu and checks closed and
// the context under it; the interrupt sets closed under mu, so afterwards
// neither step can happen, and charged and released say what did.
type gate struct {
	mu                sync.Mutex
	closed            bool
	charged, released bool
}

func (g *gate) spend(ctx context.Context, charge func() error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.charged {
		return nil
	}
	if g.closed {
		return context.Cause(ctx)
	}
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	if err := charge(); err != nil {
		return err
	}
	g.charged = true
	return nil
}

// gated runs work in its own goroutine and returns its error, or, as soon
// as ctx is cancelled, the cancellation's cause, closing g so that neither
// the charge nor the commit can happen afterwards (unless the commit has
// happened: then work's own result is awaited).
func gated(ctx context.Context, g *gate, work func() error) error {
	done := make(chan error, 1)
	go func() { done <- work() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		if _, released := g.close(); released {
			return <-done
		}
		return context.Cause(ctx)
	}
}

// chargeLedger is the charge of every transaction: under the gate, after
// the step hook before, it spends b on the ledger at path (nothing without
// one), stores the ledger's status in *st and then tells charged.
func (g *gate) chargeLedger(ctx context.Context, before func() error, path string, b calibrate.Budget, label string, st **ledger.Status, charged func(ledger.Status)) error {
	err := g.spend(ctx, func() error {
		if err := before(); err != nil {
			return err
		}
		if path == "" {
			return nil
		}
		s, err := ledger.SpendContext(ctx, path, b, label)
		if err != nil {
			return err
		}
		*st = &s
		return nil
	})
	if err != nil {
		return err
	}
	if charged != nil && *st != nil {
		charged(**st)
	}
	return nil
}

// ready is called under the output directory's lock just before its
// rename: it takes mu and keeps it until done is called.
func (g *gate) ready(ctx context.Context) (func(), error) {
	g.mu.Lock()
	if g.closed || ctx.Err() != nil {
		g.mu.Unlock()
		return nil, context.Cause(ctx)
	}
	return g.mu.Unlock, nil
}

func (g *gate) close() (charged, released bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	return g.charged, g.released
}

// Release reads the data, charges the ledger if ctx is not cancelled,
// draws the noise, answers, and commits the output directory. It may be
// called once. The Result is never nil and its error is Result.Reason.
func (p *Prepared) Release(ctx context.Context) (*Result, error) {
	res := &Result{Parts: p.parts, Ledger: p.ledger}
	p.mu.Lock()
	used := p.used
	p.used = true
	p.mu.Unlock()
	if used {
		err := errorf("this prepared release was already run")
		res.Outcome, res.Reason = Refused, err
		return res, err
	}
	g := &gate{}
	err := gated(ctx, g, func() error { return p.work(ctx, g, res) })
	charged, released := g.close()
	switch {
	case released:
		res.Outcome, res.Reason, res.Out = Released, nil, p.req.Out
		return res, nil
	case charged:
		p.Close()
		se := &SpentError{Ledger: p.req.Ledger, Err: err}
		res.Outcome, res.Reason, res.Tables = ChargedNotReleased, se, nil
		return res, se
	default:
		p.Close()
		if err == nil {
			err = errorf("the release stopped before the charge")
		}
		res.Outcome, res.Reason, res.Tables = Refused, err, nil
		return res, err
	}
}

// work is the transaction after Prepare; a panic in it is recovered and
// returned as a *PanicError.
func (p *Prepared) work(ctx context.Context, g *gate, res *Result) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: string(debug.Stack())}
		}
	}()
	req := &p.req
	data, nrec, err := p.readData(ctx)
	if err != nil {
		return err
	}
	res.Records = nrec
	if err := p.step(ctx, "read"); err != nil {
		return err
	}
	src := req.Noise
	if src == nil {
		src = noise.NewSecure()
	}
	charge := func() error {
		label := req.Label
		if label == "" {
			label = req.Out
		}
		err := g.chargeLedger(ctx, func() error { return p.step(ctx, "charge") }, req.Ledger, req.Budget, label, &res.Ledger, req.Charged)
		if err != nil {
			return err
		}
		return p.step(ctx, "charged")
	}
	tr, err := p.parts.Run(ctx, data, src, charge, req.PostProcess)
	if err != nil {
		return err
	}
	res.Tables = tr
	if err := p.step(ctx, "answered"); err != nil {
		return err
	}
	if p.dir == nil {
		// No output directory: the answers in res are the release.
		unlock, err := g.ready(ctx)
		if err != nil {
			return err
		}
		g.released = true
		unlock()
		return nil
	}
	files := []File{{Name: "answers.csv", Write: func(w io.Writer) error { return tables.WriteAnswersCSV(w, req.Workload, tr) }}}
	if req.Files != nil {
		more, err := req.Files(res)
		if err != nil {
			return err
		}
		files = append(files, more...)
	}
	for _, f := range files {
		if err := p.step(ctx, "write "+f.Name); err != nil {
			return fmt.Errorf("writing %s: %w", f.Name, err)
		}
		if err := p.dir.WriteFile(f.Name, f.Write); err != nil {
			return fmt.Errorf("writing %s: %w", f.Name, err)
		}
	}
	if err := p.step(ctx, "commit"); err != nil {
		return err
	}
	var unlock func()
	err = p.dir.Commit(func() error {
		var err error
		unlock, err = g.ready(ctx)
		return err
	})
	if unlock != nil {
		if err == nil {
			g.released = true
		}
		unlock()
	}
	if err != nil {
		return err
	}
	p.step(ctx, "committed") // the release is in place: a later fault changes nothing
	return nil
}

// readData reads what the prepared parts measure.
func (p *Prepared) readData(ctx context.Context) (tables.Data, int64, error) {
	d := p.req.Data
	histogram, sets := p.parts.Needs()
	attrs := p.req.Workload.Attributes()
	switch {
	case d.Load != nil:
		return d.Load(ctx, histogram, sets)
	case d.Histogram != nil:
		return tables.Data{Histogram: d.Histogram, Tables: records.Marginalize(d.Histogram, attrs, sets)}, 0, nil
	case d.Records != nil:
		in := ctxReader{ctx: ctx, r: LineLimit(d.Records, MaxLineBytes)}
		if histogram {
			x, st, err := records.ReadHistogram(in, attrs, d.RecordsOptions)
			if err != nil {
				return tables.Data{}, 0, err
			}
			return tables.Data{Histogram: x, Tables: records.Marginalize(x, attrs, sets)}, st.Records, nil
		}
		tabs, st, err := records.ReadMarginals(in, attrs, sets, d.RecordsOptions)
		return tables.Data{Tables: tabs}, st.Records, err
	}
	return tables.Data{}, 0, errorf("no data: give Data.Histogram, Data.Records or Data.Load")
}

// ctxReader stops a read once ctx is cancelled.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(b []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, context.Cause(c.ctx)
	}
	return c.r.Read(b)
}
