package domain_test

import (
	"fmt"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/mechanism/domain"
	"github.com/dpsolve/dpsolve/mechanism/workload"
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

func eye(n int) *mat.SymDense {
	x := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		x.SetSym(i, i, 1)
	}
	return x
}
