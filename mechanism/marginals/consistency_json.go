package marginals

import (
	"encoding/json"

	"github.com/dpsolve/dpsolve/status"
)

// consistencyJSON is Consistency's wire form: the same fields in the same
// order with the same tags, except that Status travels as the boolean
// "converged" that release reports have always carried
// (TestConsistencyWireForm keeps the two types in step).
type consistencyJSON struct {
	Method                         string   `json:"method"`
	Metric                         string   `json:"metric,omitempty"`
	Tolerance                      float64  `json:"tolerance,omitempty"`
	MaxIterations                  int      `json:"max_iterations,omitempty"`
	Iterations                     int      `json:"iterations"`
	Converged                      bool     `json:"converged"`
	LeastSquaresTotal              float64  `json:"least_squares_total"`
	GrandTotal                     float64  `json:"grand_total,omitempty"`
	ControlledTables               int      `json:"controlled_tables,omitempty"`
	FallbackTables                 int      `json:"fallback_tables,omitempty"`
	MaxInconsistency               float64  `json:"max_inconsistency"`
	MaxInconsistencyBeforeRounding *float64 `json:"max_inconsistency_before_rounding,omitempty"`
	ShiftTowardUniform             float64  `json:"shift_toward_uniform,omitempty"`
	MaxNegativity                  float64  `json:"max_negativity"`
	Tables                         int      `json:"tables"`
}

// MarshalJSON encodes c with Status as "converged": true or false.
func (c Consistency) MarshalJSON() ([]byte, error) {
	return json.Marshal(consistencyJSON{
		Method: c.Method, Metric: c.Metric, Tolerance: c.Tolerance, MaxIterations: c.MaxIterations,
		Iterations: c.Iterations, Converged: c.Status == status.Converged, LeastSquaresTotal: c.LeastSquaresTotal, GrandTotal: c.GrandTotal,
		ControlledTables: c.ControlledTables, FallbackTables: c.FallbackTables, MaxInconsistency: c.MaxInconsistency,
		MaxInconsistencyBeforeRounding: c.MaxInconsistencyBeforeRounding, ShiftTowardUniform: c.ShiftTowardUniform,
		MaxNegativity: c.MaxNegativity, Tables: c.Tables,
	})
}

// UnmarshalJSON decodes the form MarshalJSON writes; "converged": false
// reads as status.IterationLimit, the only way MakeConsistent fails to
// converge.
func (c *Consistency) UnmarshalJSON(b []byte) error {
	var w consistencyJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	st := status.IterationLimit
	if w.Converged {
		st = status.Converged
	}
	*c = Consistency{
		Method: w.Method, Metric: w.Metric, Tolerance: w.Tolerance, MaxIterations: w.MaxIterations,
		Iterations: w.Iterations, Status: st, LeastSquaresTotal: w.LeastSquaresTotal, GrandTotal: w.GrandTotal,
		ControlledTables: w.ControlledTables, FallbackTables: w.FallbackTables, MaxInconsistency: w.MaxInconsistency,
		MaxInconsistencyBeforeRounding: w.MaxInconsistencyBeforeRounding, ShiftTowardUniform: w.ShiftTowardUniform,
		MaxNegativity: w.MaxNegativity, Tables: w.Tables,
	}
	return nil
}
