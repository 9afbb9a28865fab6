package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/dpsolve/dpsolve/mechanism/tables"
)

// addEstimator records a part's estimator report in release.json: the one
// report of a whole-workload release, or with --split terms (parts > 1)
// one per term, since each term then has its own least-squares total.
func addEstimator(rep *tblJSON, e *tables.Estimator, parts int) {
	if e == nil {
		return
	}
	if parts == 1 {
		rep.Estimator = e
		return
	}
	rep.Estimators = append(rep.Estimators, e)
}

// withReleaseHelp makes release's usage print the flags followed by the
// layout and query order of answers.csv.
func withReleaseHelp(fs *flag.FlagSet, out io.Writer) {
	fs.Usage = func() {
		fmt.Fprintln(out, "usage: dpsolve release --spec SPEC (--plan DIR | --template T) (--rho R | --eps E [--delta D]) --data FILE --out DIR [--nonnegative] [--integer]")
		fs.PrintDefaults()
		fmt.Fprintln(out)
		fmt.Fprintln(out, tables.AnswerOrder)
	}
}
