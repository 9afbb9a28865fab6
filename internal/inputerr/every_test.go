package inputerr_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/bench/funcpert"
	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/cg"
	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/internal/matio"
	"github.com/dpsolve/dpsolve/internal/testkit/budgettest"
	"github.com/dpsolve/dpsolve/kron"
	"github.com/dpsolve/dpsolve/mechanism/distributed"
	"github.com/dpsolve/dpsolve/mechanism/functional"
	"github.com/dpsolve/dpsolve/mechanism/functional/basis"
	"github.com/dpsolve/dpsolve/mechanism/functional/project"
	"github.com/dpsolve/dpsolve/mechanism/lrm"
	"github.com/dpsolve/dpsolve/mechanism/marginals"
	"github.com/dpsolve/dpsolve/mechanism/plan"
	"github.com/dpsolve/dpsolve/mechanism/plan/planner"
	"github.com/dpsolve/dpsolve/mechanism/sdp"
	"github.com/dpsolve/dpsolve/mechanism/strategy"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/newton"
	"github.com/dpsolve/dpsolve/pipeline/records"
	"github.com/dpsolve/dpsolve/pipeline/release"
	"github.com/dpsolve/dpsolve/pipeline/tables"
	"github.com/dpsolve/dpsolve/privacy/accounting"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/ledger"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// second discards a constructor's value, keeping its error.
func second[T any](_ T, err error) error { return err }

// second3 discards two values, keeping the error.
func second3[T, U any](_ T, _ U, err error) error { return err }

