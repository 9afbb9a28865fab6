package bench

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"

	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	gblas "gonum.org/v1/gonum/blas"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/internal/matio"
	"github.com/dpsolve/dpsolve/mechanism/mf"
	"github.com/dpsolve/dpsolve/status"
)

// The DP-MF peer: projected-gradient L-BFGS on X, the algorithm of
// jax_privacy's matrix_factorization/dense.py (see the script's doc).
//
//go:embed peers/mflbfgs.py
var mfPeerScript []byte

// MFCase is one DP-MF benchmark problem: n steps, a workload spec
// (mf.ParseWorkload) and a schema (Epochs > 0 and MinSep = 0: fixed epoch;
// MinSep > 0: banded).
//
// Family "blt" or "toeplitz" (key family=) makes it a structured case:
// both b and k may be given (b-min-separation with at most k uses), Bands
// (key bands=) is the banded Toeplitz strategy's coefficient count,
// MaxBuffers (key buffers=) caps a BLT's buffers on both sides (0: each
// optimizer's default), and Error (key error=) is the loss: "mean" (the
// default, "" too) or "max" per-step squared error × sens².
type MFCase struct {
	N, Epochs, MinSep int
	Workload          string
	Family            string
	Bands             int
	MaxBuffers        int
	Error             string
}

// Structured reports a BLT or banded Toeplitz case.
func (c MFCase) Structured() bool { return c.Family == "blt" || c.Family == "toeplitz" }

func (c MFCase) schema() mf.Schema {
	if c.MinSep > 0 {
		return mf.Schema{Kind: mf.MinSep, MinSep: c.MinSep, Epochs: c.Epochs}
	}
	return mf.Schema{Kind: mf.FixedEpoch, Epochs: c.Epochs}
}

// ParseMFCases reads "n=512,k=4,workload=prefix;n=512,b=64,workload=momentum:0.9"
// and structured cases such as "n=10000,b=1000,k=10,family=blt".
func ParseMFCases(s string) ([]MFCase, error) {
	var out []MFCase
	for _, part := range strings.Split(s, ";") {
		c := MFCase{Workload: "prefix"}
		for _, kv := range strings.Split(part, ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				if strings.HasPrefix(kv, "cooldown:") { // part of a momentum spec
					c.Workload += "," + kv
					continue
				}
				return nil, fmt.Errorf("mf case %q: want key=value, got %q", part, kv)
			}
			var err error
			switch k {
			case "n":
				c.N, err = strconv.Atoi(v)
			case "k":
				c.Epochs, err = strconv.Atoi(v)
			case "b":
				c.MinSep, err = strconv.Atoi(v)
			case "workload":
				c.Workload = v
			case "family":
				c.Family = v
				if !c.Structured() {
					err = fmt.Errorf("family %q: want blt or toeplitz (the dense and banded solvers are the default)", v)
				}
			case "bands":
				c.Bands, err = strconv.Atoi(v)
			case "buffers":
				c.MaxBuffers, err = strconv.Atoi(v)
			case "error":
				c.Error = v
				if v != "mean" && v != "max" {
					err = fmt.Errorf("error %q: want mean or max", v)
				}
			default:
				err = fmt.Errorf("unknown key %q (want n, k, b, workload, family, bands, buffers, error)", k)
			}
			if err != nil {
				return nil, fmt.Errorf("mf case %q: %w", part, err)
			}
		}
		if !c.Structured() && (c.Bands != 0 || c.MaxBuffers != 0 || c.Error != "") {
			return nil, fmt.Errorf("mf case %q: bands, buffers and error are keys of the structured cases (family=blt or toeplitz)", part)
		}
		if c.Structured() && c.N > 0 && (c.Epochs > 0 || c.MinSep > 0) {
			if c.Bands < 0 || c.MaxBuffers < 0 {
				return nil, fmt.Errorf("mf case %q: bands and buffers must be positive", part)
			}
			out = append(out, c)
			continue
		}
		if c.N <= 0 || (c.Epochs <= 0) == (c.MinSep <= 0) {
			return nil, fmt.Errorf("mf case %q: want n > 0 and exactly one of k, b", part)
		}
		out = append(out, c)
	}
	return out, nil
}

