package ledger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// agreeTol is the relative tolerance within which an entry's recorded
// charged_* value agrees with the charge computed from its budget. Charges
// written by Spend are the computed values themselves (JSON round-trips a
// float64 exactly), so they agree exactly; the tolerance admits a
// hand-written decimal such as "charged_rho": 0.005 for a pure ε = 0.1
// entry, whose ε²/2 is 0.005000000000000001 in binary. It is the limit
// comparison's slack: what the ledger sums is the computed charge, never
// the recorded one, so the tolerance cannot undercount.
const agreeTol = slack

// fileJSON is a ledger file's members, the entries kept raw so that each
// is decoded, checked and named on its own.
type fileJSON struct {
	Limit Limit             `json:"limit"`
	Spent []json.RawMessage `json:"spent"`
}

// chargedJSON reads which charged_* members an entry records.
type chargedJSON struct {
	ChargedRho     *float64 `json:"charged_rho"`
	ChargedEpsilon *float64 `json:"charged_epsilon"`
	ChargedDelta   *float64 `json:"charged_delta"`
}

// UnmarshalJSON reads and validates a ledger, so that a File decoded by any
// means counts what each entry says it spent:
//
//   - a member that appears twice in one object (compared as encoding/json
//     matches them, ignoring case) makes the ledger invalid, wherever it is;
//     so does an unknown member;
//   - the limit must be valid (see Limit);
//   - each entry must record a valid budget of its kind, and its charge is
//     computed from that budget in the ledger's unit by InUnit, the
//     conversion Spend charges with; an entry whose budget cannot be
//     converted (an (ε,δ) entry in a ρ ledger, a ρ entry in an (ε,δ) one)
//     makes the ledger invalid;
//   - a charged_* member an entry records must agree with the computed
//     charge (relative tolerance 1e-12); one that is absent is the computed
//     charge (an entry written by hand or by another tool).
//
// The entries' Charged* fields are set to the computed charges, so Total
// sums what the budgets say. Errors wrap ErrInput and name the entry by its
// position (1-based) and label.
func (f *File) UnmarshalJSON(data []byte) error {
	if err := duplicateMember(data); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var j fileJSON
	if err := dec.Decode(&j); err != nil {
		return errorf("not a valid ledger: %v (a new ledger is {\"limit\": {\"rho\": R}} or {\"limit\": {\"epsilon\": E, \"delta\": D}})", err)
	}
	if err := j.Limit.validate(); err != nil {
		return err
	}
	spent := make([]Entry, len(j.Spent))
	for i, raw := range j.Spent {
		e, err := entryCharge(raw, j.Limit)
		if err != nil {
			return errorf("%s: %s", entryName(i, raw), bare(err))
		}
		spent[i] = e
	}
	*f = File{Limit: j.Limit, Spent: spent}
	return nil
}

// entryCharge decodes one entry and sets its charge from its budget (see
// File.UnmarshalJSON).
func entryCharge(raw json.RawMessage, l Limit) (Entry, error) {
	var e Entry
	if err := json.Unmarshal(raw, &e); err != nil {
		return Entry{}, err
	}
	if e.Budget.IsZero() {
		return Entry{}, errorf("records no budget (want \"kind\" with \"rho\", \"epsilon\" or \"epsilon\" and \"delta\")")
	}
	add, err := InUnit(e.Budget, l)
	if err != nil {
		return Entry{}, errorf("its budget %v cannot be counted in this ledger (limit %s): %s", e.Budget, l, bare(err))
	}
	var rec chargedJSON
	if err := json.Unmarshal(raw, &rec); err != nil {
		return Entry{}, err
	}
	for _, c := range []struct {
		name     string
		recorded *float64
		computed float64
	}{
		{"charged_rho", rec.ChargedRho, add.Rho},
		{"charged_epsilon", rec.ChargedEpsilon, add.Epsilon},
		{"charged_delta", rec.ChargedDelta, add.Delta},
	} {
		if c.recorded != nil && !agree(*c.recorded, c.computed) {
			return Entry{}, errorf("records %s %v, but its budget %v costs %s in this ledger's unit", c.name, *c.recorded, e.Budget, add.In(l))
		}
	}
	e.ChargedRho, e.ChargedEpsilon, e.ChargedDelta = add.Rho, add.Epsilon, add.Delta
	return e, nil
}

