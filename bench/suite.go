package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/dpsolve/dpsolve/internal/reference"
	"github.com/dpsolve/dpsolve/mechanism/plan"
	"github.com/dpsolve/dpsolve/mechanism/plan/planner"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/newton"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

// SuiteRow is one comparison of the standing suite: dpsolve's figure
// (Ours) against a peer's or a reference's (Peer) in one unit (Metric:
// "s" for wall seconds, "CPU s" for this process's CPU seconds, "error" for a plan's objective, "sq error" for a
// release's mean total squared error against the one it promised), Ratio =
// Ours/Peer (below 1: dpsolve is faster or more accurate; 1 for a
// calibrated release). SD is the ratio's stated sampling noise (one
// standard deviation; calibration rows only). Fail says why a row failed
// its own check (a calibration outside calibrationSDs sd). Err says why a
// row has no ratio (NaN).
type SuiteRow struct {
	Area   string  `json:"area"`
	Case   string  `json:"case"`
	Versus string  `json:"versus"`
	Metric string  `json:"metric"`
	Ours   float64 `json:"ours"`
	Peer   float64 `json:"peer"`
	Ratio  Num     `json:"ratio"`
	SD     float64 `json:"sd,omitempty"`
	Fail   string  `json:"fail,omitempty"`
	Err    string  `json:"err,omitempty"`
}

// SuiteConfig configures Suite: Python is the peers' interpreter ("" skips
// the Python peers, with a note in their rows), PeerSeconds each peer
// run's budget (0: 120 s), Log receives one line per row.
type SuiteConfig struct {
	Python      string
	PeerSeconds float64
	Log         io.Writer
	// Repetitions is the calibration rows' R (0: 200).
	Repetitions int
}

// Suite runs the comparisons the repository can run by itself, in one
// to two minutes on a 2-core machine: the dense core (newton) against
// its fixed-point and L-BFGS peers on Prefix and AllRange n = 512 (wall
// time to equal certified gap, one run); the DP-MF solver against its
// L-BFGS peer (n = 256, 4 epochs, prefix; wall time to dpsolve's
// objective, one run); the plan portfolio against the marginals template
// alone (CPU time, the fastest of nine alternating runs; it must stay
// ≤ 1.2×), the
// marginals plan against the ResidualPlanner closed form
// (reference.Marginals3Way4x5), and pure kron against HDMM's p-Identity
// peer on Prefix n = 64 (error), and releases' calibration (see
// suiteCalibration). A cancelled ctx stops it with the rows so far. The
// report is never nil; it has the machine and the run's wall and CPU
// seconds.
func Suite(ctx context.Context, cfg SuiteConfig) (*SuiteReport, error) {
	rep := &SuiteReport{Machine: DescribeMachine()}
	t0, c0, p0 := time.Now(), processCPUSeconds(), childrenCPUSeconds()
	rows, err := suite(ctx, cfg)
	rep.Rows, rep.Seconds = rows, time.Since(t0).Seconds()
	rep.CPUSeconds, rep.PeerCPUSeconds = processCPUSeconds()-c0, childrenCPUSeconds()-p0
	return rep, err
}

// suite runs the suite's rows.
func suite(ctx context.Context, cfg SuiteConfig) ([]SuiteRow, error) {
	if cfg.PeerSeconds == 0 {
		cfg.PeerSeconds = 120
	}
	var rows []SuiteRow
	add := func(r SuiteRow) {
		if r.Err == "" && r.Peer > 0 {
			r.Ratio = Num(r.Ours / r.Peer)
		} else {
			r.Ratio = Num(math.NaN())
		}
		rows = append(rows, r)
		if cfg.Log != nil {
			fmt.Fprintf(cfg.Log, "suite: %s %s vs %s: %.4g / %.4g %s = %.3g %s%s\n", r.Area, r.Case, r.Versus, r.Ours, r.Peer, r.Metric, r.Ratio, r.Fail, r.Err)
		}
	}
	var peers *Peers
	peerErr := "peers not run (no Python interpreter given)"
	if cfg.Python != "" {
		p, err := NewPeers(ctx, cfg.Python)
		if err != nil {
			peerErr = err.Error()
		} else {
			defer p.Close()
			p.MaxSeconds, peers = cfg.PeerSeconds, p
		}
	}
	if err := suiteDense(ctx, peers, peerErr, add); err != nil {
		return rows, err
	}
	if err := suiteMF(ctx, cfg, peers != nil, peerErr, add); err != nil {
		return rows, err
	}
	if err := suitePlans(ctx, peers, peerErr, add); err != nil {
		return rows, err
	}
	reps := cfg.Repetitions
	if reps == 0 {
		reps = 200
	}
	if err := suiteCalibration(ctx, reps, add); err != nil {
		return rows, err
	}
	return rows, ctx.Err()
}

