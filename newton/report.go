package newton

import (
	"time"

	"github.com/dpsolve/dpsolve/progress"
)

// record stamps an iteration with the elapsed time, appends it to the
// result's history and reports it to the caller's Progress function.
func record(res *Result, opt Options, start time.Time, it Iteration) {
	it.Seconds = time.Since(start).Seconds()
	res.History = append(res.History, it)
	report(opt, res.History, it)
}

// report sends one iteration to opt.Progress, with the CG steps summed over
// hist (which ends with it).
func report(opt Options, hist []Iteration, it Iteration) {
	if !opt.Progress.Enabled() {
		return
	}
	inner := 0
	for _, h := range hist {
		inner += h.CGSteps
	}
	opt.Progress(progress.Event{Stage: opt.Method.String(), Step: it.Iter, Inner: inner,
		Objective: it.Objective, Bound: it.LowerBound, Gap: it.Gap, Seconds: it.Seconds, Detail: it})
}

// reportDone sends a solve's final event.
func reportDone(opt Options, res *Result) {
	opt.Progress.Report(progress.Event{Stage: opt.Method.String(), Step: res.Iterations, Inner: res.CGSteps,
		Objective: res.Objective, Bound: res.LowerBound, Gap: res.Gap, Seconds: res.Seconds,
		Done: true, Note: res.Status.String()})
}
