package domain_test

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/mechanism/domain"
	"github.com/dpsolve/dpsolve/mechanism/workload"
)

// FuzzParseSpec: the spec parser never panics; every error wraps ErrInput;
// every accepted spec has a consistent cell count, a positive query count,
// and a finite expected error for the identity strategy equal to
// Σⱼ wⱼ²·Πᵢ tr(Vᵢⱼ) computed from the blocks' Grams directly.
// Run: go test ./mechanism/domain -fuzz FuzzParseSpec (the seed corpus
// below and in testdata/fuzz runs in every go test).
func FuzzParseSpec(f *testing.F) {
	seeds := []string{
		`{"domain": [{"name": "sex", "size": 2}, {"name": "age", "size": 11}], "workload": [{"name": "t1", "product": {"sex": "identity", "age": "prefix"}}, {"name": "m", "marginals": {"k": 1}}]}`,
		`{"domain": [{"name": "a", "size": 4}], "workload": [{"product": {"a": {"ranges": [[0, 1], [1, 3]]}}}, {"weight": 0.5, "product": {"a": "allrange"}}]}`,
		`{"domain": [{"name": "a", "size": 3}, {"name": "b", "size": 2}], "workload": [{"marginals": {"upto": 2}}]}`,
		`{"domain": [{"name": "a", "size": 3}, {"name": "b", "size": 2}], "workload": [{"marginals": {"sets": [["b"], ["a", "b"]]}}]}`,
		`{"domain": [{"name": "a", "size": 5}], "workload": [{"product": {"a": "width:k=2"}}, {"product": {"a": "identitytotal"}}]}`,
		`{"domain": [{"name": "a", "size": 5}], "workload": [{"product": {"a": {"matrix": "x.npy"}}}]}`,
		`{"domain": [{"name": "a", "size": 5}], "workload": [{"product": {"a": "wrange:m=7,seed=2"}}]}`,
		`{"domain": [{"name": "a", "size": 2}, {"name": "b", "size": 2}], "workload": [{"product": {"a": {"ranges": [[0, 0]]}}}]}`,
		`{"domain": [], "workload": []}`,
		`{"domain": [{"name": "a", "size": 1e1}], "workload": [{"weight": 1e308, "product": {}}]}`,
		`[1, 2]`,
		`{"domain": [{"name": "a", "size": 2}], "workload": [{"product": {"a": "identity", "a": "total"}}]}`,
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		if len(spec) > 1<<12 || !smallDomain(spec) {
			return // keeps per-input memory and time small; sizes are covered by the unit tests
		}
		k, err := domain.ParseSpec(strings.NewReader(spec), t.TempDir(), workload.Blocks)
		if err != nil {
			if !errors.Is(err, inputerr.ErrInput) {
				t.Fatalf("error does not wrap ErrInput: %v", err)
			}
			return
		}
		cells := 1
		xs := make([]*mat.SymDense, 0)
		for _, a := range k.Attributes() {
			cells *= a.Size
			x := mat.NewSymDense(a.Size, nil)
			for i := 0; i < a.Size; i++ {
				x.SetSym(i, i, 1)
			}
			xs = append(xs, x)
		}
		if cells != k.Cells() || k.Queries() <= 0 {
			t.Fatalf("cells %d (want %d), queries %d", k.Cells(), cells, k.Queries())
		}
		total, _, err := k.KronError(xs)
		if err != nil {
			t.Fatal(err)
		}
		want := 0.0
		for _, p := range k.Products() {
			e := k.Weight2(p)
			for _, b := range p.Blocks {
				e *= mat.Trace(b.Gram())
			}
			want += e
		}
		if math.IsNaN(total) || math.Abs(total-want) > 1e-9*math.Abs(want) && !(math.IsInf(total, 1) && math.IsInf(want, 1)) {
			t.Fatalf("identity error %v, want %v", total, want)
		}
	})
}

// smallDomain reports whether spec's domain sizes (where it parses that far)
// are all at most 64 and its random blocks small.
func smallDomain(spec string) bool {
	var top struct {
		Domain []struct {
			Size json.Number `json:"size"`
		} `json:"domain"`
	}
	if json.Unmarshal([]byte(spec), &top) != nil {
		return true // rejected before any allocation
	}
	for _, a := range top.Domain {
		if v, err := a.Size.Float64(); err == nil && v > 64 {
			return false
		}
	}
	return !strings.Contains(spec, "m=") || len(spec) < 600
}
