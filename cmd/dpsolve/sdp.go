package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"sort"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/matio"
	"github.com/dpsolve/dpsolve/mechanism/sdp"
	"github.com/dpsolve/dpsolve/mechanism/strategy"
)

func init() {
	register(&command{
		name:    "sdp",
		summary: "export the SDP formulations of Yuan et al. (KDD 2016) as SDPA .dat-s and cross-check them with CSDP",
		run:     runSDP,
	})
}

// sdpJSON is the machine-readable output of dpsolve sdp. Objectives that do
// not exist (a strategy that cannot answer the workload) are null.
type sdpJSON struct {
	Workload  string `json:"workload"`
	N         int    `json:"n"`
	Form      string `json:"form"`
	WSource   string `json:"w_source"` // "matrix" (W as given) or "gram-factor"
	Rows      int    `json:"rows"`     // m of the W written into the program
	Variables int    `json:"variables"`
	Blocks    []int  `json:"blocks"`
	Export    string `json:"export,omitempty"`

	// With --solve:
	SDPObjective       *float64 `json:"sdp_objective,omitempty"`
	SDPLowerBound      *float64 `json:"sdp_lower_bound,omitempty"`
	NewtonObjective    *float64 `json:"newton_objective,omitempty"`
	RelativeDifference *float64 `json:"relative_difference,omitempty"`
	Solver             string   `json:"solver,omitempty"`
	Status             string   `json:"status,omitempty"`
	Seconds            *float64 `json:"seconds,omitempty"`
	NewtonSeconds      *float64 `json:"newton_seconds,omitempty"`
	MaxInfeasibility   *float64 `json:"max_infeasibility,omitempty"`

	// With --solve and an exact form: ε-DP objectives J₁ = Δ₁²·tr(V (AᵀA)⁻¹).
	Exact *sdpExactJSON `json:"exact,omitempty"`
}

// sdpExactJSON is the exact forms' report; mechanism/sdp computes it.
type sdpExactJSON = sdp.ExactReport

func runSDP(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sdp", stderr)
	var wf workloadFlags
	wf.register(fs)
	formName := fs.String("form", "approx", "approx: Eq. (2), approximate DP, exact; exact: Eq. (3) as the paper states it (value 0, see docs); exact-bounded: Eq. (3) plus diag(X) ≤ 1")
	export := fs.String("export", "", "write the program in SDPA sparse format to this file (.dat-s)")
	solve := fs.Bool("solve", false, "solve with CSDP and compare with the Newton optimizer")
	csdpPath := fs.String("csdp", "", "csdp executable (default: csdp on PATH)")
	tol := fs.Float64("tol", 0, "CSDP feasibility and gap tolerance (0: CSDP's default 1e-8)")
	outX := fs.String("out-x", "", "with --solve, write the SDP's X to this .npy or .csv file")
	outA := fs.String("out-a", "", "with --solve, write the SDP's strategy to this .npy or .csv file (approx: chol(X), upper triangular; exact forms: the A variable)")
	asJSON := fs.Bool("json", false, "print one JSON object on stdout")
	quiet := fs.Bool("quiet", false, "no CSDP progress on stderr")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	form, err := sdp.ParseForm(*formName)
	if err != nil {
		return usageErrorf("--form: %v", err)
	}
	if *export == "" && !*solve {
		return usageErrorf("nothing to do: give --export FILE and/or --solve")
	}
	if !*solve && (*outX != "" || *outA != "") {
		return usageErrorf("--out-x and --out-a need --solve")
	}
	if *tol < 0 || math.IsNaN(*tol) {
		return usageErrorf("--tol must be non-negative, got %g", *tol)
	}
	if err := preflight("sdp", []string{wf.gram, wf.wfile, wf.specFile}, wf.source(), memSDP, true, false,
		fileOut("--export", *export), matOut("--out-x", *outX), matOut("--out-a", *outA)); err != nil {
		return err
	}
	wl, err := loadWorkload(wf.source())
	if err != nil {
		return err
	}
	if *solve {
		if err := checkSDPSolveMemory(wl.Domain()); err != nil {
			return err
		}
	}
	label := wl.Name()
	fm, src, err := sdp.ForWorkload(form, wl)
	if err != nil {
		return err
	}
	fm.Problem.Comment = label + ": " + fm.Problem.Comment
	out := sdpJSON{
		Workload: label, N: fm.N, Form: form.String(), WSource: src, Rows: fm.M,
		Variables: fm.NumVars(), Blocks: fm.Problem.Blocks, Export: *export,
	}
	if *export != "" {
		if err := writeSDPAFile(*export, fm.Problem); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %s: %v program for %s, %d variables, blocks %v\n",
			*export, form, label, fm.NumVars(), fm.Problem.Blocks)
	}
	if *solve {
		if err := solveSDP(ctx, fm, wl.Gram(), &out, &sdp.Options{Path: *csdpPath, Tol: *tol}, *quiet, *outX, *outA, stderr); err != nil {
			return err
		}
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(out)
	}
	printSDPHuman(stdout, &out)
	return nil
}