// suiteDense compares newton with the dense peers at equal certified gap.
func suiteDense(ctx context.Context, peers *Peers, peerErr string, add func(SuiteRow)) error {
	solvers := []Solver{Newton{Method: newton.MethodNewton}}
	if peers != nil {
		for _, name := range PeerNames {
			s, _ := peers.Solver(name)
			solvers = append(solvers, s)
		}
	}
	c, err := Compare(ctx, Config{Workloads: []string{"prefix", "allrange"}, Ns: []int{512}, Methods: solvers, Repeat: 1})
	if c == nil {
		return err
	}
	for _, w := range []string{"prefix", "allrange"} {
		var ours float64
		for _, r := range c.Summary {
			if r.Workload == w && r.Method == "newton" {
				ours = float64(r.Seconds)
			}
		}
		for _, name := range PeerNames {
			row := SuiteRow{Area: "dense core", Case: w + " n=512", Versus: name, Metric: "s", Ours: ours, Err: peerErr}
			for _, r := range c.Summary {
				if r.Workload == w && r.Method == name {
					row.Err = ""
					row.Peer = float64(r.Seconds)
					if r.SpeedUp.Valid() && r.SpeedUp > 0 {
						// Time to the same gap: T_peer/T_newton(g).
						row.Peer = ours * float64(r.SpeedUp)
					} else {
						row.Err = "the peer did not reach newton's gap"
					}
				}
			}
			add(row)
		}
	}
	return err
}

// suiteMF compares the DP-MF solver with its L-BFGS peer.
func suiteMF(ctx context.Context, cfg SuiteConfig, withPeer bool, peerErr string, add func(SuiteRow)) error {
	cases, err := ParseMFCases("n=256,k=4,workload=prefix")
	if err != nil {
		return err
	}
	b := &MFBench{MaxSeconds: cfg.PeerSeconds}
	if withPeer {
		b.Python = cfg.Python
	}
	rs, err := b.Run(ctx, cases)
	if err != nil {
		return err
	}
	for _, r := range rs {
		row := SuiteRow{Area: "DP-MF", Case: "prefix n=256 k=4", Versus: "L-BFGS peer to our objective", Metric: "s", Ours: r.Seconds, Err: peerErr}
		switch {
		case !withPeer:
		case r.PeerTight != nil:
			row.Err, row.Peer = "", r.PeerTight.Seconds
			if r.PeerTight.Stop != "target" {
				row.Err = "the peer stopped (" + r.PeerTight.Stop + ") before our objective"
			}
		default:
			row.Err = "peer: " + r.PeerError + r.TightNote
		}
		add(row)
	}
	return nil
}

