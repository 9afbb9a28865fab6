package domain_test

import (
	"fmt"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/model/domain"
	"github.com/dpsolve/dpsolve/model/workload"
)

// Parse a multi-attribute spec and evaluate the expected error of the
// identity strategy (every factor Xᵢ = I) structurally: Σⱼ wⱼ²·Πᵢ tr(Vᵢⱼ).
func ExampleParseSpec() {
	spec := `{"domain": [{"name": "sex", "size": 2}, {"name": "age", "size": 4}],
	  "workload": [{"name": "t1", "product": {"sex": "identity", "age": "prefix"}},
	               {"name": "t2", "weight": 2, "product": {"age": {"ranges": [[0, 1], [2, 3]]}}}]}`
	w, err := domain.ParseSpec(strings.NewReader(spec), "", workload.Blocks)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(w.Name(), w.Cells(), "cells", w.Queries(), "queries")
	xs := []*mat.SymDense{eye(2), eye(4)}
	total, perTerm, _ := w.KronError(xs)
	fmt.Println(total, perTerm)
	// Output:
	// kron(2x4, 2 terms) 8 cells 10 queries
	// 52 [20 32]
}

// A part of a workload is some of its terms on the same domain, answered
// on their own (by one part of a union strategy): its per-term errors are
// the whole workload's for those terms.
func ExampleKron_Part() {
	spec := `{"domain": [{"name": "sex", "size": 2}, {"name": "age", "size": 4}],
	  "workload": [{"name": "t1", "product": {"sex": "identity", "age": "prefix"}},
	               {"name": "t2", "weight": 2, "product": {"age": {"ranges": [[0, 1], [2, 3]]}}}]}`
	w, _ := domain.ParseSpec(strings.NewReader(spec), "", workload.Blocks)
	p, err := w.Part([]int{1})
	if err != nil {
		fmt.Println(err)
		return
	}
	_, perTerm, _ := p.KronError([]*mat.SymDense{eye(2), eye(4)})
	fmt.Println(p.Terms()[0].Name, p.Queries(), "queries", perTerm)
	// Output:
	// t2 2 queries [32]
}

func eye(n int) *mat.SymDense {
	x := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		x.SetSym(i, i, 1)
	}
	return x
}

// A spec whose attributes carry a codebook: a list of values, numeric bins
// (clamped), and a list with an "other" value. The codebook codes a record's
// field and names a code or a run of codes for output.
func ExampleCodebook() {
	spec := `{"domain": [{"name": "sex", "values": ["Female", "Male"]},
	   {"name": "age", "edges": [0, 18, 65, 120], "clamp": true},
	   {"name": "country", "values": ["US", "MX", "other"], "other": "other"}],
	  "workload": [{"name": "m", "marginals": {"k": 1}}]}`
	w, err := domain.ParseSpec(strings.NewReader(spec), "", workload.Blocks)
	if err != nil {
		fmt.Println(err)
		return
	}
	at := w.Attributes()
	fmt.Println(at[0].Size, at[1].Size, at[2].Size)
	sex, age, country := at[0].Codebook, at[1].Codebook, at[2].Codebook
	c, _ := sex.Code(" Male ")
	fmt.Println("Male →", c)
	for _, v := range []string{"17", "18", "64.5", "130"} {
		c, _ := age.Code(v)
		fmt.Printf("%s → %d %s\n", v, c, age.Label(c))
	}
	c, _ = country.Code("CA")
	fmt.Println("CA →", c, country.Label(c))
	fmt.Println(age.RangeLabel(0, 1), sex.RangeLabel(0, 1))
	_, err = sex.Code("M")
	fmt.Println(err)
	// Output:
	// 2 3 3
	// Male → 1
	// 17 → 0 [0, 18)
	// 18 → 1 [18, 65)
	// 64.5 → 1 [18, 65)
	// 130 → 2 [65, 120)
	// CA → 2 other
	// [0, 65) Female..Male
	// is not one of the values "Female", "Male" (add it, an alias, or an "other" value to the spec)
}
