package marginals

import (
	"encoding/json"
	"math"
	"os/exec"
	"strings"
	"testing"

	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/privacy/calibrate"
)

// The random-start search's weights, re-scored densely: on every small
// family case the θ randomStarts returns is formed as an explicit strategy
// (θ_S times the S-marginal over the whole domain, L1 sensitivity Σθ = 1)
// and its error tr(W (AᵀA)⁺ Wᵀ) from a dense pseudo-inverse matches the
// value it reports to 1e-8 relative (as TestFamilyPlanDense: the SVD
// pseudo-inverse of a strategy with condition number up to ~10⁴).
func TestRandomStartsDense(t *testing.T) {
	for name, w := range familyCases(t) {
		f, err := newFamily(w)
		if err != nil {
			t.Fatal(err)
		}
		wd, err := w.DenseMatrix(4096)
		if err != nil {
			t.Fatal(err)
		}
		o := newMM(f, 2)
		v, theta, it := f.randomStarts(o, 4*f.mmIterations())
		if theta == nil {
			t.Fatalf("%s: no random start ended finite", name)
		}
		fp := &FamilyPlan{Pure: true}
		for _, a := range w.Attributes() {
			fp.Sizes = append(fp.Sizes, a.Size)
		}
		for m, x := range theta {
			if x > 0 {
				fp.Tables = append(fp.Tables, WeightedTable{Attrs: f.attrsOf(m), Weight: x})
			}
		}
		a := familyStrategyDense(fp)
		if s := maxColumnNorm(a, true); math.Abs(s-1) > 1e-12 {
			t.Errorf("%s: sensitivity %.15g", name, s)
		}
		got := f.errorOf(f.ellOf(theta))
		e := denseError(t, wd, a)
		if d := relDiff(e, got); d > 1e-8 {
			t.Errorf("%s: random-start error %.12g, dense %.12g", name, got, e)
		}
		t.Logf("%s: random starts %.10g (E %.10g), dense %.10g, %d iterations", name, got, v, e, it)
	}
}

// The pure family plan on HDMM's adult (big) W1 benchmark — all 0- to
// 3-way marginals of 14 attributes, 2¹⁴ candidate tables — against
// bench/peers/hdmm_templates.py's OPT_M (L-BFGS-B over θ ≥ 0 on every
// subset from HDMM's uniform random starts, best of seeds 0–3, numpy/scipy):
// never above it by more than 1e-9 relative. Before the random-start search
// the family plan was 1.9% above it (5.410e11 against 5.308e11): the
// deterministic starts and the multiplicative steps stopped in a worse
// local minimum. Skipped without /usr/bin/python3 with scipy.
func TestPureFamilyAgainstHDMMPeer(t *testing.T) {
	needScipy(t)
	const specPath = "../../examples/hdmm/adultbig-w1.json"
	w, err := domain.LoadSpec(specPath, workload.Blocks)
	if err != nil {
		t.Fatal(err)
	}
	fp, err := NewFamilyPlan(w, calibrate.Laplace)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(pythonPath, "../../bench/peers/hdmm_templates.py", specPath, "--seeds", "0,1,2,3")
	cmd.Env = append(cmd.Environ(), "OPENBLAS_NUM_THREADS=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("peer: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var peer struct {
		OptM float64 `json:"opt_m"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &peer); err != nil {
		t.Fatal(err)
	}
	t.Logf("adult (big) W1, pure: family plan %.10g (start %s), OPT_M peer %.10g, ratio %.6f", fp.TotalSquaredError, fp.Start, peer.OptM, fp.TotalSquaredError/peer.OptM)
	if fp.TotalSquaredError > peer.OptM*(1+1e-9) {
		t.Errorf("family plan %.10g above the OPT_M peer %.10g", fp.TotalSquaredError, peer.OptM)
	}
}
