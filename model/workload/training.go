package workload

import (
	"strconv"
	"strings"

	"github.com/dpsolve/dpsolve/internal/inputerr"
)

// Training is a workload of private training by DP matrix factorization
// (package mf), as its name spells it: the released quantities are, at
// each of n steps, the model's parameters, i.e. weighted prefix sums of the
// noisy gradients. "prefix" is the Prefix workload of this package (all
// prefix sums, the lower-triangular matrix of ones); "momentum:β" is
// heavy-ball momentum with β in [0, 1) (β = 0 is prefix); either may be
// followed by ",cooldown:S" or ",cooldown:S:F", learning rates falling
// linearly to F (default 0.1) over the last S steps. The steps n are not
// part of the name: mf builds the matrix for a given n.
type Training struct {
	// Spec is the name as given.
	Spec string
	// Momentum is β (0 for prefix).
	Momentum float64
	// Cooldown is set when the name asks for a learning-rate cooldown of
	// CooldownSteps steps to the final rate CooldownFinal.
	Cooldown      bool
	CooldownSteps int
	CooldownFinal float64
}

// ParseTraining reads a training workload's name (see Training). It checks
// the syntax; the values' ranges (β < 1, 1 ≤ S ≤ n, 0 < F ≤ 1) are checked
// by mf when it builds the workload for n steps. Malformed names are
// errors wrapping ErrInput.
func ParseTraining(spec string) (Training, error) {
	t := Training{Spec: spec}
	bad := func(format string, a ...any) (Training, error) {
		return Training{}, inputerr.Errorf("workload", "training workload %q: "+format, append([]any{spec}, a...)...)
	}
	parts := strings.Split(spec, ",")
	switch head := parts[0]; {
	case head == "prefix":
	case strings.HasPrefix(head, "momentum:"):
		b, err := strconv.ParseFloat(strings.TrimPrefix(head, "momentum:"), 64)
		if err != nil {
			return bad("momentum %v", err)
		}
		t.Momentum = b
	default:
		return bad("want prefix or momentum:β[,cooldown:S[:F]]")
	}
	for _, p := range parts[1:] {
		if !strings.HasPrefix(p, "cooldown:") {
			return bad("unknown option %q", p)
		}
		if t.Cooldown {
			return bad("cooldown given twice")
		}
		f := strings.Split(strings.TrimPrefix(p, "cooldown:"), ":")
		steps, err := strconv.Atoi(f[0])
		if err != nil || len(f) > 2 {
			return bad("cooldown wants S or S:F")
		}
		final := 0.1
		if len(f) == 2 {
			if final, err = strconv.ParseFloat(f[1], 64); err != nil {
				return bad("cooldown final rate: %v", err)
			}
		}
		t.Cooldown, t.CooldownSteps, t.CooldownFinal = true, steps, final
	}
	return t, nil
}
