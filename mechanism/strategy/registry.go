package strategy

import (
	"context"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/inputerr"
	"github.com/dpsolve/dpsolve/newton"
)

// Baseline is one registered strategy: a name users type (dpsolve compare
// --strategies, the SDP command's baselines), a summary, and a builder.
type Baseline struct {
	// Name is the lower-case key, e.g. "h2".
	Name string
	// Summary is a one-line description for help texts.
	Summary string
	// Default marks the baselines compared when none are named.
	Default bool
	// NeedsGram reports that Build reads the workload's Gram (and may take
	// long): the optimized strategy. The others depend only on n.
	NeedsGram bool
	// Build returns the strategy for a workload with Gram v on n cells; opt
	// (nil: the defaults) configures an optimizer (its Tol, the certified
	// relative gap asked; its Progress) and is ignored by the others.
	Build func(ctx context.Context, n int, v *mat.SymDense, opt *newton.Options) (Matrix, error)
}

// Baselines returns the registered strategies in their display order:
// identity, h2, wavelet, optimized. Parse also accepts hB for the B-ary tree.
func Baselines() []Baseline {
	return []Baseline{
		{Name: "identity", Summary: "measure every cell", Default: true,
			Build: func(_ context.Context, n int, _ *mat.SymDense, _ *newton.Options) (Matrix, error) {
				return nilIfErr(NewIdentity(n))
			}},
		{Name: "h2", Summary: "binary hierarchical tree with root, unit weights (hB for branching B)", Default: true,
			Build: hierarchical(2)},
		{Name: "wavelet", Summary: "Haar wavelet (Privelet), unweighted", Default: true,
			Build: func(_ context.Context, n int, _ *mat.SymDense, _ *newton.Options) (Matrix, error) {
				return nilIfErr(NewWavelet(n))
			}},
		{Name: "optimized", Summary: "Newton-optimized Gaussian strategy (certified)", Default: true, NeedsGram: true,
			Build: func(ctx context.Context, _ int, v *mat.SymDense, opt *newton.Options) (Matrix, error) {
				return nilIfErr(Optimize(ctx, v, opt))
			}},
	}
}

// nilIfErr converts a typed constructor result to a Strategy that is a true
// nil on error (a nil *T in an interface is not == nil).
func nilIfErr[T Matrix](s T, err error) (Matrix, error) {
	if err != nil {
		return nil, err
	}
	return s, nil
}

func hierarchical(b int) func(context.Context, int, *mat.SymDense, *newton.Options) (Matrix, error) {
	return func(_ context.Context, n int, _ *mat.SymDense, _ *newton.Options) (Matrix, error) {
		return nilIfErr(NewHierarchical(n, b))
	}
}

// Lookup resolves a strategy name, case-insensitively: a registered
// baseline, or hB (B ≥ 2) for the B-ary hierarchical tree. Unknown names,
// "h1" and trailing junk ("h2x") are errors wrapping ErrInput.
func Lookup(name string) (Baseline, error) {
	key := strings.ToLower(strings.TrimSpace(name))
	var names []string
	for _, b := range Baselines() {
		if b.Name == key {
			return b, nil
		}
		names = append(names, b.Name)
	}
	if rest, ok := strings.CutPrefix(key, "h"); ok {
		if b, err := strconv.Atoi(rest); err == nil && b >= 2 && rest == strconv.Itoa(b) {
			return Baseline{Name: key, Summary: "b-ary hierarchical tree", Build: hierarchical(b)}, nil
		}
	}
	return Baseline{}, inputerr.Errorf("strategy", "unknown strategy %q (want %s, or hB for a B-ary tree)", name, strings.Join(names, ", "))
}

// Parse builds the named strategy (see Lookup) for a workload with Gram v on
// n cells; v may be nil for the strategies that do not need it, and opt
// (nil: the defaults) configures the optimizer as in Baseline.Build.
func Parse(ctx context.Context, name string, n int, v *mat.SymDense, opt *newton.Options) (Matrix, error) {
	b, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	if b.NeedsGram && v == nil {
		return nil, inputerr.Errorf("strategy", "strategy %q needs the workload's Gram matrix", b.Name)
	}
	return b.Build(ctx, n, v, opt)
}
