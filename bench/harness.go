package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"

	"github.com/dpsolve/dpsolve/internal/matio"
	"github.com/dpsolve/dpsolve/model/workload"
)

// GapSource names the code every reported gap comes from.
const GapSource = "newton.Certificate"

// Config describes a comparison: which problems, which methods, how often.
type Config struct {
	// Workloads are built-in workload names (workload.Builtin).
	Workloads []string
	// Ns are the domain sizes.
	Ns []int
	// Methods are the solvers, run in this order in every repetition. The
	// one named Reference runs first regardless, so that its certified lower
	// bound can be handed to the others.
	Methods []Solver
	// Reference is the method speed-ups are computed for (default "newton").
	Reference string
	// Repeat is the number of repetitions (default 3).
	Repeat int
	// Tol is the target certified relative gap (default 1e-8).
	Tol float64
	// DGEMMSamples is the number of DGEMM timings per n before the first
	// repetition (default 3); each repetition adds one more.
	DGEMMSamples int
	// SaveX, if set, is a directory that receives every returned X as
	// <method>-<workload>-<n>-<rep>.npy (RunRecord.XFile), for audit.
	SaveX string
	// Log receives one progress line per run (nil: none).
	Log io.Writer
}

// RunRecord is one run of one method on one problem.
type RunRecord struct {
	Workload string `json:"workload"`
	N        int    `json:"n"`
	Method   string `json:"method"`
	// Rep is the repetition, from 1.
	Rep int `json:"rep"`
	// Seconds is the solve's wall time.
	Seconds Num `json:"seconds"`
	// DGEMMEquivalents is Seconds over the median n×n DGEMM time.
	DGEMMEquivalents Num `json:"dgemm_equivalents"`
	// Objective, LowerBound and Gap are recomputed by newton.Certificate on
	// the returned X (see GapSource).
	Objective  Num `json:"objective"`
	LowerBound Num `json:"lower_bound"`
	Gap        Num `json:"gap"`
	// GapSource is always GapSource for a successful run.
	GapSource string `json:"gap_source"`
	// GapBest is (Objective − L*)/Objective, L* the best certified lower
	// bound over all runs of this problem.
	GapBest Num `json:"gap_best"`
	// ReportedObjective and ReportedGap are the method's own claims.
	ReportedObjective Num    `json:"reported_objective"`
	ReportedGap       Num    `json:"reported_gap"`
	Iterations        int    `json:"iterations"`
	Status            string `json:"status"`
	// Error is non-empty when the run or its certification failed; the
	// numbers are then null.
	Error string `json:"error,omitempty"`
	// XFile is where the returned X was saved (Config.SaveX), if anywhere.
	XFile string       `json:"x_file,omitempty"`
	Trace []TracePoint `json:"trace"`
	// Phases is the method's wall time per phase in seconds, and
	// PhaseDGEMMEquivalents the same over the median DGEMM time (methods
	// that report phases: newton).
	Phases                map[string]float64 `json:"phases,omitempty"`
	PhaseDGEMMEquivalents map[string]Num     `json:"phase_dgemm_equivalents,omitempty"`
}

func (r *RunRecord) ok() bool { return r.Error == "" }

// DGEMMTiming is the DGEMM reference at one n.
type DGEMMTiming struct {
	N int `json:"n"`
	// Seconds is the median over Samples timings.
	Seconds Num `json:"seconds"`
	GFlops  Num `json:"gflops"`
	Samples int `json:"samples"`
}

// Comparison is the outcome of Compare.
type Comparison struct {
	// Reference is the method speed-ups are computed for; Tol the target gap.
	Reference string        `json:"reference"`
	Tol       float64       `json:"tol"`
	DGEMM     []DGEMMTiming `json:"dgemm"`
	Runs      []RunRecord   `json:"runs"`
	Summary   []SummaryRow  `json:"summary"`
	// BestBounds has L*, the largest certified lower bound, per problem.
	BestBounds []BestBound `json:"best_bounds"`
	// FastestPeer has, per problem, the peer with the smallest speed-up of
	// the reference over it (the fastest peer at equal gap).
	FastestPeer []PeerSpeedUp `json:"fastest_peer"`
}

// PeerSpeedUp is the reference's speed-up over one peer on one problem.
type PeerSpeedUp struct {
	Workload string `json:"workload"`
	N        int    `json:"n"`
	Peer     string `json:"peer"`
	SpeedUp  Num    `json:"speedup"`
	// Gap is the gap at which the speed-up was measured (SummaryRow.SpeedUpGap).
	Gap Num `json:"gap"`
}

// BestBound is the largest certified lower bound found for a problem.
type BestBound struct {
	Workload string `json:"workload"`
	N        int    `json:"n"`
	Value    Num    `json:"value"`
	// Method is the run whose X gave it.
	Method string `json:"method"`
}

