package calibrate

import (
	"bytes"
	"encoding/json"

	"github.com/dpsolve/dpsolve/internal/inputerr"
)

// budgetJSON is a Budget's one JSON encoding, the form ledgers and the
// command line's reports have always written: {"rho": ρ} for ρ-zCDP,
// {"epsilon": ε} for pure ε-DP and {"epsilon": ε, "delta": δ} for
// (ε,δ)-DP. The keys present say the kind, so no "kind" key is needed.
type budgetJSON struct {
	Epsilon *float64 `json:"epsilon,omitempty"`
	Delta   *float64 `json:"delta,omitempty"`
	Rho     *float64 `json:"rho,omitempty"`
}

// MarshalJSON writes b's encoding (see budgetJSON); the zero Budget is
// null.
func (b Budget) MarshalJSON() ([]byte, error) {
	var j budgetJSON
	switch b.kind {
	case "":
		return []byte("null"), nil
	case Concentrated:
		j.Rho = &b.rho
	case Approx:
		j.Epsilon, j.Delta = &b.eps, &b.delta
	default:
		j.Epsilon = &b.eps
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads b's encoding and validates it (as New does): "rho"
// makes a ρ-zCDP budget, "epsilon" with "delta" an (ε,δ)-DP one and
// "epsilon" alone a pure ε-DP one. An unknown key, a parameter of another
// kind (rho with epsilon) or an invalid value is an error wrapping
// ErrInput; null leaves b unchanged.
func (b *Budget) UnmarshalJSON(data []byte) error {
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var j budgetJSON
	if err := dec.Decode(&j); err != nil {
		return inputerr.Errorf("calibrate", "invalid privacy budget %s: %v (want {\"rho\": R}, {\"epsilon\": E} or {\"epsilon\": E, \"delta\": D})", data, err)
	}
	val := func(p *float64) float64 {
		if p == nil {
			return 0
		}
		return *p
	}
	kind := Pure
	switch {
	case j.Rho != nil:
		kind = Concentrated
	case j.Delta != nil:
		kind = Approx
	case j.Epsilon == nil:
		return inputerr.Errorf("calibrate", "privacy budget %s gives neither rho nor epsilon", data)
	}
	nb, err := New(kind, val(j.Epsilon), val(j.Delta), val(j.Rho))
	if err != nil {
		return err
	}
	*b = nb
	return nil
}
