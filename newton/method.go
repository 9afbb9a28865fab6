package newton

import (
	"context"
	"fmt"
)

// Method selects Solve's algorithm, as gonum's optimize.Method does for its
// optimizers; the zero value is MethodNewton. Its text form ("newton",
// "yuan2016": String, MarshalText, ParseMethod) is the name the command
// line takes and JSON output carries.
type Method uint8

const (
	// MethodNewton is dpsolve's default: a Newton method in eigen-coordinates
	// that stops on the certified relative duality gap (for a singular V,
	// the dual interior-point method; see Solve).
	MethodNewton Method = iota
	// MethodYuan2016 is a faithful reproduction of Algorithm 1 of Yuan et al.
	// (KDD 2016), the Matlab ConvexDP code, including its θ regularization,
	// its 5-step CG and its 30-iteration cap.
	MethodYuan2016
)

var methodNames = [...]string{MethodNewton: "newton", MethodYuan2016: "yuan2016"}

// String returns the method's name ("newton", "yuan2016").
func (m Method) String() string {
	if int(m) < len(methodNames) {
		return methodNames[m]
	}
	return fmt.Sprintf("Method(%d)", uint8(m))
}

// ParseMethod returns the Method named name ("newton" or "yuan2016", the
// names Method's String returns); any other name is an error wrapping
// ErrInput.
func ParseMethod(name string) (Method, error) {
	for m, s := range methodNames {
		if s == name {
			return Method(m), nil
		}
	}
	return 0, inputErrorf("unknown method %q (want %q or %q)", name, MethodNewton, MethodYuan2016)
}

// MarshalText encodes m as its name.
func (m Method) MarshalText() ([]byte, error) {
	if int(m) >= len(methodNames) {
		return nil, inputErrorf("unknown method %d", uint8(m))
	}
	return []byte(methodNames[m]), nil
}

// UnmarshalText decodes a name written by MarshalText (see ParseMethod).
func (m *Method) UnmarshalText(text []byte) error {
	v, err := ParseMethod(string(text))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// method is one algorithm's life cycle, driven by run: prepare computes
// the starting point (and may already certify it), step performs one
// iteration and reports whether the method has stopped — because it
// converged, stalled, ran out of iterations or was cancelled; the method
// records which — and certify completes the method's Result: the final
// objective, the certified bound for the caller's V and the strategy.
// Which method runs is decided before any of them starts (see solveWith).
type method interface {
	prepare(ctx context.Context) error
	step(ctx context.Context) (stop bool, err error)
	certify() error
}

// run drives m through its phases.
func run(ctx context.Context, m method) error {
	if err := m.prepare(ctx); err != nil {
		return err
	}
	for {
		stop, err := m.step(ctx)
		if err != nil {
			return err
		}
		if stop {
			return m.certify()
		}
	}
}