// bare returns err's message without the "pkg: invalid input: " that
// inputerr.Errorf puts before it, for an error worded inside another.
func bare(err error) string {
	if w, ok := err.(interface{ Unwrap() []error }); ok {
		if u := w.Unwrap(); len(u) == 2 && u[0] == ErrInput {
			return u[1].Error()
		}
	}
	return err.Error()
}

// agree reports whether a recorded charge agrees with the computed one.
func agree(recorded, computed float64) bool {
	return recorded == computed || math.Abs(recorded-computed) <= agreeTol*math.Abs(computed)
}

// entryName names entry i (0-based) of a ledger for messages: `entry 2
// (label "tables v1")`, its label read leniently from the raw entry.
func entryName(i int, raw json.RawMessage) string {
	var l struct {
		Label string `json:"label"`
	}
	_ = json.Unmarshal(raw, &l) // a broken entry still gets its number
	if l.Label == "" {
		return fmt.Sprintf("entry %d (no label)", i+1)
	}
	return fmt.Sprintf("entry %d (label %q)", i+1, l.Label)
}

// duplicateMember returns an error naming the first member of the ledger
// data that repeats a member of the same object: encoding/json would keep
// the last silently, so a hand-edited {"rho": 0.9, "rho": 0.1} would count
// 0.1. Members are compared as encoding/json matches them to fields,
// ignoring case.
func duplicateMember(data []byte) error {
	keys, vals, ok := objectMembers(data)
	if !ok {
		return nil // not an object: the strict decode says so
	}
	seen := map[string]bool{}
	for i, k := range keys {
		if seen[foldKey(k)] {
			return errorf("not a valid ledger: the member %q appears twice", k)
		}
		seen[foldKey(k)] = true
		switch foldKey(k) {
		case "limit":
			if p := duplicatePath(vals[i]); p != "" {
				return errorf("not a valid ledger: the limit has the member %q twice", p)
			}
		case "spent":
			var entries []json.RawMessage
			if json.Unmarshal(vals[i], &entries) != nil {
				continue // the strict decode says what is wrong
			}
			for n, e := range entries {
				if p := duplicatePath(e); p != "" {
					return errorf("not a valid ledger: %s has the member %q twice", entryName(n, e), p)
				}
			}
		default:
			if p := duplicatePath(vals[i]); p != "" {
				return errorf("not a valid ledger: %q has the member %q twice", k, p)
			}
		}
	}
	return nil
}

// duplicatePath returns the path (members joined by ".", array positions
// as [i]) of the first repeated member anywhere in the JSON value data,
// or "" if there is none.
func duplicatePath(data json.RawMessage) string {
	if keys, vals, ok := objectMembers(data); ok {
		seen := map[string]bool{}
		for i, k := range keys {
			if seen[foldKey(k)] {
				return k
			}
			seen[foldKey(k)] = true
			if p := duplicatePath(vals[i]); p != "" {
				return k + "." + p
			}
		}
		return ""
	}
	var arr []json.RawMessage
	if json.Unmarshal(data, &arr) == nil {
		for i, v := range arr {
			if p := duplicatePath(v); p != "" {
				return fmt.Sprintf("[%d].%s", i, p)
			}
		}
	}
	return ""
}

// foldKey is the form in which encoding/json compares a member's name with
// a field's (case-insensitively, with Unicode simple folding, so "ſ" is
// "s" and the Kelvin sign is "k").
func foldKey(k string) string { return strings.ToLower(strings.ToUpper(k)) }

// objectMembers returns the member names and values of the JSON object
// data, in order; ok is false when data is not a well-formed object.
func objectMembers(data []byte) (keys []string, vals []json.RawMessage, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, false
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, false
		}
		k, isKey := t.(string)
		if !isKey {
			return nil, nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, false
		}
		keys, vals = append(keys, k), append(vals, v)
	}
	return keys, vals, true
}
