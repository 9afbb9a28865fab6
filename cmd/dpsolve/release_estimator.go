package main

import (
	"flag"
	"fmt"
	"io"
	"math"

	"github.com/dpsolve/dpsolve/pipeline/tables"
)

// printEstimators prints, for each estimator report, the released total
// every table keeps and the least-squares total it comes from.
func printEstimators(out io.Writer, rep *tblJSON) {
	es := rep.Estimators
	if rep.Estimator != nil {
		es = []*tables.Estimator{rep.Estimator}
	}
	for _, e := range es {
		biggest := 0.0
		for _, t := range e.Tables {
			biggest = math.Max(biggest, t.MaxChange)
		}
		fmt.Fprintf(out, "tables         every table sums to %.10g (least-squares total %.10g ± %.3g); largest change from least squares %.3g; %s (see estimator in release.json)\n",
			e.ReleasedTotal, e.LeastSquaresTotal, e.LeastSquaresTotalStd, biggest, e.Method)
	}
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
