package progress_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/newton"
	"github.com/dpsolve/dpsolve/progress"
)

// Every long-running routine takes a progress.Func in Options.Progress; the
// last event it sends has Done set and carries the result.
func ExampleFunc() {
	ctx := context.Background()
	w, _ := workload.NewPrefix(32)
	var last progress.Event
	steps := 0
	opt := &newton.Options{Progress: func(e progress.Event) {
		last = e
		if !e.Done {
			steps++
		}
	}}
	res, err := newton.Solve(ctx, w.Gram(), opt)
	if err != nil {
		panic(err)
	}
	fmt.Println(last.Stage, last.Done, last.Note, steps == res.Iterations, last.Objective == res.Objective)
	// Output: newton true converged true true
}

// NewWriter renders events as dpsolve's command line does: a line per event,
// at most one per interval besides the first, the last and those with a note.
func ExampleNewWriter() {
	ctx := context.Background()
	w, _ := workload.NewPrefix(64)
	opt := &newton.Options{Progress: progress.NewWriter(os.Stderr, "my program: ", time.Second)}
	res, err := newton.Solve(ctx, w.Gram(), opt) // "my program: newton  step 1  objective …" on stderr
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Status)
	// Output: converged
}

func ExampleFormat() {
	nan := math.NaN()
	fmt.Println(progress.Format(progress.Event{Stage: "records", Count: 2000000, Unit: "records", Fraction: 0.41,
		Objective: nan, Bound: nan, Gap: nan, Seconds: 3.21}))
	// Output: records  2000000 records (41%)  3.210 s
}
