package bench

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/dpsolve/dpsolve/mechanism/mf"
)

// The structured families' reference peer: jax_privacy's BLT optimizer and
// banded Toeplitz optimizer reimplemented with numpy/scipy (see the
// script's doc for its loss and its differences from jax_privacy).
//
//go:embed peers/blt_ref.py
var bltPeerScript []byte

// mfStructuredPeerRun is one run of the structured reference peer
// (bench/peers/blt_ref.py) on a structured case, as its JSON report gives
// it, with dpsolve's own score of the strategy it returned.
type mfStructuredPeerRun struct {
	// Family is "blt" or "toeplitz".
	Family string `json:"family"`
	// Loss is the peer's loss: mean (or max) per-step squared error ×
	// sens², per unit σ², by its own scoring code.
	Loss float64 `json:"loss"`
	// Buffers is the BLT's d; Bands the banded strategy's coefficients.
	Buffers int `json:"buffers"`
	Bands   int `json:"bands"`
	// BLTFile holds a BLT's decays and scales (C's and C⁻¹'s, blt.json's
	// layout); Coefs a banded strategy's coefficients (c₀ first; the peer
	// scales them to unit norm).
	mf.BLTFile
	Coefs []float64 `json:"coefs"`
	// Steps and Evaluations count the peer's optimizer steps and loss
	// evaluations over all buffer counts.
	Steps       int `json:"steps"`
	Evaluations int `json:"evaluations"`
	// Stop is why the peer stopped: "gain<1%" (a further buffer gained
	// less than 1%), "max-buffers", "max-steps" (banded: its 250 steps)
	// or "time" (its time cap: the best BLT found so far).
	Stop string `json:"stop"`
	// Seconds and CPUSeconds time the peer's optimization (its process's
	// start and imports excluded, as dpsolve's own figures exclude them).
	Seconds    float64 `json:"seconds"`
	CPUSeconds float64 `json:"cpu_seconds"`
	// Rescored is the peer's strategy scored by dpsolve (mf.BLT.Evaluate,
	// or mf.EvaluateToeplitz of the banded coefficients): the same number
	// as Loss when both sides measure the same quantity. RescoreError says
	// why dpsolve refused to score it (its sensitivity is certified only
	// for non-negative, non-increasing coefficients).
	Rescored     float64 `json:"rescored_loss,omitempty"`
	RescoreError string  `json:"rescore_error,omitempty"`
}

// mfReference holds the reference optimizer's figures quoted in issue #36
// (a port of jax_privacy's BLT / banded Toeplitz optimizers, one thread):
// loss and seconds by case.
var mfReference = map[string][2]float64{
	"blt n=2052 b=342 k=6 prefix":         {84.32, 12},
	"blt n=10000 b=1000 k=10 prefix":      {212.7, 31},
	"blt n=100000 b=10000 k=10 prefix":    {284.7, 851},
	"toeplitz n=2052 b=342 k=6 prefix 64": {160.6, 0},
}

func (c MFCase) refKey() string {
	if c.Error == "max" || c.MaxBuffers != 0 {
		return "" // the issue quotes the default mean loss only
	}
	k := fmt.Sprintf("%s n=%d b=%d k=%d %s", c.Family, c.N, c.MinSep, c.Epochs, c.Workload)
	if c.Family == "toeplitz" {
		k += fmt.Sprintf(" %d", c.Bands)
	}
	return k
}

// bands is a banded Toeplitz case's coefficient count: Bands, or
// min(b, 64).
func (c MFCase) bands() int {
	if c.Bands > 0 {
		return c.Bands
	}
	return min(c.schema().Period(c.N), 64)
}

// errorKind is "mean" or "max".
func (c MFCase) errorKind() string {
	if c.Error == "" {
		return "mean"
	}
	return c.Error
}