// suitePlans compares plans: the portfolio against the template it
// returns, the marginals plan against the closed-form optimum, pure kron
// against the p-Identity peer.
func suitePlans(ctx context.Context, peers *Peers, peerErr string, add func(SuiteRow)) error {
	// The portfolio's overhead on a certified marginals workload: all
	// ≤3-way marginals of 60 binary attributes, best vs marginals alone
	// (the fastest of nine runs each, to damp a shared machine's noise).
	var attrs []string
	for i := 0; i < 60; i++ {
		attrs = append(attrs, fmt.Sprintf(`{"name": "a%d", "size": 2}`, i))
	}
	w, err := domain.ParseSpec(strings.NewReader(`{"domain": [`+strings.Join(attrs, ",")+`], "workload": [{"name": "m", "marginals": {"upto": 3}}]}`), ".", workload.Blocks)
	if err != nil {
		return err
	}
	// CPU seconds of this process (the planners run nothing else), which
	// a shared machine's wait for a core does not inflate; the two sides
	// alternate, so that a burst of contention hits both alike.
	tb, tm := math.Inf(1), math.Inf(1)
	var ob, om float64
	for rep := 0; rep < 9; rep++ {
		for _, side := range []struct {
			name     string
			sec, obj *float64
		}{{"best", &tb, &ob}, {"marginals", &tm, &om}} {
			c0 := processCPUSeconds()
			r, err := planner.Run(ctx, w, side.name, plan.Options{})
			if err != nil {
				return err
			}
			*side.sec, *side.obj = math.Min(*side.sec, processCPUSeconds()-c0), r.Objective
		}
	}
	row := SuiteRow{Area: "plan", Case: "≤3-way marginals, 60 binary attributes", Versus: "--template marginals", Metric: "CPU s", Ours: tb, Peer: tm}
	if math.Abs(ob-om) > 1e-9*om {
		row.Err = fmt.Sprintf("the portfolio's plan (%.12g) is not the marginals plan (%.12g)", ob, om)
	}
	add(row)

	// ResidualPlanner's closed form: all 3-way marginals of five size-4
	// attributes.
	w5, err := domain.ParseSpec(strings.NewReader(`{"domain": [{"name": "a", "size": 4}, {"name": "b", "size": 4}, {"name": "c", "size": 4}, {"name": "d", "size": 4}, {"name": "e", "size": 4}],
	  "workload": [{"name": "m", "marginals": {"k": 3}}]}`), ".", workload.Blocks)
	if err != nil {
		return err
	}
	r5, err := planner.Run(ctx, w5, "best", plan.Options{})
	if err != nil {
		return err
	}
	add(SuiteRow{Area: "plan", Case: "3-way marginals, 5 attributes of 4", Versus: "ResidualPlanner closed form", Metric: "error", Ours: r5.Objective, Peer: reference.Marginals3Way4x5})

	// HDMM's p-Identity (Laplace) against pure kron on Prefix n = 64.
	prow := SuiteRow{Area: "plan", Case: "prefix n=64, pure ε", Versus: "HDMM p-Identity peer (p = 4)", Metric: "error", Err: peerErr}
	wp, err := domain.ParseSpec(strings.NewReader(`{"domain": [{"name": "a", "size": 64}], "workload": [{"name": "p", "product": {"a": "prefix"}}]}`), ".", workload.Blocks)
	if err != nil {
		return err
	}
	rk, err := planner.Run(ctx, wp, "kron", plan.Options{Noise: calibrate.Laplace})
	if err != nil {
		return err
	}
	prow.Ours = rk.Objective
	if peers != nil {
		g, err := wp.DenseGram(64)
		if err != nil {
			return err
		}
		o, err := peers.pIdentity(ctx, g, 4, 1000, 1)
		if err != nil {
			prow.Err = err.Error()
		} else {
			// p-Identity reports tr(G (LᵀL)⁻¹) at L1 sensitivity 1, the
			// unit of the pure plan's objective.
			prow.Err, prow.Peer = "", o.Objective
		}
	}
	add(prow)
	return nil
}

// WriteSuiteTable writes the suite as one Markdown table headed by the
// machine (CPU, cores, kernels with their OpenBLAS core) and the run's
// wall and CPU seconds.
func WriteSuiteTable(w io.Writer, rep *SuiteReport) error {
	m, rows := rep.Machine, rep.Rows
	fmt.Fprintf(w, "dpsolve bench --suite: %s, %d cores, kernels %s, %s; %.0f s wall, %.1f s of CPU (%.1f s dpsolve, %.1f s the peers)\n\n",
		m.CPU, m.Cores, m.Backend, m.Date, rep.Seconds, rep.CPUSeconds+rep.PeerCPUSeconds, rep.CPUSeconds, rep.PeerCPUSeconds)
	fmt.Fprintln(w, "| area | case | versus | metric | dpsolve | peer | dpsolve / peer |")
	fmt.Fprintln(w, "|---|---|---|---|---:|---:|---:|")
	for _, r := range rows {
		ratio := "—"
		if !math.IsNaN(float64(r.Ratio)) {
			ratio = fmt.Sprintf("%.3g", float64(r.Ratio))
			if r.SD > 0 {
				ratio += fmt.Sprintf(" ± %.2g", r.SD)
			}
		}
		if r.Fail != "" {
			ratio = "**" + ratio + " " + r.Fail + "**"
		}
		peer := "—"
		if r.Peer > 0 {
			peer = fmt.Sprintf("%.4g", r.Peer)
		}
		note := ""
		if r.Err != "" {
			note = " (" + r.Err + ")"
		}
		if _, err := fmt.Fprintf(w, "| %s | %s | %s%s | %s | %.4g | %s | %s |\n", r.Area, r.Case, r.Versus, note, r.Metric, r.Ours, peer, ratio); err != nil {
			return err
		}
	}
	return nil
}
