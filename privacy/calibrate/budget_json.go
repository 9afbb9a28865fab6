package calibrate

import (
	"bytes"
	"encoding/json"
	"fmt"

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

// budgetKeys are the keys of the encoding (budgetJSON's tags).
var budgetKeys = map[string]bool{"epsilon": true, "delta": true, "rho": true}

// members calls visit with each member of the JSON object data, in order.
func members(data []byte, visit func(key string, val json.RawMessage) error) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return inputerr.Errorf("calibrate", "not a JSON object: %.40s", data)
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return inputerr.Errorf("calibrate", "invalid JSON object: %v", err)
		}
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return inputerr.Errorf("calibrate", "invalid JSON object: %v", err)
		}
		if err := visit(t.(string), val); err != nil {
			return err
		}
	}
	return nil
}

// object accumulates the members of a JSON object.
type object struct{ buf bytes.Buffer }

func (o *object) add(key string, val json.RawMessage) error {
	if o.buf.Len() == 0 {
		o.buf.WriteByte('{')
	} else {
		o.buf.WriteByte(',')
	}
	k, err := json.Marshal(key)
	if err != nil {
		return err
	}
	o.buf.Write(k)
	o.buf.WriteByte(':')
	o.buf.Write(val)
	return nil
}

func (o *object) bytes() []byte {
	if o.buf.Len() == 0 {
		return []byte("{}")
	}
	return append(o.buf.Bytes(), '}')
}

// MarshalInline returns the JSON object v marshals to with b's encoding
// written inline, its members right after v's member named after: how a
// ledger entry or a report that carries a Budget keeps the flat keys
// ("rho", "epsilon", "delta") it has always had while the encoding is
// spelled only here. v must marshal to an object (a report's type without
// its own MarshalJSON, the Budget field `json:"-"`). The zero Budget adds
// nothing; a non-zero one whose key v lacks is an error, never dropped.
func MarshalInline(v any, after string, b Budget) ([]byte, error) {
	obj, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if b.IsZero() {
		return obj, nil
	}
	enc, err := b.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var out object
	placed := false
	err = members(obj, func(key string, val json.RawMessage) error {
		if err := out.add(key, val); err != nil || key != after {
			return err
		}
		placed = true
		return members(enc, out.add)
	})
	if err != nil {
		return nil, err
	}
	if !placed {
		return nil, fmt.Errorf("calibrate: the object has no member %q to write the budget after", after)
	}
	return out.bytes(), nil
}

// UnmarshalInline is MarshalInline's inverse: it returns the Budget that
// the members "rho", "epsilon" and "delta" of the JSON object data encode
// (decoded and validated as UnmarshalJSON does; the zero Budget if there
// are none) and the object of data's other members, in order, for the
// caller to decode into its own type.
func UnmarshalInline(data []byte) (Budget, []byte, error) {
	var own, bud object
	err := members(data, func(key string, val json.RawMessage) error {
		if budgetKeys[key] {
			return bud.add(key, val)
		}
		return own.add(key, val)
	})
	if err != nil {
		return Budget{}, nil, err
	}
	var b Budget
	if bud.buf.Len() > 0 {
		if err := b.UnmarshalJSON(bud.bytes()); err != nil {
			return Budget{}, nil, err
		}
	}
	return b, own.bytes(), nil
}