// runStructured optimizes a BLT or banded Toeplitz case, bounds it and,
// with a Python interpreter, runs the reference peer on the same case.
func (b *MFBench) runStructured(ctx context.Context, c MFCase, script string) (MFRow, error) {
	tw, err := mf.ParseToeplitzWorkload(c.Workload)
	if err != nil {
		return MFRow{}, err
	}
	row := MFRow{Case: c}
	s := c.schema()
	maxErr := c.errorKind() == "max"
	cpu0 := processCPUSeconds()
	if c.Family == "blt" {
		res, err := mf.OptimizeBLT(ctx, tw, c.N, s, &mf.BLTOptions{MaxBuffers: c.MaxBuffers, Max: maxErr})
		if err != nil {
			return row, err
		}
		row.Seconds, row.Loss, row.Memory, row.Iterations = res.Seconds, res.Loss, res.BLT.Buffers(), res.Iterations
	} else {
		res, err := mf.OptimizeBandedToeplitz(ctx, tw, c.N, c.bands(), s, maxErr)
		if err != nil {
			return row, err
		}
		row.Seconds, row.Loss, row.Memory, row.Iterations = res.Seconds, res.Loss, c.bands(), res.Iterations
	}
	row.CPUSeconds = processCPUSeconds() - cpu0
	bd, err := mf.ToeplitzLowerBound(tw, c.N, s, 0)
	if err != nil {
		return row, err
	}
	row.BoundMean = bd.Mean
	if ref, ok := mfReference[c.refKey()]; ok {
		row.RefLoss, row.RefSeconds = ref[0], ref[1]
	}
	b.logf("mf %+v: loss %.6g (bound %.6g), memory %d, %.3f s (%.3f cpu s)", c, row.Loss, row.BoundMean, row.Memory, row.Seconds, row.CPUSeconds)
	if b.Python == "" {
		return row, nil
	}
	p, err := b.structuredPeer(ctx, c, script)
	if err != nil {
		row.PeerError = err.Error()
		b.logf("  peer: %v", err)
		return row, nil
	}
	p.rescore(c, tw)
	row.StructuredPeer = p
	b.logf("  peer (blt_ref.py, one thread): loss %.6g (dpsolve's scoring: %s), memory %d, %.2f s (%.2f cpu s), %s",
		p.Loss, p.rescoredText(), p.memory(), p.Seconds, p.CPUSeconds, p.Stop)
	return row, nil
}

// structuredPeerArgs is the peer's command line for the case: the same n,
// separation (n/k for a fixed-epoch case, whose patterns are the earliest
// min-separation ones), participations, workload, error and memory, and
// the time cap.
func (b *MFBench) structuredPeerArgs(c MFCase, script string) []string {
	s := c.schema()
	args := []string{"-B", script, "--family", c.Family, "--n", strconv.Itoa(c.N),
		"--min-sep", strconv.Itoa(s.Period(c.N)), "--epochs", strconv.Itoa(c.Epochs),
		"--workload", c.Workload, "--error", c.errorKind()}
	if c.Family == "toeplitz" {
		args = append(args, "--bands", strconv.Itoa(c.bands()))
	} else if c.MaxBuffers > 0 {
		args = append(args, "--max-buffers", strconv.Itoa(c.MaxBuffers))
	}
	if b.MaxSeconds > 0 {
		args = append(args, "--time-limit", strconv.FormatFloat(b.MaxSeconds, 'g', -1, 64))
	}
	if b.Log != nil {
		args = append(args, "--verbose")
	}
	return args
}

// structuredPeer runs blt_ref.py on one thread (OMP_NUM_THREADS and
// OPENBLAS_NUM_THREADS = 1, as the reference figures were taken),
// under its own time cap and, as a backstop, the budget plus a minute.
// Its progress lines go to the log.
func (b *MFBench) structuredPeer(ctx context.Context, c MFCase, script string) (*mfStructuredPeerRun, error) {
	cctx := ctx
	if b.MaxSeconds > 0 {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(ctx, time.Duration((b.MaxSeconds+60)*float64(time.Second)))
		defer cancel()
	}
	cmd := exec.CommandContext(cctx, b.Python, b.structuredPeerArgs(c, script)...)
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1", "OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1", "MKL_NUM_THREADS=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if b.Log != nil {
		cmd.Stderr = io.MultiWriter(&stderr, &prefixWriter{w: b.Log, prefix: "  peer: "})
	}
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(lastLine(stderr.String()))
		if cctx.Err() != nil && ctx.Err() == nil {
			msg = "killed past its time cap + 60 s"
		}
		return nil, fmt.Errorf("structured peer: %v: %s", err, msg)
	}
	var r mfStructuredPeerRun
	if err := json.Unmarshal([]byte(lastLine(string(out))), &r); err != nil {
		return nil, fmt.Errorf("structured peer: unreadable report: %v", err)
	}
	if r.Family != c.Family {
		return nil, fmt.Errorf("structured peer: reported family %q for a %s case", r.Family, c.Family)
	}
	return &r, nil
}

// rescore scores the peer's strategy with dpsolve's evaluation (the BLT
// from the decays and scales of C and C⁻¹ it reported, or the banded
// coefficients with their inverse series), at the case's error kind.
func (p *mfStructuredPeerRun) rescore(c MFCase, tw mf.ToeplitzWorkload) {
	ev, err := p.evaluate(c, tw)
	if err != nil {
		p.RescoreError = err.Error()
		return
	}
	p.Rescored = ev.MeanLoss
	if c.errorKind() == "max" {
		p.Rescored = ev.MaxLoss
	}
}

