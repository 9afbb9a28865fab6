package domain_test

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
)

// FuzzParseSpec: the spec parser never panics; every error wraps ErrInput;
// every accepted spec has a consistent cell count, a positive query count,
// and a finite expected error for the identity strategy equal to
// Σⱼ wⱼ²·Πᵢ tr(Vᵢⱼ) computed from the blocks' Grams directly.
// Run: go test ./model/domain -fuzz FuzzParseSpec (the seed corpus
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
		`{"domain": [{"name": "sex", "values": ["Female", "Male"]}, {"name": "age", "edges": [17, 30, 50.5, 91], "clamp": true}], "workload": [{"product": {"sex": "identity", "age": "prefix"}}]}`,
		`{"domain": [{"name": "c", "values": ["US", "MX", "other"], "other": "other", "aliases": {"USA": "US"}}], "workload": [{"marginals": {"k": 1}}]}`,
		`{"domain": [{"name": "c", "values": ["a", "a"]}], "workload": [{"marginals": {"k": 1}}]}`,
		`{"domain": [{"name": "c", "edges": [1, 1]}], "workload": [{"marginals": {"k": 1}}]}`,
		`{"domain": [{"name": "c", "edges": [0, 1e400]}], "workload": [{"marginals": {"k": 1}}]}`,
		`{"domain": [{"name": "c", "size": 3, "values": ["x", "y"]}], "workload": [{"marginals": {"k": 1}}]}`,
		`{"domain": [{"name": "answer", "size": 3}], "workload": [{"marginals": {"k": 1}}]}`,
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
		// Every codebook gives the attribute's size and maps each code's
		// label (a value, or a bin's lower edge and midpoint) back to it.
		for _, a := range k.Attributes() {
			cb := a.Codebook
			if cb == nil {
				continue
			}
			if cb.Size() != a.Size {
				t.Fatalf("attribute %q: size %d, codebook %d", a.Name, a.Size, cb.Size())
			}
			for i := 0; i < a.Size; i++ {
				if cb.Binned() {
					mid := cb.Edges[i] + (cb.Edges[i+1]-cb.Edges[i])/2
					for _, v := range []float64{cb.Edges[i], mid} {
						if c, err := cb.CodeNumber(v); err != nil || c != i && v == cb.Edges[i] {
							t.Fatalf("attribute %q: value %v gives code %d (%v), want %d", a.Name, v, c, err, i)
						}
					}
					continue
				}
				if c, err := cb.Code(cb.Label(i)); err != nil || c != i {
					t.Fatalf("attribute %q: label %q gives code %d (%v), want %d", a.Name, cb.Label(i), c, err, i)
				}
			}
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
			Size   json.Number       `json:"size"`
			Values []json.RawMessage `json:"values"`
			Edges  []json.RawMessage `json:"edges"`
		} `json:"domain"`
	}
	if json.Unmarshal([]byte(spec), &top) != nil {
		return true // rejected before any allocation
	}
	for _, a := range top.Domain {
		if v, err := a.Size.Float64(); err == nil && v > 64 || len(a.Values) > 64 || len(a.Edges) > 65 {
			return false
		}
	}
	return !strings.Contains(spec, "m=") || len(spec) < 600
}
