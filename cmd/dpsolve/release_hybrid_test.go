package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hybridJSON is the part of release.json these tests read.
type hybridJSON struct {
	Template string  `json:"template"`
	Plan     string  `json:"plan"`
	Rho      float64 `json:"rho"`
	Epsilon  float64 `json:"epsilon"`
	Queries  int     `json:"queries"`
	Weighted float64 `json:"expected_weighted_error"`
	Terms    []struct {
		Name   string  `json:"name"`
		Weight float64 `json:"weight"`
		Err    float64 `json:"expected_squared_error"`
	} `json:"terms"`
	Parts []struct {
		Kind     string   `json:"kind"`
		Weight   float64  `json:"weight"`
		Terms    []string `json:"terms"`
		Share    float64  `json:"share"`
		Rho      float64  `json:"rho"`
		Epsilon  float64  `json:"epsilon"`
		Weighted float64  `json:"expected_weighted_error"`
	} `json:"union_parts"`
}

// budgetArgs are the flags of a ρ (pure false) or pure ε budget of size v.
func budgetArgs(pure bool, v float64) []string {
	if pure {
		return []string{"--eps", strconv.FormatFloat(v, 'g', -1, 64)}
	}
	return []string{"--rho", strconv.FormatFloat(v, 'g', -1, 64)}
}

func releaseDry(t *testing.T, args ...string) (hybridJSON, string) {
	t.Helper()
	code, stdout, stderr := releaseCLI(t, append([]string{"release", "--dry-run", "--json"}, args...)...)
	require.Equal(t, 0, code, stderr)
	var j hybridJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &j))
	return j, stderr
}

// specTerms writes a spec of the named terms of examples/adult/mixed.json.
func specTerms(t *testing.T, dir string, names []string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", "adult", "mixed.json"))
	require.NoError(t, err)
	var s struct {
		Domain   json.RawMessage   `json:"domain"`
		Workload []json.RawMessage `json:"workload"`
	}
	require.NoError(t, json.Unmarshal(b, &s))
	var keep []string
	for _, raw := range s.Workload {
		var term struct {
			Name string `json:"name"`
		}
		require.NoError(t, json.Unmarshal(raw, &term))
		for _, n := range names {
			if n == term.Name {
				keep = append(keep, string(raw))
			}
		}
	}
	require.Len(t, keep, len(names))
	path := filepath.Join(dir, strings.Join(names, "+")+".json")
	require.NoError(t, os.WriteFile(path, []byte(`{"domain": `+string(s.Domain)+`, "workload": [`+strings.Join(keep, ",")+`]}`), 0o644))
	return path
}

