package mf

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/matio"
	"github.com/dpsolve/dpsolve/privacy/noise"
)

func testBLT(t *testing.T) *BLT {
	b, err := NewBLT([]float64{0.98, 0.7}, []float64{0.9, 0.3})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// NextFrom on given normals equals the dense solve C·W = Z (columns of Z
// the normal vectors' coordinates) for a BLT and a banded Toeplitz C, to
// 1e-12 (O(1) entries, n = 30, backward-stable triangular solve).
func TestStreamGivenNormals(t *testing.T) {
	const n, dim = 30, 3
	rng := rand.New(rand.NewPCG(1, 2))
	z := mat.NewDense(n, dim, nil)
	for i := 0; i < n; i++ {
		for k := 0; k < dim; k++ {
			z.Set(i, k, rng.NormFloat64())
		}
	}
	b := testBLT(t)
	band := []float64{1, 0.5, 0.3, 0.15}
	gb, _ := NewBLTGenerator(b, dim, 0, nil)
	gt, _ := NewToeplitzGenerator(band, dim, 0, nil)
	for name, c := range map[string][]float64{"blt": b.Coefs(n), "banded": band} {
		g := gb
		if name == "banded" {
			g = gt
		}
		var want mat.Dense
		if err := want.Solve(denseToeplitz(c, n), z); err != nil {
			t.Fatal(err)
		}
		for s := 0; s < n; s++ {
			w, err := g.NextFrom(z.RawRowView(s))
			if err != nil {
				t.Fatal(err)
			}
			for k := range w {
				if math.Abs(w[k]-want.At(s, k)) > 1e-12 {
					t.Fatalf("%s step %d: %v, dense %v", name, s, w[k], want.At(s, k))
				}
			}
		}
	}
	if _, err := gb.Next(); err == nil {
		t.Fatal("Next without a source accepted")
	}
}

// The streamed noise (seeded source: a simulation) has covariance
// σ²·C⁻¹C⁻ᵀ: every entry of the empirical covariance of d = 20000
// replicates within 5 standard errors (maxZ; the chance of a false alarm
// over the 36 entries is below 2e-5), while white noise σ²I — what a
// generator that forgot the correlation would give — is rejected by far
// (power check).
func TestStreamCovariance(t *testing.T) {
	const n, d, sigma = 8, 20000, 1.5
	b := testBLT(t)
	for name, c := range map[string][]float64{"blt": b.Coefs(n), "banded": {1, 0.5, 0.3}} {
		var g *StreamGenerator
		var err error
		if name == "blt" {
			g, err = NewBLTGenerator(b, d, sigma, noise.NewSeededInsecure(3))
		} else {
			g, err = NewToeplitzGenerator(c, d, sigma, noise.NewSeededInsecure(3))
		}
		if err != nil {
			t.Fatal(err)
		}
		if g.Private() {
			t.Fatal("a seeded source reported private")
		}
		w := mat.NewDense(n, d, nil)
		for s := 0; s < n; s++ {
			row, err := g.Next()
			if err != nil {
				t.Fatal(err)
			}
			w.SetRow(s, row)
		}
		var inv mat.TriDense
		if err := inv.InverseTri(denseToeplitz(c, n)); err != nil {
			t.Fatal(err)
		}
		var cov mat.SymDense
		cov.SymOuterK(1, &inv)
		s2 := g.Scale() * g.Scale()
		if z := maxZ(w, s2, &cov); z > 5 {
			t.Fatalf("%s: covariance off by %.2f standard errors", name, z)
		}
		white := mat.NewSymDense(n, nil)
		for i := 0; i < n; i++ {
			white.SetSym(i, i, 1)
		}
		if z := maxZ(w, s2, white); z < 20 {
			t.Fatalf("%s: power check: white noise only %.2f standard errors away", name, z)
		}
	}
}

// The Python module python/dpsolve_noise.py (numpy only) streams the same
// noise as NextFrom from blt.json and toeplitz.json for the same normals,
// to 1e-10. It needs /usr/bin/python3 with numpy: without it the test
// skips, except under CI=true, where numpy is installed and its absence is
// a broken setup. The module ships with the repository, so a missing
// module is a failure everywhere.
func TestPythonNoiseModule(t *testing.T) {
	module, _ := filepath.Abs("../../python/dpsolve_noise.py")
	if _, err := os.Stat(module); err != nil {
		t.Fatalf("the Python noise module is missing from the tree: %v", err)
	}
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import numpy").Run(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s lacks numpy under CI: %v", py, err)
		}
		t.Skipf("%s lacks numpy: %v", py, err)
	}
	const steps, dim = 50, 4
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 6))
	z := mat.NewDense(steps, dim, nil)
	for i := 0; i < steps; i++ {
		for k := 0; k < dim; k++ {
			z.Set(i, k, rng.NormFloat64())
		}
	}
	in := filepath.Join(dir, "z.npy")
	if err := matio.WriteMatrix(in, z); err != nil {
		t.Fatal(err)
	}
	b := testBLT(t)
	bj, _ := json.Marshal(BLTJSON(b))
	tj, _ := json.Marshal(map[string]any{"coefs": []float64{1, 0.5, 0.3, 0.15}})
	os.WriteFile(filepath.Join(dir, "blt.json"), bj, 0o644)
	os.WriteFile(filepath.Join(dir, "toeplitz.json"), tj, 0o644)
	for _, file := range []string{"blt.json", "toeplitz.json"} {
		out := filepath.Join(dir, file+".out.npy")
		cmd := exec.Command(py, module, "--strategy", filepath.Join(dir, file), "--steps", "50", "--dim", "4", "--normals", in, "--out", out)
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", file, err, msg)
		}
		got, err := matio.ReadMatrix(out)
		if err != nil {
			t.Fatal(err)
		}
		var g *StreamGenerator
		if file == "blt.json" {
			g, _ = NewBLTGenerator(b, dim, 0, nil)
		} else {
			g, _ = NewToeplitzGenerator([]float64{1, 0.5, 0.3, 0.15}, dim, 0, nil)
		}
		for s := 0; s < steps; s++ {
			w, _ := g.NextFrom(z.RawRowView(s))
			for k := range w {
				if math.Abs(w[k]-got.At(s, k)) > 1e-10*(1+math.Abs(w[k])) {
					t.Fatalf("%s step %d: Python %v, Go %v", file, s, got.At(s, k), w[k])
				}
			}
		}
	}
}
