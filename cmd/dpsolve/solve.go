package main

import (
	"context"
	"fmt"
	"io"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/internal/matio"
	"github.com/dpsolve/dpsolve/newton"
)

func init() {
	register(&command{
		name:    "solve",
		summary: "compute the optimal Gaussian-noise strategy for a workload, with a certificate",
		run:     runSolve,
	})
}

// solveJSON is the machine-readable output of dpsolve solve.
type solveJSON struct {
	Workload             string  `json:"workload"`
	N                    int     `json:"n"`
	Method               string  `json:"method"`
	Objective            float64 `json:"objective"`
	LowerBound           float64 `json:"lower_bound"`
	Gap                  float64 `json:"gap"`
	SVDBound             float64 `json:"svd_bound"`
	Regularization       float64 `json:"regularization"`
	RegularizedObjective float64 `json:"regularized_objective"`
	Iterations           int     `json:"iterations"`
	CGSteps              int     `json:"cg_steps"`
	Seconds              float64 `json:"seconds"`
	Status               string  `json:"status"`
	Backend              string  `json:"backend"`
	Core                 string  `json:"core,omitempty"`
	Threads              int     `json:"threads"`

	// For the text only: the backend as blas.Describe words it, and why
	// the solver regularized V (when it did).
	backend, regReason string
}

// workloadFlags are the flags that select a workload, shared by subcommands.
type workloadFlags struct {
	spec     string
	n        int
	gram     string
	wfile    string
	specFile string
}

func (f *workloadFlags) register(fs interface {
	StringVar(*string, string, string, string)
	IntVar(*int, string, int, string)
}) {
	fs.StringVar(&f.spec, "workload", "", "built-in workload: identity, total, prefix, allrange, width:k=K, wrange:m=M, wdiscrete:m=M, wrelated:m=M,s=S, marginals:dims=AxB[,k=K]")
	fs.IntVar(&f.n, "n", 0, "domain size for --workload")
	fs.StringVar(&f.gram, "gram", "", "read the Gram matrix V = WᵀW from a .npy or .csv file")
	fs.StringVar(&f.wfile, "w", "", "read the workload matrix W (m×n) from a .npy or .csv file")
	registerSpecFile(fs, &f.specFile)
}

func runSolve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("solve", stderr)
	var wf workloadFlags
	wf.register(fs)
	method := fs.String("method", "newton", "optimizer: newton (certified, default) or yuan2016 (Algorithm 1 of Yuan et al., KDD 2016)")
	tol := fs.Float64("tol", 1e-8, "target certified relative duality gap")
	maxIter := fs.Int("max-iter", 0, "iteration cap (0: 100 for newton, 30 for yuan2016)")
	reg := fs.Float64("regularization", 0, "θ relative to mean(diag V) (0: automatic, only when V is singular)")
	threads := fs.Int("threads", 0, "kernel threads (0: backend default)")
	outA := fs.String("out-a", "", "write the strategy A (upper triangular, AᵀA = X) to this .npy or .csv file")
	outX := fs.String("out-x", "", "write X = AᵀA to this .npy or .csv file")
	outW := registerOutW(fs)
	asJSON := fs.Bool("json", false, "print one JSON object on stdout")
	quiet := fs.Bool("quiet", false, "no per-iteration progress on stderr")
	withAnswerOrder(fs, "usage: dpsolve solve (--workload SPEC --n N | --w FILE | --gram FILE | --spec FILE) [flags]", stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *tol <= 0 || math.IsNaN(*tol) {
		return usageErrorf("--tol must be positive, got %g", *tol)
	}
	if *maxIter < 0 {
		return usageErrorf("--max-iter must be non-negative, got %d", *maxIter)
	}
	if *threads < 0 {
		return usageErrorf("--threads must be non-negative, got %d", *threads)
	}
	m, err := newton.ParseMethod(*method)
	if err != nil {
		return usageErrorf("--method must be newton or yuan2016, got %q", *method)
	}
	if err := preflight("solve", []string{wf.gram, wf.wfile, wf.specFile}, wf.source(), memSolve, false, false,
		matOut("--out-a", *outA), matOut("--out-x", *outX), matOut("--out-w", *outW)); err != nil {
		return err
	}
	// One workload value serves the solve (its Gram) and --out-w (its W).
	wl, err := loadWorkload(wf.source())
	if err != nil {
		return err
	}
	v, label := wl.Gram(), wl.Name()
	if err := checkSizeMemory("solve", v.SymmetricDim(), 0, memSolve, false); err != nil {
		return err
	}
	if *threads > 0 {
		blas.Current().SetThreads(*threads)
	}

	n := v.SymmetricDim()
	if !*quiet {
		fmt.Fprintf(stderr, "dpsolve solve: %s, n = %d, method %s, backend %s\n", label, n, *method, blas.Describe())
	}
	opt := &newton.Options{Method: m, Tol: *tol, MaxIter: *maxIter, Regularization: *reg,
		Progress: progressTo(stderr, "solve", *quiet)}
	// An interrupted solve returns at once and writes nothing.
	res, err := untilCancelled(ctx, func() (*newton.Result, error) { return newton.Solve(ctx, v, opt) })
	if err != nil {
		return err
	}
	if err := writeMatrices(outFile{*outA, res.A}, outFile{*outX, res.X}); err != nil {
		return err
	}
	if err := writeOutW(*outW, wl); err != nil {
		return err
	}
	out := newSolveResult(wl.Name(), n, res, *reg)
	return writeReport(stdout, *asJSON, out)
}