// mfPeerRun is one run of the L-BFGS peer.
type mfPeerRun struct {
	Objective  float64 `json:"objective"`
	Steps      int     `json:"steps"`
	Seconds    float64 `json:"seconds"`
	CPUSeconds float64 `json:"cpu_seconds"`
	// Stop is why the peer stopped: "pg-tol", "target", "time",
	// "max-steps", "line-search" or "not-definite".
	Stop  string  `json:"status"`
	MaxPG float64 `json:"max_pg"`
}

// MFRow is one line of the DP-MF table: dpsolve's certified solve and the
// peer at its default stop (max |projected gradient| ≤ 1e-3) and run until
// it reaches dpsolve's certified objective to 1e-8.
type MFRow struct {
	Case                MFCase
	Seconds, CPUSeconds float64
	// DGEMMSeconds is one n×n DGEMM timed in the same run (median of
	// 5), wall and CPU; DGEMMEq and DGEMMEqCPU divide the solve's wall
	// and CPU seconds by them (the CPU ratio is the steadier one on a
	// shared machine).
	DGEMMSeconds, DGEMMCPUSeconds float64
	DGEMMEq, DGEMMEqCPU           float64
	Iterations, CGSteps           int
	Objective, Bound              float64
	Gap                           float64
	Status                        status.Status
	Phases                        map[string]float64
	Peer, PeerTight               *mfPeerRun
	PeerError, TightNote          string
	// Structured cases: the loss (mean or max per-step error × sens², as
	// Case.Error says), the lower bound on it for every mechanism, the
	// buffers or bands, and the reference optimizer's loss and seconds
	// quoted in issue #36 for this case (one thread; 0 where none).
	Loss, BoundMean     float64
	Memory              int
	RefLoss, RefSeconds float64
	// StructuredPeer is the reference peer's run on a structured case
	// (bench/peers/blt_ref.py), nil when it did not run (PeerError then
	// says why, if it failed).
	StructuredPeer *mfStructuredPeerRun
}

// MFBench runs DP-MF cases; Python is the peer's interpreter ("" skips the
// peer), MaxSeconds each peer run's budget.
type MFBench struct {
	Python     string
	MaxSeconds float64
	Log        io.Writer
}

