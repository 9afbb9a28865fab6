package synth

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/dpsolve/dpsolve/model/domain"
)

// adultData reads the Adult records the repository ships
// (examples/adult/data/coded: 48,842 records, 14 integer-coded attributes;
// provenance in examples/adult/data/README.md), so the test never skips
// for lack of data.
func adultData(t testing.TB) ([]domain.Attribute, *Data) {
	t.Helper()
	dir := filepath.Join("..", "..", "examples", "adult", "data", "coded")
	f, err := os.Open(filepath.Join(dir, "adult.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := os.ReadFile(filepath.Join(dir, "domain.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dom struct {
		Domain []domain.Attribute `json:"domain"`
	}
	if err := json.Unmarshal(b, &dom); err != nil {
		t.Fatal(err)
	}
	d, err := ReadData(f, dom.Domain)
	if err != nil {
		t.Fatal(err)
	}
	return dom.Domain, d
}

// On Adult at ε = 1, δ = 1e-9, both mechanisms' synthetic data have a
// workload error on all 2-way marginals below the independent model's
// (a correctness check, not a benchmark: figures are measured by
// `dpsolve synth` and bench/peers/pgm_peer.py, see docs/synthetic.md). Runs
// with DPSOLVE_HEAVY=1 (seconds to minutes).
func TestAdultSynthetic(t *testing.T) {
	if os.Getenv("DPSOLVE_HEAVY") == "" {
		t.Skip("set DPSOLVE_HEAVY=1")
	}
	_, d := adultData(t)
	rho, err := RhoFromApprox(1, 1e-9)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := strconv.ParseFloat(os.Getenv("SYNTH_RHO"), 64); err == nil {
		rho = r
	}
	mechs := []string{MST, AIM}
	if m := os.Getenv("SYNTH_MECH"); m != "" {
		mechs = []string{m}
	}
	seeds := 1
	if s, err := strconv.Atoi(os.Getenv("SYNTH_SEEDS")); err == nil {
		seeds = s
	}
	for _, mech := range mechs {
		for seed := uint64(1); seed <= uint64(seeds); seed++ {
			start := time.Now()
			res, err := Synthesize(context.Background(), d, seeded(Options{Mechanism: mech, Budget: zcdp(rho), FitIter: fitIter()}, seed))
			if err != nil {
				t.Fatal(err)
			}
			syn := res.Sample(d.Len(), rand.New(rand.NewPCG(seed, 7)))
			sec := time.Since(start).Seconds()
			e2 := WorkloadError(d, syn, 2)
			e3 := WorkloadError(d, syn, 3)
			ind := WorkloadError(d, independent(d, seed), 2)
			t.Logf("fit %+v", res.Report.Fit)
			t.Logf("%s seed %d: 2-way %.4f, 3-way %.4f (independent 2-way %.4f), %d rounds, model %.3g cells, %d fit steps, %.1f s",
				mech, seed, e2, e3, ind, res.Report.Rounds, res.Report.Fit.Cells, res.Report.FitIterations, sec)
			if e2 >= ind {
				t.Fatalf("%s: 2-way error %v not below independence %v", mech, e2, ind)
			}
		}
	}
}

// independent draws records from the exact one-way marginals independently.
func independent(d *Data, seed uint64) *Data {
	r := rand.New(rand.NewPCG(seed, 3))
	out := &Data{Sizes: d.Sizes, Cols: make([][]int32, len(d.Sizes))}
	for a := range d.Sizes {
		out.Cols[a] = make([]int32, d.Len())
		for i := range out.Cols[a] {
			out.Cols[a][i] = d.Cols[a][r.IntN(d.Len())]
		}
	}
	return out
}

func fitIter() int {
	n, _ := strconv.Atoi(os.Getenv("SYNTH_FITITER"))
	return n
}