func (p *mfStructuredPeerRun) evaluate(c MFCase, tw mf.ToeplitzWorkload) (*mf.ToeplitzEvaluation, error) {
	s := c.schema()
	if p.Family == "blt" {
		d := len(p.BufDecay)
		if len(p.OutputScale) != d || len(p.Inverse.BufDecay) != d || len(p.Inverse.OutputScale) != d {
			return nil, errors.New("the peer's BLT has parameter lists of different lengths")
		}
		blt := &mf.BLT{Theta: p.BufDecay, Omega: p.OutputScale, InvTheta: p.Inverse.BufDecay, InvOmega: p.Inverse.OutputScale}
		return blt.Evaluate(tw, c.N, s, false)
	}
	if len(p.Coefs) == 0 || len(p.Coefs) > c.N {
		return nil, fmt.Errorf("the peer returned %d coefficients for n = %d", len(p.Coefs), c.N)
	}
	full := make([]float64, c.N)
	copy(full, p.Coefs)
	r, err := mf.InverseSeries(p.Coefs, c.N)
	if err != nil {
		return nil, err
	}
	return mf.EvaluateToeplitz(tw, full, r, s, false)
}

// memory is the peer's buffers or bands.
func (p *mfStructuredPeerRun) memory() int {
	if p.Family == "toeplitz" {
		return p.Bands
	}
	return p.Buffers
}

// rescoredText is dpsolve's score of the peer's strategy, or why there is
// none.
func (p *mfStructuredPeerRun) rescoredText() string {
	if p.RescoreError != "" {
		return "refused: " + p.RescoreError
	}
	return fmt.Sprintf("%.8g, rel. diff %.0e", p.Rescored, math.Abs(p.Rescored-p.Loss)/p.Loss)
}

// structuredSpeedup is the peer's time over dpsolve's, wall and CPU,
// each marked "≥" when the peer was stopped by its time cap while its
// loss was still above dpsolve's: it had not yet reached dpsolve's
// accuracy, so the ratio is a lower bound. A peer that ran its algorithm
// to its own end gets the plain ratio, whichever loss is lower (the table
// shows both).
func structuredSpeedup(r MFRow) string {
	p := r.StructuredPeer
	if p == nil || !(r.Seconds > 0) {
		return "—"
	}
	at := ""
	if p.Stop == "time" && p.Loss > r.Loss {
		at = "≥ "
	}
	cpu := "—"
	if r.CPUSeconds > 0 {
		cpu = at + ratioText(p.CPUSeconds/r.CPUSeconds)
	}
	return fmt.Sprintf("%s%s; %s", at, ratioText(p.Seconds/r.Seconds), cpu)
}

// ratioText prints a speed-up with three significant digits at most,
// none after the point from 100 on.
func ratioText(x float64) string {
	if x >= 100 {
		return fmt.Sprintf("%.0f×", x)
	}
	return fmt.Sprintf("%.3g×", x)
}

// writeStructuredMarkdown writes the structured rows' table: dpsolve's
// row, the reference peer's run beside it (its loss, dpsolve's score of
// its strategy, its memory, seconds and stop), the speed-ups, and the
// issue's quoted reference figures.
func writeStructuredMarkdown(w io.Writer, rows []MFRow) {
	fmt.Fprintln(w, "| n | b | k | family | workload | error | buffers / bands | loss | bound | ratio | s (cpu s) | peer loss (dpsolve's score of it) | peer buffers / bands | peer s (cpu s) | peer stop | speed-up wall; cpu | issue #36 reference loss / s |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		ref := "—"
		if r.RefLoss > 0 {
			ref = fmt.Sprintf("%.4g / %.0f", r.RefLoss, r.RefSeconds)
			if r.RefSeconds == 0 {
				ref = fmt.Sprintf("%.4g / —", r.RefLoss)
			}
		}
		pl, pm, ps, stop := "—", "—", "—", "—"
		if p := r.StructuredPeer; p != nil {
			pl = fmt.Sprintf("%.8g (%s)", p.Loss, p.rescoredText())
			pm = strconv.Itoa(p.memory())
			ps = fmt.Sprintf("%.2f (%.2f)", p.Seconds, p.CPUSeconds)
			stop = p.Stop
		} else if r.PeerError != "" {
			pl = "error: " + strings.ReplaceAll(r.PeerError, "|", "/")
		}
		fmt.Fprintf(w, "| %d | %d | %d | %s | %s | %s | %d | %.8g | %.6g | %.3f | %.3f (%.3f) | %s | %s | %s | %s | %s | %s |\n",
			r.Case.N, r.Case.schema().Period(r.Case.N), r.Case.Epochs, r.Case.Family, r.Case.Workload, r.Case.errorKind(), r.Memory,
			r.Loss, r.BoundMean, r.Loss/r.BoundMean, r.Seconds, r.CPUSeconds, pl, pm, ps, stop, structuredSpeedup(r), ref)
	}
}

// prefixWriter writes each line it is given to w after prefix.
type prefixWriter struct {
	w      io.Writer
	prefix string
	mid    bool // inside a line
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		if !p.mid {
			if _, err := io.WriteString(p.w, p.prefix); err != nil {
				return 0, err
			}
			p.mid = true
		}
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if _, err := p.w.Write(b); err != nil {
				return 0, err
			}
			break
		}
		if _, err := p.w.Write(b[:i+1]); err != nil {
			return 0, err
		}
		p.mid = false
		b = b[i+1:]
	}
	return n, nil
}
