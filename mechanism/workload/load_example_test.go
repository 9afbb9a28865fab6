package workload_test

import (
	"errors"
	"fmt"

	"github.com/dpsolve/dpsolve/mechanism/workload"
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