// On the Adult mixed spec (two marginals and a weighted prefix×identity
// product), release --template best measures the hybrid union part by
// part. Independent references: each part released alone from its own spec
// at the whole budget, with the part's own template, has error Eₖ; at
// share sₖ its error is Eₖ/sₖ under ρ-zCDP (σ² = 1/(2ρsₖ)) and Eₖ/sₖ²
// under pure ε (Laplace variance 2/(εsₖ)²). The union's closed-form weights
// are the shares minimizing Σ Eₖ/sₖᵖ over Σ sₖ = 1: sₖ ∝ √Eₖ with total
// (Σ√Eₖ)² (ρ), sₖ ∝ Eₖ^⅓ with total (Σ Eₖ^⅓)³ (ε). The release's total is
// also the planner's objective times the unit noise variance. And no
// --split terms share vector beats it, the best one (closed form over the
// terms' own errors) included.
func TestReleaseHybridUnionAdultMixed(t *testing.T) {
	spec := filepath.Join("..", "..", "examples", "adult", "mixed.json")
	dir := t.TempDir()
	objRE := regexp.MustCompile(`planned with template union \(objective ([0-9.e+-]+) per unit noise`)
	for _, tc := range []struct {
		pure   bool
		budget float64
	}{{false, 0.5}, {true, 1}} {
		t.Run(fmt.Sprintf("pure=%v", tc.pure), func(t *testing.T) {
			b := budgetArgs(tc.pure, tc.budget)
			j, stderr := releaseDry(t, append([]string{"--spec", spec, "--template", "best"}, b...)...)
			assert.Equal(t, "union", j.Template)
			assert.Contains(t, j.Plan, "measured part by part")
			require.Len(t, j.Parts, 2, "the marginals together, the product alone")
			assert.Equal(t, "marginals", j.Parts[0].Kind)
			assert.Equal(t, "kron", j.Parts[1].Kind)
			p := 1.0 // exponent of the share in a part's error
			unit := 1 / (2 * tc.budget)
			if tc.pure {
				p, unit = 2, 2/(tc.budget*tc.budget)
			}
			shareSum, spent, wsum, total, root := 0.0, 0.0, 0.0, 0.0, 0.0
			for _, part := range j.Parts {
				shareSum += part.Share
				spent += part.Rho + part.Epsilon
				// The share the weight implies: w² (Σw² = 1) or w (Σw = 1).
				assert.InEpsilon(t, math.Pow(part.Weight, 3-p), part.Share, 1e-9)
				wsum += math.Pow(part.Weight, 3-p)
				alone, _ := releaseDry(t, append([]string{"--spec", specTerms(t, dir, part.Terms), "--template", part.Kind, "--quiet"}, b...)...)
				// The same planner on the same terms: equal to its
				// tolerance (1e-6 relative, the block solves' stopping rule).
				assert.InEpsilon(t, alone.Weighted/math.Pow(part.Share, p), part.Weighted, 1e-6, part.Terms)
				total += part.Weighted
				root += math.Pow(alone.Weighted, 1/(p+1))
			}
			assert.InDelta(t, 1, shareSum, 1e-12)
			assert.InDelta(t, tc.budget, spent, 1e-12*tc.budget, "the parts' budgets add up to the given one")
			assert.InDelta(t, 1, wsum, 1e-9, "the union's weights have sensitivity 1")
			assert.InEpsilon(t, total, j.Weighted, 1e-12)
			assert.InEpsilon(t, math.Pow(root, p+1), j.Weighted, 1e-6, "the closed-form optimal shares")
			m := objRE.FindStringSubmatch(stderr)
			require.NotNil(t, m, stderr)
			obj, err := strconv.ParseFloat(m[1], 64)
			require.NoError(t, err)
			assert.InEpsilon(t, obj*unit, j.Weighted, 1e-5, "objective × unit noise variance (objective printed to 6 digits)")

			// --split terms: fixed share vectors, then the best one.
			split := func(shares string) hybridJSON {
				s, _ := releaseDry(t, append([]string{"--spec", spec, "--template", "best", "--quiet", "--split", "terms:" + shares}, b...)...)
				return s
			}
			eq := split("1,1,1")
			for _, sv := range []string{"8,1,1", "2,1,1", "1,1,4", "1,1,2"} {
				assert.LessOrEqual(t, j.Weighted, split(sv).Weighted, sv)
			}
			opt := make([]string, len(eq.Terms))
			for i, term := range eq.Terms {
				full := term.Weight * term.Err * math.Pow(1.0/3, p) // at the whole budget
				opt[i] = strconv.FormatFloat(math.Pow(full, 1/(p+1)), 'g', -1, 64)
			}
			best := split(strings.Join(opt, ","))
			assert.LessOrEqual(t, j.Weighted, best.Weighted, "the best --split terms shares %v", opt)
			t.Logf("best %.6g (unweighted terms: %v); best split %.6g at %v", j.Weighted, j.Terms, best.Weighted, opt)
		})
	}
}

// A real release of a hybrid union: one charge of exactly the given
// budget, every query answered; under (ε,δ) the union is kept to
// Kronecker parts measured jointly (no union_parts).
func TestReleaseHybridUnionCharge(t *testing.T) {
	dir, _, data, _ := relFixture(t)
	spec := filepath.Join(dir, "hybrid.json")
	require.NoError(t, os.WriteFile(spec, []byte(`{"domain": [{"name": "a", "size": 12}, {"name": "b", "size": 4}, {"name": "c", "size": 2}],
	 "workload": [{"name": "ac", "marginals": {"sets": [["a", "c"]]}},
	              {"name": "bc", "marginals": {"sets": [["b", "c"]]}},
	              {"name": "p", "weight": 2, "product": {"a": "prefix", "c": "identity"}}]}`), 0o644))
	led := filepath.Join(dir, "budget.json")
	require.NoError(t, os.WriteFile(led, []byte(`{"limit": {"rho": 1}}`), 0o644))
	out := filepath.Join(dir, "out")
	code, stdout, stderr := releaseCLI(t, "release", "--spec", spec, "--data", data, "--template", "union", "--rho", "0.8",
		"--budget-file", led, "--insecure-seed", "5", "--out", out, "--json")
	require.Equal(t, 0, code, stderr)
	var j hybridJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &j))
	require.Len(t, j.Parts, 2)
	kinds := []string{j.Parts[0].Kind, j.Parts[1].Kind}
	assert.ElementsMatch(t, []string{"kron", "marginals"}, kinds)
	assert.InDelta(t, 0.8, j.Parts[0].Rho+j.Parts[1].Rho, 1e-15)
	rec, err := os.ReadFile(filepath.Join(out, "release.json"))
	require.NoError(t, err)
	assert.Contains(t, string(rec), `"union_parts"`)
	assertOneCharge(t, led, "0.8")
	assertAnswered(t, out, j.Queries)

	// A budget in range whose parts' shares are not: refused, clearly.
	code, _, stderr = releaseCLI(t, "release", "--spec", spec, "--template", "union", "--rho", "1.5e-12", "--dry-run")
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, "below the usable range")

	a, _ := releaseDry(t, "--spec", spec, "--template", "union", "--eps", "1", "--delta", "1e-6")
	assert.Empty(t, a.Parts)
	assert.Equal(t, "union", a.Template)
}
