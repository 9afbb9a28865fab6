package bench

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dpsolve/dpsolve/blas"
)

// Machine describes where a report was measured.
type Machine struct {
	CPU        string `json:"cpu"`
	Cores      int    `json:"cores"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	GoVersion  string `json:"go_version"`
	Platform   string `json:"platform"`
	// Backend is blas.Describe() for the backend in use, e.g.
	// "openblas (core Prescott, 2 threads)".
	Backend string `json:"backend"`
	// OpenBLASCoreType is the OPENBLAS_CORETYPE environment variable, if set.
	OpenBLASCoreType string `json:"openblas_coretype,omitempty"`
	// Python describes the peers' interpreter, numpy and scipy ("" if none).
	Python string `json:"python,omitempty"`
	Date   string `json:"date"`
}

// DescribeMachine fills Machine for this process.
func DescribeMachine() Machine {
	return Machine{
		CPU: cpuModel(), Cores: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0),
		GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH,
		Backend: blas.Describe(), OpenBLASCoreType: os.Getenv("OPENBLAS_CORETYPE"),
		Date: time.Now().UTC().Format(time.RFC3339),
	}
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

// Report is everything one `dpsolve bench` invocation measured; it is the
// --json output.
type Report struct {
	Machine    Machine        `json:"machine"`
	Tol        float64        `json:"tol"`
	Repeat     int            `json:"repeat"`
	Comparison *Comparison    `json:"comparison,omitempty"`
	Scaling    []ScalingRow   `json:"scaling,omitempty"`
	Kernels    []KernelResult `json:"kernels,omitempty"`
	// Notes are caveats, e.g. why peers were skipped.
	Notes []string `json:"notes"`
}

// fmtNum formats a measurement for a table with the given verb, or "—".
func fmtNum(verb string, x Num) string {
	if !x.Valid() {
		return "—"
	}
	return fmt.Sprintf(verb, float64(x))
}

// WriteMarkdown writes the report's tables as GitHub-flavored Markdown.
func (r *Report) WriteMarkdown(w io.Writer) error {
	bw := bufio.NewWriter(w)
	m := r.Machine
	fmt.Fprintf(bw, "Machine: %s, %d cores (GOMAXPROCS %d), %s, %s, kernels %s", m.CPU, m.Cores, m.GOMAXPROCS, m.GoVersion, m.Platform, m.Backend)
	if m.OpenBLASCoreType != "" {
		fmt.Fprintf(bw, ", OPENBLAS_CORETYPE=%s", m.OpenBLASCoreType)
	}
	if m.Python != "" {
		fmt.Fprintf(bw, "; peers on %s", m.Python)
	}
	fmt.Fprintf(bw, "; %s.\n\n", m.Date)
	if c := r.Comparison; c != nil {
		fmt.Fprintf(bw, "Target certified gap %.0e; medians of %d interleaved repetitions. Gap: certified by newton.Certificate on the returned X. "+
			"Speed-up: how many times faster dpsolve's newton reaches the gap the method reached (gap_best, against the best certified bound).\n\n", r.Tol, r.Repeat)
		fmt.Fprintln(bw, "| workload | n | method | seconds | DGEMM-eq | objective | certified gap | gap to best bound | iterations | status | speed-up of newton | note |")
		fmt.Fprintln(bw, "|---|---:|---|---:|---:|---:|---:|---:|---:|---|---:|---|")
		for _, s := range c.Summary {
			speed := "—"
			if s.SpeedUp.Valid() {
				speed = fmt.Sprintf("%.1f× at %.0e", float64(s.SpeedUp), float64(s.SpeedUpGap))
			}
			fmt.Fprintf(bw, "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
				s.Workload, s.N, s.Method, fmtNum("%.3f", s.Seconds), fmtNum("%.1f", s.DGEMMEquivalents),
				fmtNum("%.10g", s.Objective), fmtNum("%.1e", s.Gap), fmtNum("%.1e", s.GapBest),
				fmtNum("%.0f", s.Iterations), s.Status, speed, mdEscape(s.Note))
		}
		if len(c.FastestPeer) > 0 {
			fmt.Fprintln(bw)
			fmt.Fprintln(bw, "Speed-up of newton over the fastest peer at equal gap:")
			fmt.Fprintln(bw)
			for _, p := range c.FastestPeer {
				fmt.Fprintf(bw, "- %s n = %d: %.1f× over %s (gap %.0e)\n", p.Workload, p.N, float64(p.SpeedUp), p.Peer, float64(p.Gap))
			}
		}
		writePhases(bw, c.Summary)
		fmt.Fprintln(bw)
		fmt.Fprintln(bw, "| n | one DGEMM (s) | GFLOP/s | samples |")
		fmt.Fprintln(bw, "|---:|---:|---:|---:|")
		for _, d := range c.DGEMM {
			fmt.Fprintf(bw, "| %d | %s | %s | %d |\n", d.N, fmtNum("%.3g", d.Seconds), fmtNum("%.1f", d.GFlops), d.Samples)
		}
		fmt.Fprintln(bw)
	}
	if len(r.Scaling) > 0 {
		fmt.Fprintln(bw, "Scaling (dpsolve newton): peak RSS while building V and solving; matrices = (peak − baseline RSS) / (8n²) bytes.")
		fmt.Fprintln(bw)
		fmt.Fprintln(bw, "| backend | workload | n | seconds | DGEMM (s) | DGEMM-eq | certified gap | iterations | peak RSS (MiB) | n×n matrices | status |")
		fmt.Fprintln(bw, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
		for _, s := range r.Scaling {
			status := s.Status
			if s.Error != "" {
				status = "error: " + mdEscape(s.Error)
			}
			fmt.Fprintf(bw, "| %s | %s | %d | %s | %s | %s | %s | %s | %.0f | %s | %s |\n",
				s.Backend, s.Workload, s.N, fmtNum("%.3f", s.Seconds), fmtNum("%.3g", s.DGEMMSeconds),
				fmtNum("%.1f", s.DGEMMEquivalents), fmtNum("%.1e", s.Gap), fmtNum("%.0f", s.Iterations),
				float64(s.PeakRSS)/(1<<20), fmtNum("%.2f", s.Matrices), status)
		}
		fmt.Fprintln(bw)
	}
	if len(r.Kernels) > 0 {
		fmt.Fprintln(bw, "Kernels: median seconds; GFLOP/s from nominal flop counts (DGEMM 2n³, Cholesky n³/3, Cholesky inverse 2n³/3, "+
			"eigenvalues 4n³/3, eigenvectors 9n³, H[S] 4n³).")
		fmt.Fprintln(bw)
		fmt.Fprintln(bw, "| backend | core | threads | n | kernel | seconds | GFLOP/s | DGEMM-eq | rate vs DGEMM |")
		fmt.Fprintln(bw, "|---|---|---:|---:|---|---:|---:|---:|---:|")
		for _, k := range r.Kernels {
			core := k.Core
			if core == "" {
				core = "—"
			}
			fmt.Fprintf(bw, "| %s | %s | %d | %d | %s | %s | %s | %s | %s |\n", k.Backend, core, k.Threads, k.N, k.Kernel,
				fmtNum("%.3g", k.Seconds), fmtNum("%.1f", k.GFlops), fmtNum("%.2f", k.DGEMMEquivalents), fmtNum("%.2f", k.RateVsDGEMM))
		}
		fmt.Fprintln(bw)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(bw, "Note: %s\n", n)
	}
	return bw.Flush()
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func csvNum(x Num) string {
	if !x.Valid() {
		return ""
	}
	return strconv.FormatFloat(float64(x), 'g', -1, 64)
}

// WriteRunsCSV writes one row per comparison run (empty cells for missing
// values).
func (r *Report) WriteRunsCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"workload", "n", "method", "rep", "seconds", "dgemm_equivalents", "objective", "lower_bound",
		"gap", "gap_best", "reported_objective", "reported_gap", "iterations", "status", "gap_source", "error"})
	if r.Comparison != nil {
		for _, x := range r.Comparison.Runs {
			cw.Write([]string{x.Workload, strconv.Itoa(x.N), x.Method, strconv.Itoa(x.Rep), csvNum(x.Seconds),
				csvNum(x.DGEMMEquivalents), csvNum(x.Objective), csvNum(x.LowerBound), csvNum(x.Gap), csvNum(x.GapBest),
				csvNum(x.ReportedObjective), csvNum(x.ReportedGap), strconv.Itoa(x.Iterations), x.Status, x.GapSource, x.Error})
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteScalingCSV writes one row per scaling point.
func (r *Report) WriteScalingCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"backend", "core", "threads", "workload", "n", "runs", "seconds", "dgemm_seconds", "dgemm_equivalents",
		"gap", "iterations", "status", "peak_rss_bytes", "baseline_rss_bytes", "matrices", "rss_reset", "error"})
	for _, s := range r.Scaling {
		cw.Write([]string{s.Backend, s.Core, strconv.Itoa(s.Threads), s.Workload, strconv.Itoa(s.N), strconv.Itoa(s.Runs),
			csvNum(s.Seconds), csvNum(s.DGEMMSeconds), csvNum(s.DGEMMEquivalents), csvNum(s.Gap), csvNum(s.Iterations),
			s.Status, strconv.FormatInt(s.PeakRSS, 10), strconv.FormatInt(s.BaselineRSS, 10), csvNum(s.Matrices),
			strconv.FormatBool(s.RSSReset), s.Error})
	}
	cw.Flush()
	return cw.Error()
}

// WriteKernelsCSV writes one row per kernel timing.
func (r *Report) WriteKernelsCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"backend", "core", "threads", "n", "kernel", "seconds", "flops", "gflops", "dgemm_equivalents", "rate_vs_dgemm"})
	for _, k := range r.Kernels {
		cw.Write([]string{k.Backend, k.Core, strconv.Itoa(k.Threads), strconv.Itoa(k.N), k.Kernel, csvNum(k.Seconds),
			strconv.FormatFloat(k.Flops, 'g', -1, 64), csvNum(k.GFlops), csvNum(k.DGEMMEquivalents), csvNum(k.RateVsDGEMM)})
	}
	cw.Flush()
	return cw.Error()
}

// phaseOrder is the order of newton.Result.Phases in reports: the solve's
// own order, start to finish.
var phaseOrder = []string{"spectrum", "fixed-point", "eigen", "system", "step", "line-search", "certificate", "strategy", "other"}

// writePhases writes, for the summary rows that report phases, where the
// time went: the median DGEMM-equivalents per phase. Phases a method did
// not report are "—"; a phase outside phaseOrder is added at the end.
func writePhases(w io.Writer, rows []SummaryRow) {
	names := append([]string(nil), phaseOrder...)
	reported := false
	for _, s := range rows {
		for name := range s.Phases {
			reported = true
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	if !reported {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Where the time goes: median DGEMM-equivalents per phase (newton.Result.Phases over the same DGEMM time).")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "| workload | n | method | %s | total |\n", strings.Join(names, " | "))
	fmt.Fprintf(w, "|---|---:|---|%s---:|\n", strings.Repeat("---:|", len(names)))
	for _, s := range rows {
		if len(s.Phases) == 0 {
			continue
		}
		cells := make([]string, len(names))
		for i, name := range names {
			x, ok := s.Phases[name]
			if !ok {
				cells[i] = "—"
				continue
			}
			cells[i] = fmtNum("%.1f", x)
		}
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s |\n", s.Workload, s.N, s.Method, strings.Join(cells, " | "), fmtNum("%.1f", s.DGEMMEquivalents))
	}
}