// newSolveResult is the one result of dpsolve solve that both the text and
// the --json renderings read, so the two cannot report different numbers.
// regFlag is --regularization, which decides how the text explains θ.
func newSolveResult(label string, n int, res *newton.Result, regFlag float64) *solveJSON {
	be := blas.Current()
	return &solveJSON{
		Workload: label, N: n, Method: res.Method.String(),
		Objective: res.Objective, LowerBound: res.LowerBound, Gap: res.Gap, SVDBound: res.SVDBound,
		Regularization: res.Regularization, RegularizedObjective: res.RegularizedObjective,
		Iterations: res.Iterations, CGSteps: res.CGSteps, Seconds: res.Seconds, Status: res.Status.String(),
		Backend: be.Name(), Core: be.CoreName(), Threads: be.Threads(),
		backend: blas.Describe(), regReason: regularizationReason(res.Method, regFlag),
	}
}

// writeText renders the result for a reader.
func (o *solveJSON) writeText(w io.Writer) {
	fmt.Fprintf(w, "workload      %s (n = %d)\n", o.Workload, o.N)
	fmt.Fprintf(w, "method        %s, backend %s\n", o.Method, o.backend)
	fmt.Fprintf(w, "status        %s after %d iterations (%d CG steps), %.3f s\n", o.Status, o.Iterations, o.CGSteps, o.Seconds)
	fmt.Fprintf(w, "objective     %.12g   tr(V X⁻¹): expected total squared error per unit noise\n", o.Objective)
	fmt.Fprintf(w, "lower bound   %.12g   certified: no strategy does better\n", o.LowerBound)
	fmt.Fprintf(w, "gap           %.3g\n", o.Gap)
	fmt.Fprintf(w, "SVD bound     %.12g\n", o.SVDBound)
	if o.Regularization > 0 {
		fmt.Fprintf(w, "regularized   θ = %g·mean(diag V): %s, so the solver minimized tr((V+θ·mean(diag V)·I) X⁻¹) = %.12g\n", o.Regularization, o.regReason, o.RegularizedObjective)
		fmt.Fprintf(w, "              (status refers to that problem; the objective, bound and gap above are for your V — lower --regularization to narrow the gap)\n")
	}
}

// outFile is an optional output file: a path (empty: not requested) and
// the matrix to write there.
type outFile struct {
	path string
	m    mat.Matrix
}

// writeMatrices writes each requested matrix (.npy or .csv), in order.
func writeMatrices(files ...outFile) error {
	for _, f := range files {
		if f.path == "" {
			continue
		}
		if err := matio.WriteMatrix(f.path, f.m); err != nil {
			return err
		}
	}
	return nil
}