func (c *Config) defaults() error {
	if c.Repeat == 0 {
		c.Repeat = 3
	}
	if c.Tol == 0 {
		c.Tol = 1e-8
	}
	if c.DGEMMSamples == 0 {
		c.DGEMMSamples = 3
	}
	if c.Reference == "" {
		c.Reference = "newton"
	}
	switch {
	case c.Repeat < 1:
		return fmt.Errorf("repeat must be at least 1, got %d", c.Repeat)
	case !(c.Tol > 0 && c.Tol < 1):
		return fmt.Errorf("tolerance must be in (0, 1), got %g", c.Tol)
	case c.DGEMMSamples < 1:
		return fmt.Errorf("DGEMM samples must be at least 1, got %d", c.DGEMMSamples)
	case len(c.Workloads) == 0 || len(c.Ns) == 0:
		return errors.New("need at least one workload and one n")
	case len(c.Methods) == 0:
		return errors.New("need at least one method")
	}
	for _, n := range c.Ns {
		if n < 2 {
			return fmt.Errorf("n must be at least 2, got %d", n)
		}
	}
	for _, w := range c.Workloads {
		if _, err := workload.Parse(w, c.Ns[0]); err != nil {
			return err
		}
	}
	seen := map[string]bool{}
	for _, m := range c.Methods {
		if seen[m.name()] {
			return fmt.Errorf("method %q listed twice", m.name())
		}
		seen[m.name()] = true
	}
	return nil
}

func (c *Config) logf(format string, a ...any) {
	if c.Log != nil {
		fmt.Fprintf(c.Log, format+"\n", a...)
	}
}

// Compare runs every method on every problem, interleaved and repeated, and
// summarizes. A method's failure is recorded in its RunRecord and does not
// stop the comparison; a cancelled ctx does, returning what ran so far.
func Compare(ctx context.Context, cfg Config) (*Comparison, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	methods := slices.Clone(cfg.Methods)
	slices.SortStableFunc(methods, func(a, b Solver) int {
		switch {
		case a.name() == cfg.Reference && b.name() != cfg.Reference:
			return -1
		case b.name() == cfg.Reference && a.name() != cfg.Reference:
			return 1
		}
		return 0
	})
	out := &Comparison{Reference: cfg.Reference, Tol: cfg.Tol}
	dgemm := map[int][]float64{} // DGEMM timings per n
	var order []int
	var err error
outer:
	for _, wname := range cfg.Workloads {
		for _, n := range cfg.Ns {
			w, werr := workload.Parse(wname, n) // validated by defaults (n may matter: marginals)
			if werr != nil {
				return out, werr
			}
			p := problem{Workload: wname, V: w.Gram(), Tol: cfg.Tol}
			if _, seen := dgemm[n]; !seen {
				order = append(order, n)
				dgemm[n] = dgemmTimes(n, cfg.DGEMMSamples)
			}
			for rep := 1; rep <= cfg.Repeat; rep++ {
				dgemm[n] = append(dgemm[n], dgemmTimes(n, 1)...)
				lower := math.NaN()
				for _, m := range methods {
					if err = ctx.Err(); err != nil {
						break outer
					}
					r := runOne(ctx, m, p, lower, rep, cfg.SaveX)
					if m.name() == cfg.Reference && r.ok() {
						lower = float64(r.LowerBound)
					}
					out.Runs = append(out.Runs, r)
					if r.ok() {
						cfg.logf("%s n=%d rep %d/%d %-10s %9.3fs  objective %.10g  certified gap %.2e  %d iterations, %s",
							wname, n, rep, cfg.Repeat, m.name(), float64(r.Seconds), float64(r.Objective), float64(r.Gap), r.Iterations, r.Status)
					} else {
						cfg.logf("%s n=%d rep %d/%d %-10s failed: %s", wname, n, rep, cfg.Repeat, m.name(), r.Error)
					}
				}
			}
		}
	}
	for _, n := range order {
		s, fn := median(dgemm[n]), float64(n)
		out.DGEMM = append(out.DGEMM, DGEMMTiming{N: n, Seconds: Num(s), GFlops: Num(2 * fn * fn * fn / s / 1e9), Samples: len(dgemm[n])})
	}
	out.Summarize()
	return out, err
}

// runOne runs m on p and re-certifies its X.
func runOne(ctx context.Context, m Solver, p problem, lower float64, rep int, saveDir string) RunRecord {
	nan := Num(math.NaN())
	r := RunRecord{Workload: p.Workload, N: p.n(), Method: m.name(), Rep: rep,
		Seconds: nan, DGEMMEquivalents: nan, Objective: nan, LowerBound: nan, Gap: nan, GapBest: nan,
		ReportedObjective: nan, ReportedGap: nan}
	o, err := m.solve(ctx, p, lower)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	r.Seconds, r.ReportedObjective, r.ReportedGap = Num(o.Seconds), Num(o.Objective), Num(o.Gap)
	r.Iterations, r.Status, r.Trace, r.Phases = o.Iterations, o.Status, o.Trace, o.Phases
	f, g, gap, err := certify(p.V, o.X)
	if err != nil {
		r.Error = "certifying the returned X: " + err.Error()
		return r
	}
	r.Objective, r.LowerBound, r.Gap, r.GapSource = Num(f), Num(g), Num(gap), GapSource
	if saveDir != "" {
		path := filepath.Join(saveDir, fmt.Sprintf("%s-%s-%d-%d.npy", sanitize(r.Method), sanitize(r.Workload), r.N, rep))
		if err := matio.WriteMatrix(path, o.X); err != nil {
			r.Error = "saving X: " + err.Error()
			return r
		}
		r.XFile = path
	}
	return r
}
