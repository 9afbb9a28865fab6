package main

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/matio"
	"github.com/dpsolve/dpsolve/mechanism/plan"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
)

const planSpec = `{"domain": [{"name": "sex", "size": 2}, {"name": "age", "size": 10}, {"name": "race group", "size": 4}],
  "workload": [{"name": "t1", "product": {"sex": "identity", "age": "prefix"}},
               {"name": "t2", "weight": 2, "product": {"age": {"ranges": [[0, 4], [5, 9]]}, "race group": "identity"}},
               {"name": "m", "marginals": {"k": 1}}]}`

func writeSpec(t *testing.T, s string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "spec.json")
	require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
	return p
}

// dpsolve plan --json: the documented fields; on 80 cells the portfolio
// also runs dense, so lower_bound and above_dense are numbers; --out
// writes strategy.json and factors whose Kronecker product reproduces the
// reported objective through the workload's own error evaluation.
func TestPlanJSONAndOut(t *testing.T) {
	spec := writeSpec(t, planSpec)
	out := filepath.Join(t.TempDir(), "plan")
	code, stdout, stderr := runCLI(t, "plan", "--spec", spec, "--json", "--out", out)
	require.Equal(t, 0, code, stderr)
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &got))
	for _, k := range []string{"cells", "queries", "template", "objective", "lower_bound", "seconds", "templates", "terms"} {
		require.Contains(t, got, k)
	}
	assert.Equal(t, 80.0, got["cells"])
	tried := got["templates"].([]any)
	require.Len(t, tried, 4, "kron, union, dense, marginals")
	// The dense plan is certified optimal, so the portfolio stops there and
	// the marginals template (after it in the list) is skipped.
	assert.Equal(t, "marginals", tried[3].(map[string]any)["template"])
	assert.Contains(t, tried[3].(map[string]any)["error"], "skipped: the dense plan is certified optimal")
	for _, tr := range tried {
		m := tr.(map[string]any)
		assert.Contains(t, m, "template")
		assert.Contains(t, m, "objective")
		assert.Contains(t, m, "seconds")
	}
	obj := got["objective"].(float64)
	assert.LessOrEqual(t, got["lower_bound"].(float64), obj*(1+1e-12))
	assert.GreaterOrEqual(t, got["above_dense"].(float64), -1e-8)
	assert.Len(t, got["terms"].([]any), 3)
	assert.Contains(t, stderr, "dpsolve plan: plan  done", "progress on stderr")

	var sf strategyFile
	data, err := os.ReadFile(filepath.Join(out, "strategy.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &sf))
	assert.Equal(t, got["template"], sf.Template)
	assert.InDelta(t, obj, sf.ExpectedError, 1e-12*obj)
	w, err := domain.LoadSpec(spec, workload.Blocks)
	require.NoError(t, err)
	gram := func(f factorFile) *mat.SymDense {
		a, err := matio.ReadMatrix(filepath.Join(out, f.File))
		require.NoError(t, err)
		_, c := a.Dims()
		x := mat.NewSymDense(c, nil)
		x.SymOuterK(1, a.T())
		return x
	}
	var total float64
	switch sf.Template {
	case "kron":
		require.Len(t, sf.Factors, 3)
		assert.Equal(t, "race group", sf.Factors[2].Attribute)
		assert.Equal(t, "A_race_group.npy", sf.Factors[2].File)
		var xs []*mat.SymDense
		for _, f := range sf.Factors {
			xs = append(xs, gram(f))
		}
		total, _, err = w.KronError(xs)
	case "union":
		var parts []domain.UnionPart
		idx := map[string]int{"t1": 0, "t2": 1, "m": 2}
		sum := 0.0
		for _, p := range sf.Parts {
			up := domain.UnionPart{Weight: p.Weight}
			for _, f := range p.Factors {
				up.X = append(up.X, gram(f))
			}
			for _, tn := range p.Terms {
				up.Terms = append(up.Terms, idx[tn])
			}
			sum += p.Weight * p.Weight
			parts = append(parts, up)
		}
		assert.InDelta(t, 1, sum, 1e-12)
		total, _, err = w.UnionError(parts)
	case "dense":
		a, err := matio.ReadMatrix(filepath.Join(out, sf.File))
		require.NoError(t, err)
		v, err := w.DenseGram(100)
		require.NoError(t, err)
		// tr(V X⁺) with X⁺ = A⁺A⁺ᵀ, A⁺ from the SVD of the written A (the
		// exact optimum of this singular Gram is rank-deficient; the plan
		// itself computes X⁺ from an eigendecomposition of X).
		var svd mat.SVD
		require.True(t, svd.Factorize(a, mat.SVDThin))
		sv := svd.Values(nil)
		var u, vt mat.Dense
		svd.UTo(&u)
		svd.VTo(&vt)
		_, nc := a.Dims()
		pinv := mat.NewDense(nc, len(sv), nil)
		for j, sj := range sv {
			if sj > float64(nc)*0x1p-52*sv[0] {
				for i := 0; i < nc; i++ {
					pinv.Set(i, j, vt.At(i, j)/sj)
				}
			}
		}
		var ap, vap mat.Dense
		ap.Mul(pinv, u.T()) // A⁺ (n×p)
		vap.Mul(v, &ap)
		total = 0
		for i := 0; i < nc; i++ {
			for j := 0; j < ap.RawMatrix().Cols; j++ {
				total += ap.At(i, j) * vap.At(i, j)
			}
		}
	}
	require.NoError(t, err)
	assert.InDelta(t, obj, total, 1e-9*obj, "the written strategy has the reported error")
	assert.False(t, math.IsNaN(total))

	// A second run replaces the plan directory; no temporary directory is left.
	code, _, stderr = runCLI(t, "plan", "--spec", spec, "--template", "kron", "--out", out, "--quiet")
	require.Equal(t, 0, code, stderr)
	entries, err := os.ReadDir(filepath.Dir(out))
	require.NoError(t, err)
	require.Len(t, entries, 1, "only the plan directory: %v", entries)
}

func TestPlanTemplatesText(t *testing.T) {
	spec := writeSpec(t, planSpec)
	for _, tmpl := range []string{"kron", "union", "dense"} {
		code, stdout, stderr := runCLI(t, "plan", "--spec", spec, "--template", tmpl, "--quiet")
		require.Equal(t, 0, code, stderr)
		assert.Contains(t, stdout, "objective")
		assert.Contains(t, stdout, "template      "+tmpl)
	}
	code, stdout, stderr := runCLI(t, "plan", "--spec", spec, "--privacy", "pure", "--quiet", "--json")
	require.Equal(t, 0, code, stderr)
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &got))
	assert.Equal(t, "pure", got["privacy"])
	assert.Nil(t, got["dense_objective"], "no dense comparison under pure ε")
}

