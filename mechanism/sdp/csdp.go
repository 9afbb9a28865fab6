package sdp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dpsolve/dpsolve/progress"
	"github.com/dpsolve/dpsolve/status"
)

// ErrSolverNotFound is returned by Solve when the csdp executable is absent.
var ErrSolverNotFound = errors.New("sdp: the CSDP solver (csdp) was not found on PATH; " +
	"install it with `sudo apt-get install coinor-csdp` (Debian/Ubuntu) or build it from " +
	"https://github.com/coin-or/Csdp, or export the problem (.dat-s) for another SDPA-format solver")

// ErrMalformedSolution is wrapped by errors about unreadable solution files.
var ErrMalformedSolution = errors.New("malformed CSDP solution")

// SolverError reports a CSDP run that did not end with "Success: SDP solved"
// (exit status 0). Code is CSDP's exit status.
type SolverError struct {
	Code    int
	Message string // CSDP's status line, if it printed one
	Output  string // the last lines of CSDP's output
}

// csdpCodes are CSDP's documented exit statuses (CSDP User's Guide, §"The
// stand-alone solver"); 0 is success.
var csdpCodes = map[int]string{
	1: "CSDP's primal problem (max ⟨F₀,Z⟩) is infeasible: the SDP (min cᵀy) is unbounded below",
	2: "CSDP's dual problem is infeasible: the SDP's constraints cannot be satisfied",
	3: "partial success: a solution was found but not to full accuracy",
	4: "maximum number of iterations reached",
	5: "stuck at the edge of primal feasibility",
	6: "stuck at the edge of dual feasibility",
	7: "lack of progress",
	8: "X, Z or O was singular",
	9: "NaN or Inf values were detected",
}

func (e *SolverError) Error() string {
	what, ok := csdpCodes[e.Code]
	if !ok {
		what = "unexpected exit status"
	}
	s := fmt.Sprintf("sdp: csdp did not solve the problem (exit status %d: %s)", e.Code, what)
	if e.Message != "" {
		s += fmt.Sprintf("; csdp said %q", e.Message)
	}
	if e.Output != "" {
		s += "\ncsdp output (last lines):\n" + e.Output
	}
	return s
}

// Options configures Solve. The zero value (or nil) runs "csdp" from PATH
// with CSDP's default tolerances (1e-8 on primal and dual feasibility and on
// the relative duality gap).
type Options struct {
	// Path is the csdp executable; default: "csdp" looked up on PATH.
	Path string
	// Tol, if positive, sets CSDP's axtol, atytol and objtol.
	Tol float64
	// MaxIter, if positive, sets CSDP's maxiter (default 100).
	MaxIter int
	// Log, if non-nil, receives CSDP's output as it runs.
	Log io.Writer
	// Progress, if non-nil, receives dpsolve's progress events: one with
	// Stage "csdp" per CSDP iteration as CSDP prints it (Step the
	// iteration, Objective CSDP's current cᵀy), and a final one with Done
	// set, the result's Objective, LowerBound and CSDP's status as Note,
	// when Solve returns a result.
	Progress progress.Func
}

// Result is the outcome of a CSDP run.
type Result struct {
	// Solution is the solution file's content; nil if CSDP wrote none.
	Solution *Solution
	// Objective is cᵀy at the returned y: the SDP's value (an upper bound on
	// the minimum when y is feasible).
	Objective float64
	// LowerBound is CSDP's primal objective ⟨F₀, Z⟩, a lower bound on the
	// minimum by weak duality when Z is feasible. NaN if not printed.
	LowerBound float64
	// Status is how CSDP ended, from its exit status (see csdpStatus):
	// status.Converged on success, status.IterationLimit when it reached
	// maxiter, status.Stalled for a partial success or lack of progress,
	// status.Failed otherwise.
	Status status.Status
	// Message is CSDP's status line, e.g. "Success: SDP solved".
	Message string
	// Solver is CSDP's banner, e.g. "CSDP 6.2.0" ("csdp" if it printed none).
	Solver string
	// Seconds is the wall time of the csdp process.
	Seconds float64
	// Output is CSDP's complete output.
	Output string
}