func writeSDPAFile(path string, p *sdp.Problem) error {
	return writeFileAtomic(path, func(w io.Writer) error { return sdp.WriteSDPA(w, p) })
}

func solveSDP(ctx context.Context, fm *sdp.Formulation, v *mat.SymDense, out *sdpJSON, opt *sdp.Options,
	quiet bool, outX, outA string, stderr io.Writer) error {
	if !quiet {
		opt.Progress = progressTo(stderr, "sdp", false)
		fmt.Fprintf(stderr, "solving the %v program (%d variables) with CSDP...\n", fm.Form, fm.NumVars())
	}
	res, err := sdp.Solve(ctx, fm.Problem, opt)
	if err != nil {
		return err
	}
	if !quiet {
		fmt.Fprintln(stderr, "checking the solution and solving with the Newton optimizer for comparison...")
	}
	ver, err := sdp.Verify(ctx, fm, v, res)
	if err != nil {
		if ctx.Err() != nil {
			return errCancelled(ctx) // an interrupted solve writes nothing
		}
		return err
	}
	pt := ver.Point
	out.SDPObjective = ptr(pt.Objective)
	if !math.IsNaN(res.LowerBound) {
		out.SDPLowerBound = ptr(res.LowerBound)
	}
	out.NewtonObjective = ptr(ver.NewtonObjective)
	out.RelativeDifference = ptr(ver.RelativeDifference)
	out.Solver = res.Solver
	out.Status = res.Message
	out.Seconds = ptr(res.Seconds)
	out.NewtonSeconds = ptr(ver.NewtonSeconds)
	out.MaxInfeasibility = ptr(ver.MaxInfeasibility)
	out.Exact = ver.Exact

	var aOut *mat.Dense
	if outA != "" {
		if aOut, err = pt.StrategyMatrix(fm.Form); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return errCancelled(ctx) // an interrupted solve writes nothing
	}
	if outX != "" {
		if err := matio.WriteMatrix(outX, pt.X); err != nil {
			return err
		}
	}
	if outA != "" {
		if err := matio.WriteMatrix(outA, aOut); err != nil {
			return err
		}
	}
	return nil
}

func ptr(x float64) *float64 { return &x }

func printSDPHuman(w io.Writer, o *sdpJSON) {
	fmt.Fprintf(w, "workload          %s (n=%d, W rows in program %d, %s)\n", o.Workload, o.N, o.Rows, o.WSource)
	fmt.Fprintf(w, "form              %s: %d variables, blocks %v\n", o.Form, o.Variables, o.Blocks)
	if o.Export != "" {
		fmt.Fprintf(w, "exported          %s\n", filepath.Clean(o.Export))
	}
	if o.SDPObjective == nil {
		return
	}
	fmt.Fprintf(w, "solver            %s: %s in %.3fs\n", o.Solver, o.Status, *o.Seconds)
	fmt.Fprintf(w, "sdp objective     %.10g (max infeasibility %.2g)\n", *o.SDPObjective, *o.MaxInfeasibility)
	fmt.Fprintf(w, "newton objective  %.10g (certified, %.3fs)\n", *o.NewtonObjective, *o.NewtonSeconds)
	fmt.Fprintf(w, "relative diff     %.3g\n", *o.RelativeDifference)
	if e := o.Exact; e != nil {
		fmt.Fprintf(w, "relaxation value  %.10g (lower bound on the ε-DP objective J₁ of every strategy)\n", e.RelaxationValue)
		fmt.Fprintf(w, "‖A‖₁,∞ of SDP A   %.8g\n", e.AL1Sensitivity)
		f := func(p *float64, note string) string {
			if p == nil {
				return "none (" + note + ")"
			}
			return fmt.Sprintf("%.8g", *p)
		}
		fmt.Fprintf(w, "J₁ of SDP A       %s\n", f(e.SDPStrategy, e.SDPStrategyNote))
		fmt.Fprintf(w, "J₁ of chol(X)     %s\n", f(e.CholXStrategy, e.CholXStrategyNote))
		for _, k := range baselineOrder(e.Baselines) {
			fmt.Fprintf(w, "J₁ of %-11s %.8g\n", k, e.Baselines[k])
		}
	}
}

// baselineOrder lists the baselines of an exact report in mechanism/strategy's
// registry order, then the rest (the Low-Rank Mechanism's L) by name, so the
// text shows every baseline the JSON carries, in a stable order.
func baselineOrder(m map[string]float64) []string {
	names := make([]string, 0, len(m))
	for _, b := range strategy.Baselines() {
		if _, ok := m[b.Name]; ok {
			names = append(names, b.Name)
		}
	}
	var rest []string
	for k := range m {
		if !slices.Contains(names, k) {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	return append(names, rest...)
}
