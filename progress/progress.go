// Package progress is dpsolve's one progress interface. Every long-running
// routine — the strategy optimizer (newton, both methods), the Low-Rank
// Mechanism (lrm), the multi-attribute planner (plan and its templates),
// the record readers (records), the batch runner and the functional
// perturbation experiment — takes a Func in the field Progress of its
// options and reports Events through it: one or more while it runs and a
// final one with Done set when it returns normally.
//
// An Event carries what every routine has in common (which stage is
// running, how far it is, the objective and certified bound so far, how
// many units of work are done). The per-package iteration records remain
// results (newton.Result.History and the like); a routine may attach its
// own record to an Event as Detail for a caller that wants more.
//
// Events are delivered synchronously on the routine's goroutine (the batch
// runner: from one goroutine at a time), so a Func must return quickly; it
// must not call back into the routine.
package progress

import (
	"math"
)

// Event is one report of a long-running routine.
type Event struct {
	// Stage names what is running, in lower case: "newton", "yuan2016",
	// "lrm", "lrm start", "plan kron", "records", "batch", "funcpert".
	Stage string
	// Step is the iteration, sweep or outer step this event reports (from 1);
	// 0 when the stage has no steps.
	Step int
	// Inner counts inner steps so far (CG steps, L-steps, L-BFGS
	// iterations); 0 when the stage has none.
	Inner int
	// Objective is the objective value so far; NaN when the stage has none
	// or it is not known at this event.
	Objective float64
	// Bound is a certified lower bound on the optimum; NaN when not computed.
	Bound float64
	// Gap is the relative gap (Objective − Bound)/Objective; NaN when not
	// computed.
	Gap float64
	// Count is the units of work done so far (records read, jobs finished,
	// tasks completed).
	Count int64
	// Total is the units of work expected, 0 when unknown.
	Total int64
	// Unit names what Count counts ("records", "jobs"); empty when the
	// stage counts nothing.
	Unit string
	// Fraction is the share of the input consumed, in (0, 1], when Count
	// has no known Total (bytes read of a file's size); 0 when unknown.
	Fraction float64
	// Seconds is the time since the routine (this stage) started.
	Seconds float64
	// Done marks the stage's final event, sent once when it returns
	// normally (not on an error; on cancellation only where the routine
	// returns a best-so-far result).
	Done bool
	// Note is a short human-readable remark: a final status ("converged"),
	// a job that failed, a tuned parameter. Empty when none.
	Note string
	// Detail is the routine's own record for this event
	// (newton.Iteration, lrm.Iteration, the batch runner's Counts, …), or
	// nil.
	Detail any
}

// Func receives a routine's Events. A nil Func is valid and discards them.
type Func func(Event)

// Report sends e to f; it does nothing when f is nil, so a routine can call
// it unconditionally.
func (f Func) Report(e Event) {
	if f != nil {
		f(e)
	}
}

// Enabled reports whether f receives anything: a routine may skip the work
// of building an Event when it does not.
func (f Func) Enabled() bool { return f != nil }

// Known reports whether a float field of an Event (Objective, Bound, Gap)
// holds a value: a stage reports NaN for a field it does not know.
func Known(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