// Solve runs CSDP on p. On exit status 0 it returns the result and a nil
// error. On any other status it returns a *SolverError, together with the
// result when CSDP wrote a readable solution (e.g. status 3, partial
// success). CSDP runs in a fresh temporary directory with its own
// param.csdp, so a param.csdp in the caller's directory has no effect.
func Solve(ctx context.Context, p *Problem, opt *Options) (*Result, error) {
	if opt == nil {
		opt = &Options{}
	}
	res, err := solveCSDP(ctx, p, opt)
	if res != nil && opt.Progress.Enabled() {
		gap := math.NaN()
		if !math.IsNaN(res.LowerBound) && res.Objective != 0 {
			gap = (res.Objective - res.LowerBound) / math.Abs(res.Objective)
		}
		opt.Progress(progress.Event{Stage: "csdp", Objective: res.Objective, Bound: res.LowerBound, Gap: gap,
			Seconds: res.Seconds, Done: true, Note: res.Message})
	}
	return res, err
}

// solveCSDP is Solve without the final progress event.
func solveCSDP(ctx context.Context, p *Problem, opt *Options) (*Result, error) {
	path := opt.Path
	if path == "" {
		path = "csdp"
	}
	exe, err := exec.LookPath(path)
	if err != nil {
		return nil, fmt.Errorf("%w (%v)", ErrSolverNotFound, err)
	}
	dir, err := os.MkdirTemp("", "dpsolve-csdp-")
	if err != nil {
		return nil, fmt.Errorf("sdp: %w", err)
	}
	defer os.RemoveAll(dir)
	var prob bytes.Buffer
	if err := WriteSDPA(&prob, p); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "problem.dat-s"), prob.Bytes(), 0o600); err != nil {
		return nil, fmt.Errorf("sdp: %w", err)
	}
	params := "printlevel=1\n"
	if opt.Tol > 0 {
		t := fmtFloat(opt.Tol)
		params += "axtol=" + t + "\natytol=" + t + "\nobjtol=" + t + "\n"
	}
	if opt.MaxIter > 0 {
		params += "maxiter=" + strconv.Itoa(opt.MaxIter) + "\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "param.csdp"), []byte(params), 0o600); err != nil {
		return nil, fmt.Errorf("sdp: %w", err)
	}

	cmd := exec.CommandContext(ctx, exe, "problem.dat-s", "solution.txt")
	cmd.Dir = dir
	var out bytes.Buffer
	var sink io.Writer = &out
	if opt.Log != nil {
		sink = io.MultiWriter(sink, opt.Log)
	}
	start := time.Now()
	if opt.Progress.Enabled() {
		sink = io.MultiWriter(sink, &iterWriter{f: opt.Progress, start: start})
	}
	cmd.Stdout, cmd.Stderr = sink, sink
	runErr := cmd.Run()
	res := &Result{Seconds: time.Since(start).Seconds(), Output: out.String(), LowerBound: math.NaN()}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("sdp: csdp interrupted: %w", ctx.Err())
	}
	code := 0
	if runErr != nil {
		var ee *exec.ExitError
		if !errors.As(runErr, &ee) || ee.ExitCode() < 0 {
			return nil, fmt.Errorf("sdp: running %s: %w", exe, runErr)
		}
		code = ee.ExitCode()
	}
	parseCSDPOutput(res)
	res.Status = csdpStatus(code)

	if f, err := os.Open(filepath.Join(dir, "solution.txt")); err == nil {
		sol, rerr := ReadSolution(f, p)
		f.Close()
		if rerr != nil && code == 0 {
			return nil, rerr
		}
		if rerr == nil {
			res.Solution = sol
			for i, c := range p.C {
				res.Objective += c * sol.Y[i]
			}
		}
	} else if code == 0 {
		return nil, fmt.Errorf("sdp: csdp reported success but wrote no solution file: %w", err)
	}
	if code != 0 {
		serr := &SolverError{Code: code, Message: res.Message, Output: lastLines(res.Output, 12)}
		if res.Solution == nil {
			return nil, serr
		}
		return res, serr
	}
	return res, nil
}

// csdpStatus maps CSDP's exit status (csdpCodes) to a Status.
func csdpStatus(code int) status.Status {
	switch code {
	case 0:
		return status.Converged
	case 4:
		return status.IterationLimit
	case 3, 7:
		return status.Stalled
	}
	return status.Failed
}