// Every public package's bad input satisfies errors.Is(err, ErrInput) with
// the one shared sentinel, and every package's re-export is that sentinel.
func TestEveryPackageWrapsErrInput(t *testing.T) {
	ctx := context.Background()
	for name, s := range map[string]error{
		"newton": newton.ErrInput, "workload": workload.ErrInput, "strategy": strategy.ErrInput,
		"accounting": accounting.ErrInput, "calibrate": calibrate.ErrInput, "noise": noise.ErrInput,
		"release": release.ErrInput, "lrm": lrm.ErrInput, "sdp": sdp.ErrInput, "cg": cg.ErrInput,
		"matio": matio.ErrInput, "functional": functional.ErrInput, "basis": basis.ErrInput,
		"project": project.ErrInput, "experiment": funcpert.ErrInput, "distributed": distributed.ErrInput,
		"records": records.ErrInput, "kron": kron.ErrInput, "ledger": ledger.ErrInput, "tables": tables.ErrInput,
		"marginals": marginals.ErrInput, "plan": plan.ErrInput, "domain": domain.ErrInput,
	} {
		if s != inputerr.ErrInput {
			t.Errorf("%s.ErrInput is not the shared sentinel", name)
		}
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("1,2\n3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	one := mat.NewDense(1, 1, []float64{1})
	cases := map[string]error{
		"newton.Solve nil Gram":         second(newton.Solve(ctx, nil, nil)),
		"workload.NewIdentity(-1)":      second(workload.NewIdentity(-1)),
		"workload.Parse junk":           second(workload.Parse("prefix:k=1", 4)),
		"workload.Parse unknown":        second(workload.Parse("nosuch", 4)),
		"workload.NewMarginals":         second(workload.NewMarginals(nil, 1)),
		"domain.NewBlock size 0":        second(domain.NewBlock("identity", 0, nil)),
		"strategy.NewHierarchical b=1":  second(strategy.NewHierarchical(8, 1)),
		"strategy.NewIdentity(0)":       second(strategy.NewIdentity(0)),
		"accounting.NewReport":          second(accounting.NewReport("x", 0, 1, 1)),
		"accounting.LaplaceNoise(0)":    second(accounting.LaplaceNoise(0)),
		"calibrate.GaussianSigma":       second(calibrate.GaussianSigma(1, 2, 1)),
		"calibrate.ZCDP(0)":             second(calibrate.ZCDP(0)),
		"noise.Grid(-1)":                second(noise.Grid(-1)),
		"noise.AddLaplace bad grid":     second(noise.NewSeededInsecure(1).AddLaplace([]float64{1}, 1, 3)),
		"release.New nil":               second(release.New(nil, budgettest.PureDP(1))),
		"release.New bad budget":        second(release.New(one, calibrate.Budget{})),
		"release.CheckData":             release.CheckData([]float64{-1}, 1),
		"lrm.Solve empty":               second(lrm.Solve(ctx, &mat.Dense{}, nil)),
		"lrm.Solve bad option":          second(lrm.Solve(ctx, one, &lrm.Options{Tol: 2})),
		"sdp.ParseForm":                 second(sdp.ParseForm("nope")),
		"sdp.ReadSDPA":                  second(sdp.ReadSDPA(strings.NewReader("x\n"))),
		"cg.Solve MaxIter 0":            second(cg.Solve(nil, blas.General{}, blas.General{}, cg.Options{})),
		"matio.ReadMatrix missing":      second(matio.ReadMatrix(filepath.Join(dir, "missing.npy"))),
		"matio.ReadMatrix ragged":       second(matio.ReadMatrix(bad)),
		"matio.ReadMatrix extension":    second(matio.ReadMatrix(filepath.Join(dir, "w.xlsx"))),
		"functional.Params":             functional.Params{Budget: budgettest.PureDP(1)}.Validate(),
		"basis.NewBox":                  second(basis.NewBox([]float64{1}, []float64{0})),
		"project.Set":                   project.Set{}.Validate(),
		"funcpert.Run bad config":       second(funcpert.Run(ctx, funcpert.Config{}, nil)),
		"distributed.NewGraph":          second(distributed.NewGraph(0, nil)),
		"distributed.Harmonic":          second(distributed.Harmonic(-1, 1, 1)),
		"distributed.Run no objectives": second(distributed.Run(ctx, nil, distributed.Config{})),
		"records.Cells":                 second(records.Cells([]domain.Attribute{{Name: "a", Size: 0}})),
		"records.ReadHistogram header":  second3(records.ReadHistogram(strings.NewReader("b\n0\n"), []domain.Attribute{{Name: "a", Size: 2}}, nil)),
		"kron.New no factors":           second(kron.New()),
		"ledger.Read missing":           second(ledger.Read(filepath.Join(dir, "missing-ledger.json"))),
		"ledger.Create bad limit":       ledger.Create(filepath.Join(dir, "ledger.json"), calibrate.Budget{}),
		"tables.Split":                  second(tables.Split(budgettest.ZCDP(1), 0)),
		"tables.Prepare nil":            second(tables.Prepare(nil, nil, budgettest.ZCDP(1))),
		"marginals.KWay":                second(marginals.KWay(3, 4)),
		"marginals.NewPlan empty":       second(marginals.NewPlan(nil, nil, marginals.Sum, nil)),
		"planner.Lookup unknown":        second(planner.Lookup("nosuch")),
	}
	for name, err := range cases {
		if !errors.Is(err, inputerr.ErrInput) {
			t.Errorf("%s: %v does not wrap ErrInput", name, err)
		}
	}
}

// Constructors return nil with their error: no half-valid value escapes.
func TestConstructorsReturnNilOnError(t *testing.T) {
	if w, err := workload.NewIdentity(-1); w != nil || err == nil {
		t.Errorf("workload.NewIdentity(-1) = %v, %v", w, err)
	}
	if w, err := workload.NewPrefix(0); w != nil || err == nil {
		t.Errorf("workload.NewPrefix(0) = %v, %v", w, err)
	}
	if w, err := workload.NewTotal(-2); w != nil || err == nil {
		t.Errorf("workload.NewTotal(-2) = %v, %v", w, err)
	}
	if w, err := workload.NewAllRange(0); w != nil || err == nil {
		t.Errorf("workload.NewAllRange(0) = %v, %v", w, err)
	}
	if w, err := workload.Parse("prefix", -1); w != nil || err == nil {
		t.Errorf("workload.Parse(prefix, -1) = %v, %v", w, err)
	}
}
