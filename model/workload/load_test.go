package workload

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

func TestParseRejectsJunk(t *testing.T) {
	for _, s := range []string{"", "prefix:", "prefix:k=1", "nosuch", "wrange:m=3,", "wrange:m=3x", "wrange:m=",
		"wrange:,m=3", "wrange:m=3,m=4", "marginals:dims=2xx2", "marginals:dims=2x", "marginals:dims=", "width:k=2:3"} {
		w, err := Parse(s, 4)
		assert.ErrorIs(t, err, ErrInput, "%q", s)
		assert.Nil(t, w, "%q", s)
	}
	for _, s := range []string{"prefix", "PREFIX", " AllRange ", "Marginals:DIMS=2x2", "WRange:M=5,Seed=3", "width:k=2"} {
		_, err := Parse(s, 4)
		assert.NoError(t, err, "%q", s)
	}
	b1, err := Builtin("Prefix", 5)
	require.NoError(t, err)
	assert.Equal(t, "prefix(n=5)", b1.Name())
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	wcsv := filepath.Join(dir, "w.csv")
	require.NoError(t, os.WriteFile(wcsv, []byte("1,1,0\n0,1,1\n"), 0o600))
	// Symmetric to 5e-10 relative to ‖V‖∞ = 3: inside the stated 1e-9.
	gcsv := filepath.Join(dir, "v.csv")
	require.NoError(t, os.WriteFile(gcsv, []byte("1,1,0\n1.0000000015,2,1\n0,1,1\n"), 0o600))
	// Asymmetric by 1e-6: rejected.
	bad := filepath.Join(dir, "bad.csv")
	require.NoError(t, os.WriteFile(bad, []byte("1,1,0\n1.000003,2,1\n0,1,1\n"), 0o600))

	w, err := Load(Source{WFile: wcsv})
	require.NoError(t, err)
	assert.Equal(t, 3, w.Domain())
	assert.Equal(t, 2, w.Queries())
	g, err := Load(Source{GramFile: gcsv, Queries: 2})
	require.NoError(t, err)
	// The same V as the W file's (up to the symmetrized 1.5e-9 entry).
	assert.InDelta(t, w.Gram().At(0, 1), g.Gram().At(0, 1), 1e-9)
	p, err := Load(Source{Spec: "prefix", N: 3})
	require.NoError(t, err)
	assert.Equal(t, "prefix(n=3)", p.Name())

	for name, s := range map[string]Source{
		"none":          {},
		"two":           {Spec: "prefix", N: 3, WFile: wcsv},
		"n with file":   {WFile: wcsv, N: 3},
		"m with spec":   {Spec: "prefix", N: 3, Queries: 2},
		"asymmetric":    {GramFile: bad, Queries: 2},
		"missing file":  {WFile: filepath.Join(dir, "nope.npy")},
		"negative m":    {GramFile: gcsv, Queries: -1},
		"spec needs n":  {Spec: "prefix"},
		"bad extension": {WFile: filepath.Join(dir, "w.xlsx")},
	} {
		w, err := Load(s)
		assert.ErrorIs(t, err, ErrInput, name)
		assert.Nil(t, w, name)
	}
	_, err = Load(Source{})
	assert.True(t, errors.Is(err, ErrSource))
}

// Every workload's own Answer method agrees with the product W·x formed
// from its explicit matrix (an independent computation).
func TestAnswerMatchesMatrix(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, 7)
	for i := range x {
		x[i] = float64(rng.IntN(20))
	}
	ws := []Explicit{&Identity{N: 7}, &Total{N: 7}, &Prefix{N: 7}, &AllRange{N: 7}, &WidthKRange{N: 7, K: 3}}
	for _, w := range ws {
		got, err := AnswerOf(w, x)
		require.NoError(t, err)
		wm := w.Matrix()
		m, _ := wm.Dims()
		want := mat.NewVecDense(m, nil)
		want.MulVec(wm, mat.NewVecDense(len(x), x))
		assert.Equal(t, want.RawVector().Data, got, w.Name()) // integer counts: exact
		_, ok := w.(Answerer)
		assert.True(t, ok, "%s has a fast Answer", w.Name())
	}
	g, err := FromGram("g", (&Prefix{N: 7}).Gram(), 7)
	require.NoError(t, err)
	_, err = AnswerOf(g, x)
	assert.ErrorIs(t, err, ErrInput)
	_, err = AnswerOf(&Prefix{N: 7}, x[:3])
	assert.ErrorIs(t, err, ErrInput)
}
