package progresstest

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/bench/funcpert"
	"github.com/dpsolve/dpsolve/cmd/dpsolve/internal/batch"
	"github.com/dpsolve/dpsolve/mechanism/lrm"
	_ "github.com/dpsolve/dpsolve/mechanism/marginals" // registers the marginals template
	"github.com/dpsolve/dpsolve/mechanism/plan"
	"github.com/dpsolve/dpsolve/mechanism/plan/planner"
	"github.com/dpsolve/dpsolve/mechanism/sdp"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/newton"
	"github.com/dpsolve/dpsolve/pipeline/records"
	"github.com/dpsolve/dpsolve/progress"
)

// final is what a routine's last (Done) event must carry: its result's
// objective and bound (NaN: the routine has none) and its count.
type final struct {
	objective, bound float64
	count            int64
	steps            int // the non-Done events with Step > 0 that must be there (0: not checked)
}

// Every long-running entry point reports through the one progress.Func: at
// least one event while it runs, then exactly one final event with Done set
// that carries the returned result's numbers, with time never going back.
func TestEveryLongRunningRoutineReportsThroughOneType(t *testing.T) {
	ctx := context.Background()
	nan := math.NaN()
	gram := func(name string, n int) *mat.SymDense {
		w, err := workload.Parse(name, n)
		if err != nil {
			t.Fatal(err)
		}
		return w.Gram()
	}
	matrix := func(name string, n int) *mat.Dense {
		w, err := workload.Parse(name, n)
		if err != nil {
			t.Fatal(err)
		}
		return w.(workload.Explicit).Matrix()
	}
	kron, err := domain.ParseSpec(strings.NewReader(`{"domain": [{"name": "a", "size": 4}, {"name": "b", "size": 6}],
	  "workload": [{"name": "t", "product": {"a": "prefix", "b": "identity"}}, {"name": "m", "marginals": {"k": 1}}]}`), ".", workload.Blocks)
	if err != nil {
		t.Fatal(err)
	}
	marg, err := domain.ParseSpec(strings.NewReader(`{"domain": [{"name": "a", "size": 3}, {"name": "b", "size": 4}],
	  "workload": [{"name": "m", "marginals": {"k": 1}}]}`), ".", workload.Blocks)
	if err != nil {
		t.Fatal(err)
	}
	attrs := []domain.Attribute{{Name: "a", Size: 2}, {Name: "b", Size: 3}}
	csv := "a,b\n0,1\n1,2\n1,0\n0,0\n1,1\n"

	cases := []struct {
		name  string
		stage string // every event's stage starts with it
		last  string // the final event's stage; "": stage
		run   func(f progress.Func) (final, error)
	}{
		{"newton", "newton", "", func(f progress.Func) (final, error) {
			r, err := newton.Solve(ctx, gram("prefix", 32), &newton.Options{Progress: f})
			if err != nil {
				return final{}, err
			}
			return final{r.Objective, r.LowerBound, 0, r.Iterations}, nil
		}},
		{"newton singular (dual method)", "newton", "", func(f progress.Func) (final, error) {
			r, err := newton.Solve(ctx, gram("wrange:m=20,seed=1", 32), &newton.Options{Progress: f})
			if err != nil {
				return final{}, err
			}
			return final{r.Objective, r.LowerBound, 0, r.Iterations}, nil
		}},
		{"newton.Solver", "newton", "", func(f progress.Func) (final, error) {
			s := newton.NewSolver(&newton.Options{Progress: f})
			var r newton.Result
			if err := s.Solve(ctx, gram("allrange", 24), &r); err != nil {
				return final{}, err
			}
			return final{r.Objective, r.LowerBound, 0, r.Iterations}, nil
		}},
		{"yuan2016", "yuan2016", "", func(f progress.Func) (final, error) {
			r, err := newton.Solve(ctx, gram("prefix", 32), &newton.Options{Method: newton.MethodYuan2016, Progress: f})
			if err != nil {
				return final{}, err
			}
			return final{r.Objective, r.LowerBound, 0, r.Iterations}, nil
		}},
		{"lrm, SVD start", "lrm", "", func(f progress.Func) (final, error) {
			r, err := lrm.Solve(ctx, matrix("prefix", 16), &lrm.Options{Start: lrm.StartSVD, Progress: f})
			if err != nil {
				return final{}, err
			}
			return final{r.Objective, nan, 0, r.Iterations}, nil
		}},
		{"lrm, p-Identity start", "lrm", "", func(f progress.Func) (final, error) {
			r, err := lrm.Solve(ctx, matrix("wrange:m=64,seed=1", 64), &lrm.Options{Start: lrm.StartPIdentity, Progress: f})
			if err != nil {
				return final{}, err
			}
			return final{r.Objective, nan, 0, r.Iterations}, nil
		}},
		{"plan kron", "plan", "", func(f progress.Func) (final, error) {
			r, err := planner.Run(ctx, kron, "kron", plan.Options{Progress: f})
			if err != nil {
				return final{}, err
			}
			return final{r.Objective, r.LowerBound, 0, 0}, nil
		}},
		{"plan best", "plan", "", func(f progress.Func) (final, error) {
			r, err := planner.Run(ctx, kron, "best", plan.Options{Progress: f})
			if err != nil {
				return final{}, err
			}
			return final{r.Objective, r.LowerBound, 0, 0}, nil
		}},
		{"plan best template, called directly", "plan", "plan best", func(f progress.Func) (final, error) {
			b, err := planner.Lookup("best")
			if err != nil {
				return final{}, err
			}
			r, err := b.Plan(ctx, kron, plan.Options{Progress: f})
			if err != nil {
				return final{}, err
			}
			return final{r.Objective, r.LowerBound, 0, 0}, nil
		}},
		{"plan marginals", "plan", "", func(f progress.Func) (final, error) {
			r, err := planner.Run(ctx, marg, "marginals", plan.Options{Progress: f})
			if err != nil {
				return final{}, err
			}
			return final{r.Objective, r.LowerBound, 0, 0}, nil
		}},
		{"records.ReadHistogram", "records", "", func(f progress.Func) (final, error) {
			_, st, err := records.ReadHistogram(strings.NewReader(csv), attrs, &records.Options{Progress: f, ProgressEvery: 2})
			return final{nan, nan, st.Records, 0}, err
		}},
		{"records.ReadMarginals", "records", "", func(f progress.Func) (final, error) {
			_, st, err := records.ReadMarginals(strings.NewReader(csv), attrs, [][]int{{0}, {1}}, &records.Options{Progress: f, ProgressEvery: 2})
			return final{nan, nan, st.Records, 0}, err
		}},
		{"sdp.Solve (CSDP)", "csdp", "", func(f progress.Func) (final, error) {
			if _, err := exec.LookPath("csdp"); err != nil && os.Getenv("CI") == "" {
				t.Skip("csdp not on PATH (CI installs it)")
			}
			fm, err := sdp.Build(sdp.Approx, matrix("prefix", 4))
			if err != nil {
				return final{}, err
			}
			r, err := sdp.Solve(ctx, fm.Problem, &sdp.Options{Progress: f})
			if err != nil {
				return final{}, err
			}
			return final{r.Objective, r.LowerBound, 0, 1}, nil
		}},
		{"batch.Runner", "batch", "", func(f progress.Func) (final, error) {
			dir := t.TempDir()
			var lines []string
			for i := range 3 {
				lines = append(lines, fmt.Sprintf(`{"id": "j%d", "command": "solve", "args": ["--n", "%d"]}`, i, i))
			}
			p := filepath.Join(dir, "m.jsonl")
			if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
				return final{}, err
			}
			m, err := batch.ReadManifest(p)
			if err != nil {
				return final{}, err
			}
			r := &batch.Runner{Exe: "/nonexistent", Manifest: m, Out: filepath.Join(dir, "out"), Workers: 1, Progress: f,
				InProcess: func(string, []string, io.Writer, io.Writer) (int, bool) { return 0, true }}
			outs, err := r.Run(ctx, m.Jobs)
			return final{nan, nan, int64(len(outs)), 0}, err
		}},
		{"funcpert experiment", "funcpert", "", func(f progress.Func) (final, error) {
			cfg := funcpert.DefaultConfig()
			cfg.Degrees, cfg.Eps, cfg.Reps = []int{2}, []float64{1}, 20
			cfg.Message.Rounds = 0
			r, err := funcpert.Run(ctx, cfg, f)
			if err != nil {
				return final{}, err
			}
			return final{nan, nan, 0, 0}, checkRows(r)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			last := c.last
			if last == "" {
				last = c.stage
			}
			var evs []progress.Event
			want, err := c.run(func(e progress.Event) { evs = append(evs, e) })
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) < 2 {
				t.Fatalf("%d events, want at least one while running and a final one: %+v", len(evs), evs)
			}
			steps := 0
			for i, e := range evs {
				if !strings.HasPrefix(e.Stage, c.stage) {
					t.Errorf("event %d: stage %q, want %q…", i, e.Stage, c.stage)
				}
				if i > 0 && e.Stage == evs[i-1].Stage && e.Seconds < evs[i-1].Seconds {
					t.Errorf("event %d: time went back from %g to %g s", i, evs[i-1].Seconds, e.Seconds)
				}
				if e.Done != (i == len(evs)-1) && (e.Stage == last || !e.Done) {
					// Sub-stages (plan kron inside plan) may end with Done
					// before the routine's own final event.
					t.Errorf("event %d of %d: Done = %v", i, len(evs), e.Done)
				}
				if !e.Done && e.Step > 0 {
					steps++
				}
			}
			fin := evs[len(evs)-1]
			if fin.Stage != last {
				t.Errorf("final stage %q, want %q", fin.Stage, last)
			}
			same := func(field string, got, want float64) {
				if got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
					t.Errorf("final %s = %v, the result's is %v", field, got, want)
				}
			}
			same("objective", fin.Objective, want.objective)
			same("bound", fin.Bound, want.bound)
			if want.count > 0 && fin.Count != want.count {
				t.Errorf("final count %d, want %d", fin.Count, want.count)
			}
			if want.steps > 0 && steps < want.steps && c.stage != "csdp" {
				t.Errorf("%d step events, want %d (one per iteration)", steps, want.steps)
			}
			if c.stage == "csdp" && steps == 0 {
				t.Errorf("no CSDP iteration reported")
			}
		})
	}
}

// checkRows guards the funcpert case against a run that did nothing.
func checkRows(r *funcpert.Result) error {
	if len(r.Rows) == 0 {
		return fmt.Errorf("the experiment produced no rows")
	}
	return nil
}
