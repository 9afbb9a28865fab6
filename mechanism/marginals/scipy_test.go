package marginals

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// maxReferencePy solves the max-variance problem independently with scipy:
// it rebuilds the residual lattice and the coefficients p_{S,T} from the
// definitions, minimizes Σ Δ_T² e^{-x_T} subject to A e^x ≤ 1 by SLSQP, and
// prints the primal value max_S (A v)_S · Σ_T Δ_T²/v_T of its point, an upper
// bound on the optimum whatever SLSQP's accuracy.
const maxReferencePy = `import json, sys, itertools
import numpy as np
from scipy.optimize import minimize

inp = json.load(sys.stdin)
sizes = inp["sizes"]; sets = inp["sets"]
pos = [s for s in sets if s["weight"] > 0]
res = sorted({T for s in pos for r in range(len(s["attrs"]) + 1)
              for T in itertools.combinations(s["attrs"], r) if all(sizes[a] > 1 for a in T)})
idx = {T: i for i, T in enumerate(res)}
A = np.zeros((len(pos), len(res)))
for i, s in enumerate(pos):
    S = s["attrs"]
    for r in range(len(S) + 1):
        for T in itertools.combinations(S, r):
            if T not in idx:
                continue
            p = 1.0
            for a in S:
                d = sizes[a]
                p *= (d - 1) / d if a in T else 1 / d**2
            A[i, idx[T]] = s["weight"] ** 2 * p
D2 = np.array([np.prod([(sizes[a] - 1) / sizes[a] for a in T]) for T in res])
# min sum D2 exp(-x)  s.t.  1 - A exp(x) >= 0
f = lambda x: np.sum(D2 * np.exp(-x))
g = lambda x: -D2 * np.exp(-x)
cons = {"type": "ineq", "fun": lambda x: 1 - A @ np.exp(x), "jac": lambda x: -A * np.exp(x)[None, :]}
x0 = np.full(len(res), np.log(0.5 / A.sum(axis=1).max()))
r = minimize(f, x0, jac=g, constraints=[cons], method="SLSQP", options={"ftol": 1e-15, "maxiter": 2000})
v = np.exp(r.x)
# the certified primal value of the returned point (any v > 0): max(Av) * f(v)
print(json.dumps({"value": float((A @ v).max() * np.sum(D2 / v)), "success": bool(r.success), "residuals": len(res)}))
`

// The max plan against scipy: no point scipy finds may lie below our
// certified lower bound (1e-12 slack for rounding), and ours may lie above
// scipy's by at most the certified gap 1e-8. Skipped without Debian's
// /usr/bin/python3 with scipy (installed in CI).
func TestMaxAgainstScipy(t *testing.T) {
	needScipy(t)
	for _, in := range smallInstances(t) {
		t.Run(in.name, func(t *testing.T) {
			p, err := NewPlan(in.sizes, in.sets, Max, nil)
			if err != nil {
				t.Fatal(err)
			}
			type setJSON struct {
				Attrs  []int   `json:"attrs"`
				Weight float64 `json:"weight"`
			}
			var sj []setJSON
			for _, s := range p.Sets {
				sj = append(sj, setJSON{Attrs: append([]int{}, s.Attrs...), Weight: s.Weight})
			}
			var ref struct {
				Value     float64 `json:"value"`
				Residuals int     `json:"residuals"`
			}
			runScipy(t, maxReferencePy, map[string]any{"sizes": in.sizes, "sets": sj}, &ref)
			if ref.Residuals != len(p.Residuals) {
				t.Fatalf("scipy has %d residuals, plan %d", ref.Residuals, len(p.Residuals))
			}
			if ref.Value < p.LowerBound*(1-1e-12) {
				t.Errorf("scipy's point %.15g lies below the certified bound %.15g", ref.Value, p.LowerBound)
			}
			if p.MaxVariance > ref.Value*(1+1e-8) {
				t.Errorf("plan %.15g is worse than scipy's %.15g beyond the certified gap", p.MaxVariance, ref.Value)
			}
			t.Logf("plan %.12g, bound %.12g, scipy %.12g", p.MaxVariance, p.LowerBound, ref.Value)
		})
	}
}

// pythonPath is the interpreter the scipy references run under.
const pythonPath = "/usr/bin/python3"

// needScipy skips the test without /usr/bin/python3 with scipy (installed
// in CI).
func needScipy(t *testing.T) {
	t.Helper()
	if exec.Command(pythonPath, "-c", "import scipy").Run() != nil {
		t.Skip("no /usr/bin/python3 with scipy")
	}
}

// runScipy runs the Python reference src with in, as JSON, on its stdin and
// decodes the JSON it prints into out, failing the test (with Python's
// stderr) when it does not run or prints something else.
func runScipy(t *testing.T, src string, in, out any) {
	t.Helper()
	script := filepath.Join(t.TempDir(), "reference.py")
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(pythonPath, script)
	cmd.Stdin = bytes.NewReader(data)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("scipy reference: %v\n%s", err, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		t.Fatalf("scipy output %q: %v", stdout.String(), err)
	}
}