func TestPlanErrors(t *testing.T) {
	spec := writeSpec(t, planSpec)
	code, _, _ := runCLI(t, "plan")
	assert.Equal(t, 2, code, "--spec missing")
	code, _, _ = runCLI(t, "plan", "--spec", spec, "--template", "nope")
	assert.Equal(t, 2, code)
	code, _, _ = runCLI(t, "plan", "--spec", spec, "--privacy", "laplace")
	assert.Equal(t, 2, code)
	bad := writeSpec(t, `{"domain": [{"name": "a", "size": 3}], "workload": [{"name": "t", "product": {"b": "identity"}}]}`)
	code, _, stderr := runCLI(t, "plan", "--spec", bad)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, `unknown attribute "b"`)
	// An existing directory that is not a plan is never overwritten; it is
	// refused before planning, as a bad command line (exit 2).
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "keep.txt"), []byte("x"), 0o644))
	code, _, stderr = runCLI(t, "plan", "--spec", spec, "--out", dir, "--quiet")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "not a plan directory")
	_, err := os.Stat(filepath.Join(dir, "keep.txt"))
	assert.NoError(t, err)
	// Dense refuses large domains with a clear message.
	big := writeSpec(t, `{"domain": [{"name": "a", "size": 100}, {"name": "b", "size": 100}], "workload": [{"product": {"a": "identity", "b": "prefix"}}]}`)
	code, _, stderr = runCLI(t, "plan", "--spec", big, "--template", "dense", "--quiet")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "at most 4096 cells")
}

// Interrupted before the rename (Ctrl-C while writing): nothing appears at
// DIR and the temporary directory is removed.
func TestWriteStrategyDirInterrupted(t *testing.T) {
	w, err := domain.ParseSpec(stringsReader(planSpec), "", workload.Blocks)
	require.NoError(t, err)
	res, err := plan.Kron{}.Plan(context.Background(), w, plan.Options{})
	require.NoError(t, err)
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.Error(t, writeStrategyDir(ctx, dir, w, res))
	entries, err := os.ReadDir(parent)
	require.NoError(t, err)
	assert.Empty(t, entries)
	require.NoError(t, writeStrategyDir(context.Background(), dir, w, res))
	_, err = os.Stat(filepath.Join(dir, "strategy.json"))
	assert.NoError(t, err)
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }

// strategyFile decodes DIR/strategy.json as tables.WriteStrategy writes it: "template" with "factors" (kron), "parts" (union) or "file"
// (dense: the n×n matrix). The expected error is "expected_error", not
// "objective", which the marginals template's file uses for its sum|max
// objective.
type strategyFile struct {
	Template      string             `json:"template"`
	Privacy       string             `json:"privacy"`
	ExpectedError float64            `json:"expected_error"`
	Cells         json.Number        `json:"cells"`
	Domain        []domain.Attribute `json:"domain"`
	Factors       []factorFile       `json:"factors,omitempty"`
	Parts         []partFile         `json:"parts,omitempty"`
	File          string             `json:"file,omitempty"`
}

type factorFile struct {
	Attribute string `json:"attribute"`
	File      string `json:"file"`
}

type partFile struct {
	Weight  float64      `json:"weight"`
	Terms   []string     `json:"terms"`
	Factors []factorFile `json:"factors"`
}