// parseCSDPOutput extracts the banner, the status line and CSDP's primal
// objective.
func parseCSDPOutput(res *Result) {
	res.Solver = "csdp"
	for _, line := range strings.Split(res.Output, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "CSDP ") && res.Solver == "csdp":
			res.Solver = t
		case strings.HasPrefix(t, "Success:"), strings.HasPrefix(t, "Partial Success"),
			strings.HasPrefix(t, "Failure:"), strings.HasPrefix(t, "Declaring"):
			if res.Message == "" {
				res.Message = t
			}
		case strings.HasPrefix(t, "Primal objective value:"):
			if v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimPrefix(t, "Primal objective value:")), 64); err == nil {
				res.LowerBound = v
			}
		}
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Solution is a CSDP solution file: the vector y (the SDP's variables), the
// slack Z = Σ yᵢFᵢ − F₀ and CSDP's primal matrix X, block by block.
type Solution struct {
	Y []float64
	Z []Block
	X []Block
}

// Block is one diagonal block of a block-diagonal symmetric matrix: for a
// dense block Data is the full Size×Size matrix row-major; for a diagonal
// block (Diag) Data holds the Size diagonal entries.
type Block struct {
	Size int
	Diag bool
	Data []float64
}

// At returns entry (i, j) (0-based) of the block.
func (b Block) At(i, j int) float64 {
	if b.Diag {
		if i != j {
			return 0
		}
		return b.Data[i]
	}
	return b.Data[i*b.Size+j]
}

// ReadSolution parses a CSDP solution file for problem p: a first line with
// the len(p.C) entries of y, then lines "k b i j v" giving entry (i, j) of
// block b of Z (k = 1) or X (k = 2). Every malformed input (wrong count,
// non-number, index out of range, non-finite value) is an error wrapping
// ErrMalformedSolution that names the line.
func ReadSolution(r io.Reader, p *Problem) (*Solution, error) {
	bad := func(line int, format string, a ...any) error {
		return fmt.Errorf("sdp: %w: line %d: %s", ErrMalformedSolution, line, fmt.Sprintf(format, a...))
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<30)
	sol := &Solution{}
	newBlocks := func() []Block {
		bs := make([]Block, len(p.Blocks))
		for i, k := range p.Blocks {
			if k < 0 {
				bs[i] = Block{Size: -k, Diag: true, Data: make([]float64, -k)}
			} else {
				bs[i] = Block{Size: k, Data: make([]float64, k*k)}
			}
		}
		return bs
	}
	sol.Z, sol.X = newBlocks(), newBlocks()
	lineNo := 0
	for sc.Scan() {
		lineNo++
		f := strings.Fields(sc.Text())
		if lineNo == 1 {
			if len(f) != len(p.C) {
				return nil, bad(1, "y has %d entries, the problem has %d variables", len(f), len(p.C))
			}
			sol.Y = make([]float64, len(f))
			for i, s := range f {
				v, err := strconv.ParseFloat(s, 64)
				if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
					return nil, bad(1, "y[%d] = %q is not a finite number", i+1, s)
				}
				sol.Y[i] = v
			}
			continue
		}
		if len(f) == 0 {
			continue
		}
		if len(f) != 5 {
			return nil, bad(lineNo, "want \"matrix block i j value\", got %q", truncate(sc.Text(), 80))
		}
		var ix [4]int
		for k := 0; k < 4; k++ {
			v, err := strconv.Atoi(f[k])
			if err != nil {
				return nil, bad(lineNo, "%q is not an integer", f[k])
			}
			ix[k] = v
		}
		v, err := strconv.ParseFloat(f[4], 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, bad(lineNo, "value %q is not a finite number", f[4])
		}
		var blocks []Block
		switch ix[0] {
		case 1:
			blocks = sol.Z
		case 2:
			blocks = sol.X
		default:
			return nil, bad(lineNo, "matrix number %d is neither 1 (Z) nor 2 (X)", ix[0])
		}
		if ix[1] < 1 || ix[1] > len(blocks) {
			return nil, bad(lineNo, "block %d outside 1..%d", ix[1], len(blocks))
		}
		b := blocks[ix[1]-1]
		i, j := ix[2]-1, ix[3]-1
		if i < 0 || j < 0 || i >= b.Size || j >= b.Size {
			return nil, bad(lineNo, "position (%d,%d) outside block %d of size %d", ix[2], ix[3], ix[1], b.Size)
		}
		if b.Diag {
			if i != j {
				return nil, bad(lineNo, "off-diagonal position (%d,%d) in diagonal block %d", ix[2], ix[3], ix[1])
			}
			b.Data[i] = v
		} else {
			b.Data[i*b.Size+j] = v
			b.Data[j*b.Size+i] = v
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("sdp: reading CSDP solution: %w", err)
	}
	if lineNo == 0 {
		return nil, fmt.Errorf("sdp: %w: empty file", ErrMalformedSolution)
	}
	return sol, nil
}
