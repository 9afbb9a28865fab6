package publish

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/dpsolve/dpsolve/internal/atomicdir"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/ledger"
)

// Custom is a release whose measurement is the caller's own (a mechanism
// that is not a planned table release, such as synthetic records): the
// transaction keeps the same order and outcomes as Run — every check
// (Check, the output directory, the ledger's room), then the charge under
// the ledger's lock, then Measure, then the atomic, fsynced commit of the
// files Measure returns — and recovers a panic anywhere (a refusal before
// the charge, ChargedNotReleased after it).
type Custom struct {
	// Budget is what the ledger is charged (the mechanism's whole budget).
	Budget calibrate.Budget
	// Ledger, if not empty, is charged Budget before Measure runs; Label
	// is the entry's label (default: Out).
	Ledger, Label string
	// Out is the output directory (required): it must not exist or be an
	// empty directory, and it is reserved before Check runs.
	Out string
	// Stale is told every unfinished output of a killed earlier release to
	// Out that is removed (may be nil).
	Stale func(path string)
	// Check runs every check of the caller's that can refuse (options,
	// data: read them here), before the ledger's room is checked and
	// before anything is charged. May be nil.
	Check func(ctx context.Context) error
	// Measure runs after the charge: it draws the noise, computes the
	// release and returns the files to publish. Nothing it returns is
	// written unless it succeeds.
	Measure func(ctx context.Context) ([]File, error)
	// Charged, if not nil, is told the ledger's status right after the
	// charge.
	Charged func(ledger.Status)

	// fault is the test-only fault injector, called at each step.
	fault func(ctx context.Context, step string) error
}

// RunCustom runs the transaction of c. The Result is never nil (its Parts
// and Tables are nil: the measurement is the caller's); its Outcome says
// what happened and the error is Result.Reason.
func RunCustom(ctx context.Context, c Custom) (*Result, error) {
	res := &Result{}
	refuse := func(err error) (*Result, error) {
		res.Outcome, res.Reason = Refused, err
		return res, err
	}
	if c.Budget.Kind() == "" {
		return refuse(errorf("no budget"))
	}
	if c.Out == "" {
		return refuse(errorf("no output directory"))
	}
	if c.Measure == nil {
		return refuse(errorf("no measurement (Custom.Measure)"))
	}
	step := func(ctx context.Context, name string) error {
		if c.fault != nil {
			return c.fault(ctx, name)
		}
		return nil
	}
	dir, err := atomicdir.Reserve(c.Out, atomicdir.Stale(c.Stale))
	if err != nil {
		return refuse(fmt.Errorf("%w: %w", ErrOutput, err))
	}
	if err := c.prepare(ctx, step, res); err != nil {
		dir.Abort()
		return refuse(err)
	}
	g := &gate{}
	err = gated(ctx, g, func() error { return c.work(ctx, step, g, dir, res) })
	charged, released := g.close()
	switch {
	case released:
		res.Outcome, res.Reason, res.Out = Released, nil, c.Out
		return res, nil
	case charged:
		dir.Abort()
		se := &SpentError{Ledger: c.Ledger, Err: err}
		res.Outcome, res.Reason = ChargedNotReleased, se
		return res, se
	default:
		dir.Abort()
		if err == nil {
			err = errorf("the release stopped before the charge")
		}
		return refuse(err)
	}
}

// prepare runs the checks before the charge; a panic is an error.
func (c *Custom) prepare(ctx context.Context, step func(context.Context, string) error, res *Result) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: string(debug.Stack())}
		}
	}()
	if err := step(ctx, "reserved"); err != nil {
		return err
	}
	if c.Check != nil {
		if err := c.Check(ctx); err != nil {
			return err
		}
	}
	if c.Ledger != "" {
		st, err := ledger.Check(c.Ledger, c.Budget)
		if err != nil {
			return err
		}
		res.Ledger = &st
	}
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	return step(ctx, "prepared")
}

// work is the transaction after the checks: the charge, Measure and the
// commit; a panic is recovered and returned as a *PanicError.
func (c *Custom) work(ctx context.Context, step func(context.Context, string) error, g *gate, dir *atomicdir.Dir, res *Result) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: string(debug.Stack())}
		}
	}()
	label := c.Label
	if label == "" {
		label = c.Out
	}
	if err := g.chargeLedger(ctx, func() error { return step(ctx, "charge") }, c.Ledger, c.Budget, label, &res.Ledger, c.Charged); err != nil {
		return err
	}
	if err := step(ctx, "charged"); err != nil {
		return err
	}
	files, err := c.Measure(ctx)
	if err != nil {
		return err
	}
	if err := step(ctx, "answered"); err != nil {
		return err
	}
	for _, f := range files {
		if err := step(ctx, "write "+f.Name); err != nil {
			return fmt.Errorf("writing %s: %w", f.Name, err)
		}
		if err := dir.WriteFile(f.Name, f.Write); err != nil {
			return fmt.Errorf("writing %s: %w", f.Name, err)
		}
	}
	if err := step(ctx, "commit"); err != nil {
		return err
	}
	var unlock func()
	err = dir.Commit(func() error {
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
	step(ctx, "committed")
	return nil
}
