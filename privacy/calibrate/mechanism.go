package calibrate

import (
	"fmt"
	"strings"

	"github.com/dpsolve/dpsolve/internal/inputerr"
)

// A mechanism is a value of the command line's --mechanism flag. It names
// two things at once: the noise (a NoiseKind) and the privacy definition
// the budget is stated under (a Kind). "zcdp" is Gaussian noise like
// "gaussian" but accounted as ρ-zCDP, which is why the flag is not a
// NoiseKind. mechanisms is the one list of those values, in the order help
// text and errors give them; the noise of each is its Kind's (Kind.Noise).
var mechanisms = [...]struct {
	name  string
	kind  Kind
	about string // the guarantee, for help text
}{
	{"laplace", Pure, "ε-DP"},
	{"gaussian", Approx, "(ε,δ)-DP"},
	{"zcdp", Concentrated, "ρ-zCDP"},
}

// Noise is the noise that meets a budget of kind k: Laplace for pure ε-DP,
// Gaussian otherwise (Budget.Noise).
func (k Kind) Noise() NoiseKind {
	if k == Pure {
		return Laplace
	}
	return Gaussian
}

// offers reports whether k is among offered (every kind when offered is
// empty).
func offers(offered []Kind, k Kind) bool {
	if len(offered) == 0 {
		return true
	}
	for _, o := range offered {
		if o == k {
			return true
		}
	}
	return false
}

// ParseMechanism parses a --mechanism value, in any case: "laplace" is
// Laplace noise under pure ε-DP, "gaussian" Gaussian noise under (ε,δ)-DP
// and "zcdp" Gaussian noise under ρ-zCDP. It returns the noise and the
// privacy definition, the Kind that New takes. offered restricts the
// values to those whose Kind is listed (none: all three), for a command
// that supports only some definitions. Any other value is an error
// wrapping ErrInput that lists the offered values (MechanismNames).
func ParseMechanism(s string, offered ...Kind) (NoiseKind, Kind, error) {
	low := lower(s)
	for _, m := range mechanisms {
		if m.name != low {
			continue
		}
		if !offers(offered, m.kind) {
			return "", "", inputerr.Errorf("calibrate", "mechanism %q (%s) is not offered here (want %s)", s, m.about, MechanismNames(offered...))
		}
		return m.kind.Noise(), m.kind, nil
	}
	return "", "", inputerr.Errorf("calibrate", "unknown mechanism %q (want %s)", s, MechanismNames(offered...))
}

// MechanismName is the --mechanism value of the privacy definition k:
// "laplace", "gaussian" or "zcdp"; "" for any other Kind. ParseMechanism
// maps it back to k.
func MechanismName(k Kind) string {
	for _, m := range mechanisms {
		if m.kind == k {
			return m.name
		}
	}
	return ""
}

// MechanismNames lists the offered --mechanism values (all when offered is
// empty) for a message: "laplace, gaussian or zcdp".
func MechanismNames(offered ...Kind) string {
	return listMechanisms(offered, func(name, _ string) string { return name })
}

// MechanismValues are the offered --mechanism values (all when offered is
// empty), in the order of MechanismNames: for a synopsis such as
// "--mechanism laplace|gaussian".
func MechanismValues(offered ...Kind) []string {
	var v []string
	for _, m := range mechanisms {
		if offers(offered, m.kind) {
			v = append(v, m.name)
		}
	}
	return v
}

// MechanismUsage lists the offered --mechanism values with the guarantee
// and the sensitivity norm of each, for a flag's help text: "laplace (ε-DP,
// L1 sensitivity) or gaussian ((ε,δ)-DP, L2 sensitivity)".
func MechanismUsage(offered ...Kind) string {
	return listMechanisms(offered, func(name, about string) string { return name + " (" + about + ")" })
}

func listMechanisms(offered []Kind, word func(name, about string) string) string {
	var words []string
	for _, m := range mechanisms {
		if offers(offered, m.kind) {
			about := fmt.Sprintf("%s, L%d sensitivity", m.about, m.kind.Noise().Norm())
			words = append(words, word(m.name, about))
		}
	}
	switch len(words) {
	case 0:
		return "nothing"
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
