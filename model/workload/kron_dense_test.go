package workload

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/resources"
	"github.com/dpsolve/dpsolve/model/domain"
)

// denseSpec has every kind of block and term on 3·5·2 = 30 cells: built-in
// blocks, ranges, a matrix file, weights (one of them 0) and marginals.
const denseSpec = `{"domain": [{"name": "a", "size": 3}, {"name": "b", "size": 5}, {"name": "c", "size": 2}],
  "workload": [{"name": "t1", "product": {"a": "identity", "b": "prefix"}},
               {"name": "t2", "weight": 2.5, "product": {"b": {"ranges": [[0, 1], [1, 4], [3, 3]]}, "c": "identity"}},
               {"name": "t3", "weight": 0.3, "product": {"a": {"matrix": "m.csv"}, "b": "allrange", "c": "total"}},
               {"name": "zero", "weight": 0, "product": {"a": "prefix"}},
               {"name": "m", "weight": 1.5, "marginals": {"k": 2}}]}`

func writeDenseSpec(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "m.csv"), []byte("1,-2,0.5\n0,3,1\n"), 0o600))
	p := filepath.Join(dir, "spec.json")
	require.NoError(t, os.WriteFile(p, []byte(denseSpec), 0o600))
	return p
}

// The dense Gram of a spec, accumulated entry by entry from the
// per-attribute Grams, equals WᵀW of the explicitly built W (Kronecker
// products of the blocks' query matrices, an independent route), and its
// answers (Kronecker factors applied one attribute at a time) equal W·x.
func TestDenseKronGramIsWTW(t *testing.T) {
	p := writeDenseSpec(t)
	w, err := Load(Source{SpecFile: p})
	require.NoError(t, err)
	d, ok := w.(*DenseKron)
	require.True(t, ok, "Load of a spec file returns a *DenseKron, got %T", w)
	assert.Equal(t, "spec:"+p, d.Name())
	assert.Equal(t, 30, d.Domain())
	k := d.Kron()
	require.Equal(t, k.Queries(), d.Queries())

	wm, err := k.DenseMatrix(100) // 85 queries over 30 cells
	require.NoError(t, err)
	m, n := wm.Dims()
	require.Equal(t, d.Queries(), m)
	require.Equal(t, 30, n)
	var wtw mat.Dense
	wtw.Mul(wm.T(), wm)
	g := d.Gram()
	// Entries are sums of at most m products of the blocks' entries (small
	// integers and the weights); both routes round each product and sum in
	// a different order, so they agree to a few ulps of the largest entry:
	// 1e-12 relative to it is three orders of magnitude above that.
	scale := mat.Norm(&wtw, math.Inf(1))
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			require.InDelta(t, wtw.At(i, j), g.At(i, j), 1e-12*scale, "V[%d,%d]", i, j)
		}
	}
	// And the package's other structural Gram (KronSym per product).
	ref, err := k.DenseGram(30)
	require.NoError(t, err)
	assert.True(t, mat.EqualApprox(ref, g, 1e-12*scale))
	assert.True(t, mat.Equal(wm, d.Matrix()), "Matrix is the weighted W")

	x := make([]float64, n)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range x {
		x[i] = float64(rng.IntN(20))
	}
	got, err := AnswerOf(d, x)
	require.NoError(t, err)
	want := make([]float64, m)
	mat.NewVecDense(m, want).MulVec(wm, mat.NewVecDense(n, x))
	for i := range want {
		// Integer counts times the blocks' entries: the same few-ulp
		// argument, relative to the largest answer.
		require.InDelta(t, want[i], got[i], 1e-12*(1+math.Abs(want[i])), "answer %d", i)
	}
	_, err = d.Answer(x[:5])
	assert.ErrorIs(t, err, ErrInput, "a histogram of the wrong length")
}

// One attribute, one product term of weight 1: the spec is exactly the
// built-in workload of that name.
func TestDenseKronOneAttributeIsBuiltin(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.json")
	require.NoError(t, os.WriteFile(p, []byte(`{"domain": [{"name": "x", "size": 9}], "workload": [{"product": {"x": "allrange"}}]}`), 0o600))
	w, err := Load(Source{SpecFile: p})
	require.NoError(t, err)
	b, err := NewAllRange(9)
	require.NoError(t, err)
	assert.True(t, mat.Equal(b.Gram(), w.Gram()))
	assert.Equal(t, b.Queries(), w.Queries())
}

// A domain whose dense Gram does not fit is refused with ErrInput, the cell
// count and a pointer to dpsolve plan; bad spec files and bad Source
// combinations are refused with a nil workload.
func TestLoadSpecFileRefusals(t *testing.T) {
	p := writeDenseSpec(t)
	t.Setenv(resources.EnvLimit, "4KiB") // 30² doubles are 7.2 KB
	w, err := Load(Source{SpecFile: p})
	require.ErrorIs(t, err, ErrInput)
	assert.Nil(t, w)
	assert.Contains(t, err.Error(), "30 cells")
	assert.Contains(t, err.Error(), "dpsolve plan")
	assert.Contains(t, err.Error(), p)
	t.Setenv(resources.EnvLimit, "1GiB")

	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"domain": [{"name": "x", "size": 3}], "workload": [{"product": {"y": "prefix"}}]}`), 0o600))
	for name, src := range map[string]Source{
		"missing file":   {SpecFile: filepath.Join(dir, "missing.json")},
		"bad spec":       {SpecFile: bad},
		"spec and --n":   {SpecFile: p, N: 30},
		"spec and Spec":  {SpecFile: p, Spec: "prefix", N: 30},
		"spec and W":     {SpecFile: p, WFile: bad},
		"spec and m":     {SpecFile: p, Queries: 3},
		"not even JSON":  {SpecFile: writeFile(t, dir, "x.json", "prefix")},
		"matrix missing": {SpecFile: writeFile(t, dir, "nomat.json", `{"domain": [{"name": "x", "size": 2}], "workload": [{"product": {"x": {"matrix": "none.csv"}}}]}`)},
	} {
		w, err := Load(src)
		assert.ErrorIs(t, err, ErrInput, name)
		assert.Nil(t, w, name)
		if strings.HasPrefix(name, "spec and") {
			assert.True(t, errors.Is(err, ErrSource), "%s: a Source error: %v", name, err)
		}
	}
	var nilKron *domain.Kron
	_, err = FromKron("", nilKron)
	assert.ErrorIs(t, err, ErrInput)
}

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
	return p
}
