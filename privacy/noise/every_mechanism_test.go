package noise_test

import (
	"context"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/dpsolve/dpsolve/internal/testkit/budgettest"
	"github.com/dpsolve/dpsolve/mechanism/distributed"
	"github.com/dpsolve/dpsolve/mechanism/functional"
	"github.com/dpsolve/dpsolve/mechanism/functional/basis"
	"github.com/dpsolve/dpsolve/mechanism/lrm"
	"github.com/dpsolve/dpsolve/mechanism/strategy"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/pipeline/release"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

// recorder passes every draw to package noise's seeded simulator and counts
// the values perturbed per noise kind.
type recorder struct {
	src               noise.Source
	laplace, gaussian int
}

func (r *recorder) AddLaplace(v []float64, scale, grid float64) (float64, error) {
	r.laplace += len(v)
	return r.src.AddLaplace(v, scale, grid)
}

func (r *recorder) AddGaussian(v []float64, sigma, grid float64) (float64, error) {
	r.gaussian += len(v)
	return r.src.AddGaussian(v, sigma, grid)
}

// Every noise kind of every mechanism comes from privacy/noise: each
// mechanism run through a recording Source (a) draws exactly the values and
// kind it should through it, (b) gives bit-for-bit the output of the bare
// seeded simulator with the same seed — so it has no other noise — and (c)
// changes with the seed, so the noise really enters.
func TestEveryMechanismDrawsFromNoise(t *testing.T) {
	ctx := context.Background()
	x := []float64{5, 0, 3, 12, 7, 1, 0, 4}
	n := len(x)
	h2, err := strategy.NewH2(n)
	if err != nil {
		t.Fatal(err)
	}
	pw, _ := workload.NewPrefix(n)
	lrmL1, err := lrm.Solve(ctx, pw.Matrix(), &lrm.Options{Noise: calibrate.Laplace})
	if err != nil {
		t.Fatal(err)
	}
	lrmL2, err := lrm.Solve(ctx, pw.Matrix(), &lrm.Options{Noise: calibrate.Gaussian})
	if err != nil {
		t.Fatal(err)
	}
	box, _ := basis.Cube(2, -5, 5)
	bs, _ := basis.New(box, 3)
	coef := make([]float64, bs.Len())
	for i := range coef {
		coef[i] = 1 / float64(i+1)
	}
	agents, err := distributed.NewLogisticAgents(distributed.DefaultLogisticConfig(1))
	if err != nil {
		t.Fatal(err)
	}
	objs := make([]distributed.Objective, len(agents))
	for i, a := range agents {
		objs[i] = a
	}
	ring, _ := distributed.Ring(len(agents))
	steps, _ := distributed.Geometric(0.2, 0.9)
	const rounds = 5

	type mech struct {
		name  string
		kind  string // "laplace" or "gaussian"
		draws int
		run   func(src func() noise.Source) ([]float64, error)
	}
	releaseRun := func(b calibrate.Budget) func(func() noise.Source) ([]float64, error) {
		return func(src func() noise.Source) ([]float64, error) {
			m, err := release.New(h2.Matrix(), b)
			if err != nil {
				return nil, err
			}
			return m.Measure(x, src())
		}
	}
	lrmRun := func(r *lrm.Result, b calibrate.Budget) func(func() noise.Source) ([]float64, error) {
		return func(src func() noise.Source) ([]float64, error) {
			rel, err := r.Answer(x, b, src())
			if err != nil {
				return nil, err
			}
			return rel.Measurements, nil
		}
	}
	lrmRows := func(r *lrm.Result) int { k, _ := r.L.Dims(); return k }
	mechs := []mech{
		{"release gaussian", "gaussian", h2.Rows(), releaseRun(budgettest.ApproxDP(1, 1e-6))},
		{"release zcdp", "gaussian", h2.Rows(), releaseRun(budgettest.ZCDP(0.5))},
		{"release laplace", "laplace", h2.Rows(), releaseRun(budgettest.PureDP(1))},
		{"lrm laplace", "laplace", lrmRows(lrmL1), lrmRun(lrmL1, budgettest.PureDP(1))},
		{"lrm gaussian", "gaussian", lrmRows(lrmL2), lrmRun(lrmL2, budgettest.ApproxDP(1, 1e-6))},
		{"functional laplace", "laplace", bs.Len(), func(src func() noise.Source) ([]float64, error) {
			m, err := functional.New(functional.Params{Budget: budgettest.PureDP(1), Gamma: 1, Q: 2, P: 1}, bs.Len(), src())
			if err != nil {
				return nil, err
			}
			return m.Release(coef)
		}},
		{"distributed message laplace", "laplace", len(agents) * rounds * 2, func(src func() noise.Source) ([]float64, error) {
			srcs := make([]noise.Source, len(agents))
			for i := range srcs {
				srcs[i] = src()
			}
			res, err := distributed.Run(ctx, objs, distributed.Config{Graph: ring, X: box, Steps: steps, Iterations: rounds,
				Noise: &distributed.MessageNoise{Scale: func(k int) float64 { return 0.5 }, Sources: srcs}})
			if err != nil {
				return nil, err
			}
			return slices.Concat(res.X...), nil
		}},
	}
	for _, m := range mechs {
		var recs []*recorder
		recorded, err := m.run(func() noise.Source {
			r := &recorder{src: noise.NewSeededInsecure(uint64(7 + len(recs)))}
			recs = append(recs, r)
			return r
		})
		if err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
		var lap, gau int
		for _, r := range recs {
			lap, gau = lap+r.laplace, gau+r.gaussian
		}
		wantLap, wantGau := m.draws, 0
		if m.kind == "gaussian" {
			wantLap, wantGau = 0, m.draws
		}
		if lap != wantLap || gau != wantGau {
			t.Errorf("%s: %d Laplace and %d Gaussian draws through noise.Source, want %d and %d", m.name, lap, gau, wantLap, wantGau)
		}
		k := 0
		bare, err := m.run(func() noise.Source { k++; return noise.NewSeededInsecure(uint64(7 + k - 1)) })
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(recorded, bare) {
			t.Errorf("%s: output differs from the bare seeded simulator's: noise from elsewhere", m.name)
		}
		k = 0
		other, _ := m.run(func() noise.Source { k++; return noise.NewSeededInsecure(uint64(1000 + k)) })
		if slices.Equal(other, bare) {
			t.Errorf("%s: output does not depend on the noise seed", m.name)
		}
	}
}

// The packages that add noise import no random source of their own (lrm and
// distributed use math/rand for starting points and synthetic data only,
// which the bit-for-bit comparison above covers).
func TestNoiseAddersImportNoRandomSource(t *testing.T) {
	for _, dir := range []string{"../../pipeline/release", "../calibrate", "../../mechanism/functional"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			if filepath.Ext(f) != ".go" || len(f) > 8 && f[len(f)-8:] == "_test.go" {
				continue
			}
			af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range af.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if p == "math/rand" || p == "math/rand/v2" || p == "crypto/rand" {
					t.Errorf("%s imports %s: noise must come from privacy/noise", f, p)
				}
			}
		}
	}
}
