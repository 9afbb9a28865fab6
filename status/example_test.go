package status_test

import (
	"encoding/json"
	"fmt"

	"github.com/dpsolve/dpsolve/status"
)

// A Status prints and encodes as the strings dpsolve's output has always
// carried, and Err turns an unconverged solve into an error.
func ExampleStatus() {
	s := status.IterationLimit
	b, _ := json.Marshal(map[string]status.Status{"status": s})
	fmt.Println(s, string(b))
	fmt.Println(s.Err())
	fmt.Println(status.Converged.Err())
	// Output:
	// iteration_limit {"status":"iteration_limit"}
	// solve did not converge (status iteration_limit)
	// <nil>
}
