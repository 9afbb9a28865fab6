package workload_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dpsolve/dpsolve/model/workload"
)

func ExampleLoad() {
	// The one entry point every command uses: a built-in string (names and
	// keys are case-insensitive), a W file or a Gram file.
	w, err := workload.Load(workload.Source{Spec: "WRange:m=20,seed=3", N: 16})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(w.Name(), w.Domain(), w.Queries())

	// Junk is rejected, always with the shared ErrInput.
	_, err = workload.Load(workload.Source{Spec: "wrange:m=20,", N: 16})
	fmt.Println(errors.Is(err, workload.ErrInput))
	// Output:
	// wrange(n=16,m=20,seed=3) 16 20
	// true
}

func ExampleAnswerOf() {
	p, _ := workload.NewPrefix(4)
	ans, _ := workload.AnswerOf(p, []float64{1, 2, 3, 4}) // prefix sums, without forming W
	fmt.Println(ans)
	// Output: [1 3 6 10]
}

func ExampleLoad_specFile() {
	// A multi-attribute spec file goes through the same loader: a workload
	// with a dense Gram (built from the per-attribute Grams) when the
	// domain is small enough; larger ones are planned with package plan.
	dir, _ := os.MkdirTemp("", "spec")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "spec.json")
	_ = os.WriteFile(path, []byte(`{"domain": [{"name": "sex", "size": 2}, {"name": "age", "size": 5}],
	  "workload": [{"name": "t", "product": {"sex": "identity", "age": "prefix"}}, {"name": "m", "marginals": {"k": 1}}]}`), 0o600)
	w, err := workload.Load(workload.Source{SpecFile: path})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(w.Domain(), w.Queries(), w.Gram().At(0, 0))
	// Answers in term order: sex × age prefixes (10), then the sex (2) and
	// age (5) marginals.
	ans, _ := workload.AnswerOf(w, []float64{1, 0, 0, 0, 2, 0, 3, 0, 0, 0})
	fmt.Println(ans)
	// Output:
	// 10 17 7
	// [1 1 1 1 3 0 3 3 3 3 3 3 1 3 0 0 2]
}
