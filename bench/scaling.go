package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/newton"
)

// ScalingConfig describes a scaling sweep of dpsolve's default method.
type ScalingConfig struct {
	// Workloads are built-in workload names; Ns the sizes (run ascending).
	Workloads []string
	Ns        []int
	// Backends to sweep (default: every backend compiled in, blas.Backends).
	Backends []blas.Backend
	// MaxN caps n per backend name (e.g. {"purego": 2048}); absent means no cap.
	MaxN map[string]int
	// Repeat is the number of runs per point (default 1); Tol the target gap
	// (default 1e-8).
	Repeat int
	Tol    float64
	// Log receives one progress line per run (nil: none).
	Log io.Writer
}

// ScalingRow is one point of the sweep.
type ScalingRow struct {
	Backend  string `json:"backend"`
	Core     string `json:"core"`
	Threads  int    `json:"threads"`
	Workload string `json:"workload"`
	N        int    `json:"n"`
	Runs     int    `json:"runs"`
	// Seconds (median) and DGEMMSeconds (median of 3) give DGEMMEquivalents.
	Seconds          Num `json:"seconds"`
	DGEMMSeconds     Num `json:"dgemm_seconds"`
	DGEMMEquivalents Num `json:"dgemm_equivalents"`
	// Gap is the largest certified gap (newton.Certificate) over the runs.
	Gap        Num    `json:"gap"`
	Iterations Num    `json:"iterations"`
	Status     string `json:"status"`
	// PeakRSS is the largest peak resident set size, in bytes, of the
	// process while building V and solving; BaselineRSS the RSS just before.
	PeakRSS     int64 `json:"peak_rss_bytes"`
	BaselineRSS int64 `json:"baseline_rss_bytes"`
	// Matrices is (PeakRSS − BaselineRSS) in units of one n×n float64 matrix
	// (V included); the target is ≤ 8.
	Matrices Num `json:"matrices"`
	// RSSReset says whether the high-water mark could be reset per run (see
	// memoryProbe).
	RSSReset bool   `json:"rss_reset"`
	Error    string `json:"error,omitempty"`
}

// Scaling runs newton.Solve (MethodNewton) over the sizes for every backend
// and workload, recording time, DGEMM-equivalents, certified gap and peak
// memory. The backend in use is restored on return.
func Scaling(ctx context.Context, cfg ScalingConfig) ([]ScalingRow, error) {
	if cfg.Repeat == 0 {
		cfg.Repeat = 1
	}
	if cfg.Tol == 0 {
		cfg.Tol = 1e-8
	}
	if cfg.Repeat < 1 || !(cfg.Tol > 0 && cfg.Tol < 1) {
		return nil, fmt.Errorf("bad scaling configuration: repeat %d, tolerance %g", cfg.Repeat, cfg.Tol)
	}
	if len(cfg.Workloads) == 0 || len(cfg.Ns) == 0 {
		return nil, errors.New("need at least one workload and one n")
	}
	backends := cfg.Backends
	if len(backends) == 0 {
		backends = blas.Backends()
	}
	ns := slices.Clone(cfg.Ns)
	slices.Sort(ns)
	prev := blas.Current()
	defer blas.Use(prev)
	var rows []ScalingRow
	for _, be := range backends {
		blas.Use(be)
		for _, wname := range cfg.Workloads {
			for _, n := range ns {
				if limit, ok := cfg.MaxN[be.Name()]; ok && n > limit {
					continue
				}
				if err := ctx.Err(); err != nil {
					return rows, err
				}
				row, err := scalingPoint(ctx, be, wname, n, cfg)
				if err != nil {
					return rows, err
				}
				rows = append(rows, row)
				if cfg.Log != nil {
					if row.Error != "" {
						fmt.Fprintf(cfg.Log, "scaling %s %s n=%d failed: %s\n", be.Name(), wname, n, row.Error)
					} else {
						fmt.Fprintf(cfg.Log, "scaling %s %s n=%d %9.3fs  %6.1f DGEMM-eq  gap %.2e  peak RSS %.0f MiB (%.2f n×n matrices)\n",
							be.Name(), wname, n, float64(row.Seconds), float64(row.DGEMMEquivalents), float64(row.Gap),
							float64(row.PeakRSS)/(1<<20), float64(row.Matrices))
					}
				}
			}
		}
	}
	return rows, nil
}

func scalingPoint(ctx context.Context, be blas.Backend, wname string, n int, cfg ScalingConfig) (ScalingRow, error) {
	row := ScalingRow{Backend: be.Name(), Core: be.CoreName(), Threads: be.Threads(), Workload: wname, N: n,
		Seconds: Num(math.NaN()), Gap: Num(math.NaN()), Iterations: Num(math.NaN()), Matrices: Num(math.NaN())}
	if _, err := workload.Parse(wname, n); err != nil {
		return row, err
	}
	dg := dgemmSeconds(n, 3)
	row.DGEMMSeconds = Num(dg)
	var secs, its, gaps []float64
	var statuses []string
	for rep := 0; rep < cfg.Repeat; rep++ {
		probe, err := startMemoryProbe()
		if err != nil {
			return row, err
		}
		w, _ := workload.Parse(wname, n)
		V := w.Gram()
		start := time.Now()
		res, err := newton.Solve(ctx, V, &newton.Options{Tol: cfg.Tol})
		s := time.Since(start).Seconds()
		peak, perr := probe.Peak()
		if err != nil {
			row.Error = err.Error()
			return row, nil
		}
		if perr != nil {
			return row, perr
		}
		_, _, gap, err := certify(V, res.X)
		if err != nil {
			row.Error = "certifying the returned X: " + err.Error()
			return row, nil
		}
		row.Runs++
		secs, its, gaps = append(secs, s), append(its, float64(res.Iterations)), append(gaps, gap)
		if !slices.Contains(statuses, res.Status.String()) {
			statuses = append(statuses, res.Status.String())
		}
		if peak > row.PeakRSS {
			row.PeakRSS, row.BaselineRSS = peak, probe.Baseline
		}
		row.RSSReset = probe.Resettable
	}
	row.Seconds = Num(median(secs))
	row.DGEMMEquivalents = Num(median(secs) / dg)
	row.Iterations = Num(median(its))
	row.Gap = Num(maxFinite(gaps))
	row.Status = strings.Join(statuses, "/")
	row.Matrices = Num(float64(row.PeakRSS-row.BaselineRSS) / (8 * float64(n) * float64(n)))
	return row, nil
}