// Run solves every case with dpsolve and, side by side, the peer.
func (b *MFBench) Run(ctx context.Context, cases []MFCase) ([]MFRow, error) {
	dir, err := os.MkdirTemp("", "dpsolve-mfpeer-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "mflbfgs.py")
	if err := os.WriteFile(script, mfPeerScript, 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "blt_ref.py"), bltPeerScript, 0o644); err != nil {
		return nil, err
	}
	var rows []MFRow
	for _, c := range cases {
		row, err := b.runCase(ctx, c, dir, script)
		if err != nil {
			return rows, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func (b *MFBench) logf(format string, a ...any) {
	if b.Log != nil {
		fmt.Fprintf(b.Log, format+"\n", a...)
	}
}

func (b *MFBench) runCase(ctx context.Context, c MFCase, dir, script string) (MFRow, error) {
	if c.Structured() {
		return b.runStructured(ctx, c, filepath.Join(dir, "blt_ref.py"))
	}
	w, err := mf.ParseWorkload(c.Workload, c.N)
	if err != nil {
		return MFRow{}, err
	}
	row := MFRow{Case: c}
	row.DGEMMSeconds, row.DGEMMCPUSeconds = dgemmWallCPU(c.N, 5)
	cpu0 := processCPUSeconds()
	res, err := mf.Solve(ctx, w, c.schema(), nil)
	if err != nil {
		return row, err
	}
	row.CPUSeconds = processCPUSeconds() - cpu0
	row.Seconds, row.Iterations, row.CGSteps = res.Seconds, res.Iterations, res.CGSteps
	row.Objective, row.Bound, row.Gap, row.Status, row.Phases = res.Objective, res.LowerBound, res.Gap, res.Status, res.Phases
	row.DGEMMEq = row.Seconds / row.DGEMMSeconds
	if row.DGEMMCPUSeconds > 0 {
		row.DGEMMEqCPU = row.CPUSeconds / row.DGEMMCPUSeconds
	}
	b.logf("mf %+v: %.3f s, %.3f cpu s (%.0f DGEMM-eq, %.0f by CPU time), objective %.10g, gap %.2e, phases %s",
		c, row.Seconds, row.CPUSeconds, row.DGEMMEq, row.DGEMMEqCPU, row.Objective, row.Gap, phaseShares(row.Phases, row.Seconds))
	if b.Python == "" {
		return row, nil
	}
	afile := filepath.Join(dir, "a.npy")
	if err := matio.WriteMatrix(afile, w.Matrix()); err != nil {
		return row, err
	}
	base := []string{"-B", script, "--a", afile}
	if c.MinSep > 0 {
		base = append(base, "--bands", strconv.Itoa(c.MinSep))
	} else {
		base = append(base, "--epochs", strconv.Itoa(c.Epochs))
	}
	if b.MaxSeconds > 0 {
		base = append(base, "--max-seconds", strconv.FormatFloat(b.MaxSeconds, 'g', -1, 64))
	}
	if row.Peer, err = b.peer(ctx, base); err != nil {
		row.PeerError = err.Error()
		return row, nil
	}
	b.logf("  peer (pg ≤ 1e-3): %d steps, %.2f s, objective %.10g (%s)", row.Peer.Steps, row.Peer.Seconds, row.Peer.Objective, row.Peer.Stop)
	tight := append(append([]string(nil), base...), "--target", strconv.FormatFloat(row.Objective, 'g', -1, 64))
	if row.PeerTight, err = b.peer(ctx, tight); err != nil {
		row.PeerError = err.Error()
		return row, nil
	}
	b.logf("  peer (to dpsolve's objective, 1e-8): %d steps, %.2f s, objective %.10g (%s)", row.PeerTight.Steps, row.PeerTight.Seconds, row.PeerTight.Objective, row.PeerTight.Stop)
	return row, nil
}

func (b *MFBench) peer(ctx context.Context, args []string) (*mfPeerRun, error) {
	cctx := ctx
	if b.MaxSeconds > 0 {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(ctx, time.Duration((b.MaxSeconds+60)*float64(time.Second)))
		defer cancel()
	}
	cmd := exec.CommandContext(cctx, b.Python, args...)
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("mf peer: %v", err)
	}
	var r mfPeerRun
	if err := json.Unmarshal([]byte(lastLine(string(out))), &r); err != nil {
		return nil, fmt.Errorf("mf peer: unreadable report: %v", err)
	}
	return &r, nil
}

// dgemmWallCPU times samples n×n DGEMMs after one warm-up and returns the
// medians of their wall and process CPU seconds.
func dgemmWallCPU(n, samples int) (wall, cpu float64) {
	r := rand.New(rand.NewPCG(uint64(n), 2)) // timing inputs only
	a, b, c := blas.NewSquare(n), blas.NewSquare(n), blas.NewSquare(n)
	for i := range a.Data {
		a.Data[i], b.Data[i], c.Data[i] = r.Float64()-0.5, r.Float64()-0.5, 1
	}
	blas.Gemm(gblas.NoTrans, gblas.NoTrans, 1, a, b, 0, c)
	ws, cs := make([]float64, samples), make([]float64, samples)
	for i := range ws {
		c0, t0 := processCPUSeconds(), time.Now()
		blas.Gemm(gblas.NoTrans, gblas.NoTrans, 1, a, b, 0, c)
		ws[i], cs[i] = time.Since(t0).Seconds(), processCPUSeconds()-c0
	}
	return median(ws), median(cs)
}

// phaseShares lists the solver's phases, largest first, with their shares
// of the wall time.
func phaseShares(ph map[string]float64, total float64) string {
	names := make([]string, 0, len(ph))
	for k := range ph {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool { return ph[names[i]] > ph[names[j]] })
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%s %.0f%%", k, 100*ph[k]/total)
	}
	return strings.Join(parts, ", ")
}

// WriteMFMarkdown writes the side-by-side table (and the structured
// families' table when there are structured rows).
func WriteMFMarkdown(w io.Writer, rows []MFRow) error {
	fmt.Fprintf(w, "DP-MF, backend %s\n\n", blas.Describe())
	var dense, structured []MFRow
	for _, r := range rows {
		if r.Case.Structured() {
			structured = append(structured, r)
		} else {
			dense = append(dense, r)
		}
	}
	if len(structured) > 0 {
		writeStructuredMarkdown(w, structured)
		if len(dense) == 0 {
			return nil
		}
		fmt.Fprintln(w)
	}
	rows = dense
	fmt.Fprintln(w, "| n | k | b | workload | dpsolve s (cpu s) | DGEMM-eq (by cpu) | it / CG | objective | gap | peer 1e-3: s (cpu s) / steps / objective (status) | peer to 1e-8: s (cpu s) / steps / status | speed-up 1e-3 / 1e-8 (wall; cpu) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		p1, p2, su := "—", "—", "—"
		if r.Peer != nil {
			p1 = fmt.Sprintf("%.2f (%.2f) / %d / %.10g (%s)", r.Peer.Seconds, r.Peer.CPUSeconds, r.Peer.Steps, r.Peer.Objective, r.Peer.Stop)
		}
		if r.PeerTight != nil {
			p2 = fmt.Sprintf("%.2f (%.2f) / %d / %s", r.PeerTight.Seconds, r.PeerTight.CPUSeconds, r.PeerTight.Steps, r.PeerTight.Stop)
		}
		if r.Peer != nil && r.PeerTight != nil {
			at1, at := atLeast(r.Peer.Stop, "pg-tol"), atLeast(r.PeerTight.Stop, "target")
			su = fmt.Sprintf("%s%.1f× / %s%.1f×; %s%.1f× / %s%.1f×", at1, r.Peer.Seconds/r.Seconds, at, r.PeerTight.Seconds/r.Seconds,
				at1, r.Peer.CPUSeconds/r.CPUSeconds, at, r.PeerTight.CPUSeconds/r.CPUSeconds)
		}
		if r.PeerError != "" {
			p1 = "error: " + r.PeerError
		}
		k, b := "—", "—"
		if r.Case.MinSep > 0 {
			b = strconv.Itoa(r.Case.MinSep)
		} else {
			k = strconv.Itoa(r.Case.Epochs)
		}
		fmt.Fprintf(w, "| %d | %s | %s | %s | %.3f (%.3f) | %.0f (%.0f) | %d / %d | %.10g | %.1e | %s | %s | %s |\n",
			r.Case.N, k, b, r.Case.Workload, r.Seconds, r.CPUSeconds, r.DGEMMEq, r.DGEMMEqCPU, r.Iterations, r.CGSteps, r.Objective, r.Gap, p1, p2, su)
	}
	fmt.Fprint(w, "\nPhases of dpsolve's solve (share of its wall time):\n\n")
	fmt.Fprintln(w, "| n | k | b | workload | DGEMM s (cpu s) | phases |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, r := range rows {
		k, b := "—", "—"
		if r.Case.MinSep > 0 {
			b = strconv.Itoa(r.Case.MinSep)
		} else {
			k = strconv.Itoa(r.Case.Epochs)
		}
		fmt.Fprintf(w, "| %d | %s | %s | %s | %.4f (%.4f) | %s |\n", r.Case.N, k, b, r.Case.Workload, r.DGEMMSeconds, r.DGEMMCPUSeconds, phaseShares(r.Phases, r.Seconds))
	}
	return nil
}

// atLeast marks a speed-up as a lower bound when the peer stopped before
// reaching its stopping rule, reached (time budget or step cap).
func atLeast(status, reached string) string {
	if status != reached {
		return "≥ "
	}
	return ""
}
