package main

import (
	"flag"
	"fmt"
	"io"
)

// answerOrder documents, for every built-in workload, which query each row
// of W (and so each answer of dpsolve answer/run) is. Cells are 0-based;
// TestAnswerOrderMatchesW checks every line against the matrices and the
// closed-form answers. The "Answer order" section of docs/cli.md repeats it.
const answerOrder = `Answer order (row i of W = answer i; cells 0-based; --out-w writes W):
  identity            n answers: answer i is cell i
  total               1 answer: the sum of all cells
  prefix              n answers: answer i is x_0 + … + x_i
  allrange            n(n+1)/2 answers: every range [i, j], ordered by start i, then end j
                      ([0,0], [0,1], …, [0,n-1], [1,1], …, [n-1,n-1])
  width:k=K           n-K+1 answers: answer i is the window x_i + … + x_(i+K-1)
  wrange:m=M          M answers: the ranges in the order drawn (see --out-w)
  wdiscrete:m=M       M answers: the ±1 queries in the order drawn (see --out-w)
  wrelated:m=M,s=S    M answers: row i of the product C·B (see --out-w)
  marginals:dims=…    for each attribute set S of size k, in lexicographic order
                      ({0,1}, {0,2}, …), one answer per joint value of S,
                      row-major (the last attribute of S varies fastest);
                      cell index is row-major over all attributes
The random workloads never leave a cell that no query touches: a draw that
does is redrawn, and the name says so (",redrawn=K").`

// withAnswerOrder makes fs's usage print the flags followed by the answer
// order, for commands that take --workload.
func withAnswerOrder(fs *flag.FlagSet, usage string, out io.Writer) {
	fs.Usage = func() {
		fmt.Fprintln(out, usage)
		fs.PrintDefaults()
		fmt.Fprintln(out)
		fmt.Fprintln(out, answerOrder)
	}
}
