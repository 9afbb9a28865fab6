package marginals

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/dpsolve/dpsolve/privacy/noise"
)

// MaxTableValues bounds the total number of values (8 bytes each) that
// Measure and Reconstruct hold in tables at once: 2²⁷, one gibibyte.
const MaxTableValues = 1 << 27

// Table is a marginal table: the counts of every joint value of Attrs
// (increasing attribute positions), row-major over Attrs in domain order
// (the last attribute varies fastest); len(Values) = Π_{a∈Attrs} d_a.
type Table struct {
	Attrs  []int
	Values []float64
}

// NoisyResidual is one residual subset's noisy measurement.
type NoisyResidual struct {
	// Attrs is the residual subset T.
	Attrs []int
	// Values are Q_T x + noise, row-major over T with d_a−1 values per
	// attribute (Helmert coordinates).
	Values []float64
	// Std is the standard deviation of the noise actually added to every
	// value (at least Sigma·√(σ_T²); see Measure).
	Std float64
}

// Measurement holds the noisy residuals of a plan.
type Measurement struct {
	// Sigma is the Gaussian scale of a unit-sensitivity query the
	// measurement was calibrated for.
	Sigma float64
	// Private is false when the noise came from a seeded, insecure sampler.
	Private bool
	// Residuals follow the plan's Residuals order.
	Residuals []NoisyResidual
}

// Needs returns the attribute sets whose marginal tables Measure needs: the
// maximal measured residual subsets (every residual is a subset of one), by
// size and then lexicographically. Tables of the workload's positive-weight
// marginals always suffice too.
func (p *Plan) Needs() [][]int {
	// The residuals are closed under taking subsets, so T is maximal iff no
	// residual T ∪ {a} exists: mark every residual's one-smaller subsets.
	covered := make([]bool, len(p.Residuals))
	buf := make([]int, 0, 64)
	for _, r := range p.Residuals {
		for j := range r.Attrs {
			buf = append(append(buf[:0], r.Attrs[:j]...), r.Attrs[j+1:]...)
			if i, ok := p.lat.lookup(buf); ok {
				covered[i] = true
			}
		}
	}
	var out [][]int
	for i, r := range p.Residuals {
		if !covered[i] {
			out = append(out, slices.Clone(r.Attrs))
		}
	}
	return out
}

// residualValues projects a table on S onto the Helmert coordinates of the
// residual T ⊆ S: it sums out S∖T, then applies U_dᵀ along each axis of T.
func (p *Plan) residualValues(tab Table, t []int) []float64 {
	shape := make([]int, len(tab.Attrs))
	for i, a := range tab.Attrs {
		shape[i] = p.Sizes[a]
	}
	cur := tab.Values
	for k := len(tab.Attrs) - 1; k >= 0; k-- {
		a := tab.Attrs[k]
		in := slices.Contains(t, a)
		if in && shape[k] == p.Sizes[a] {
			next := make([]float64, len(cur)/shape[k]*(shape[k]-1))
			alongAxis(next, cur, shape, k, shape[k]-1, helmertT)
			cur, shape[k] = next, shape[k]-1
		} else if !in {
			next := make([]float64, len(cur)/shape[k])
			alongAxis(next, cur, shape, k, 1, sumFibre)
			cur, shape[k] = next, 1
		}
	}
	return cur
}

// Measure measures every residual of the plan from the marginal tables
// (each a superset of some residuals; see Needs) with discrete Gaussian noise
// from s, calibrated so that the whole measurement is as private as a
// Gaussian of scale sigma on a query of L2 sensitivity 1: ρ-zCDP with
// ρ = 1/(2σ²) for the secure samplers.
//
// Residual T gets the scale λ_T = sigma·σ_T. The sampler snaps values to a
// grid g_T (see package noise), which raises the query's sensitivity from
// Δ_T to Δ'_T = Δ_T + g_T√dim_T; Measure therefore inflates the scale to
// λ_T·Δ'_T/Δ_T (a relative ~2⁻⁴⁰), so that Σ_T Δ'_T²/(2λ'_T²) =
// Σ_T Δ_T²/(2 sigma² σ_T²) = 1/(2 sigma²) exactly as planned. Each
// residual's Std records the scale actually used.
func (p *Plan) Measure(tables []Table, s *noise.Sampler, sigma float64) (*Measurement, error) {
	if s == nil {
		return nil, errorf("no noise sampler given")
	}
	if math.IsNaN(sigma) || math.IsInf(sigma, 0) || sigma <= 0 {
		return nil, errorf("the noise scale must be positive and finite, got %v", sigma)
	}
	order, err := p.checkTables(tables)
	if err != nil {
		return nil, err
	}
	m := &Measurement{Sigma: sigma, Private: s.Private(), Residuals: make([]NoisyResidual, len(p.Residuals))}
	// Σ_T Δ_T²/σ_T² is 1 up to rounding; never let rounding spend more.
	sens2 := 0.0
	for _, r := range p.Residuals {
		sens2 += r.Sensitivity2 / r.Variance
	}
	guard := math.Sqrt(math.Max(1, sens2))
	done := make([]bool, len(p.Residuals))
	buf := make([]int, 0, 64)
	for _, ti := range order { // smallest tables first: cheapest marginalisation
		tab := tables[ti]
		var err error
		forSubsets(p.Sizes, tab.Attrs, buf, func(t []int, _ uint64) bool {
			j, ok := p.lat.lookup(t)
			if !ok || done[j] {
				return true
			}
			vals := p.residualValues(tab, t)
			r := p.Residuals[j]
			lambda := sigma * math.Sqrt(r.Variance) * guard
			var g float64
			if g, err = noise.Grid(lambda); err != nil {
				return false
			}
			delta := math.Sqrt(r.Sensitivity2)
			inflated := lambda * noise.SnappedL2Sensitivity(delta, g, len(vals)) / delta
			std, e := s.AddGaussian(vals, inflated, g)
			if e != nil {
				err = fmt.Errorf("marginals: measuring residual %v: %w", t, e)
				return false
			}
			m.Residuals[j] = NoisyResidual{Attrs: r.Attrs, Values: vals, Std: std}
			done[j] = true
			return true
		})
		if err != nil {
			return nil, err
		}
	}
	for j, ok := range done {
		if !ok {
			return nil, errorf("no table covers the residual subset %v; give the tables of %v", p.Residuals[j].Attrs, p.Needs())
		}
	}
	return m, nil
}

// checkTables validates the tables' attribute sets and lengths and returns
// their indices ordered by size.
func (p *Plan) checkTables(tables []Table) ([]int, error) {
	total := 0
	for i, tab := range tables {
		if !slices.IsSorted(tab.Attrs) {
			return nil, errorf("table %d: attributes %v are not in increasing order", i, tab.Attrs)
		}
		n := 1
		for j, a := range tab.Attrs {
			if a < 0 || a >= len(p.Sizes) || (j > 0 && tab.Attrs[j-1] == a) {
				return nil, errorf("table %d: attributes %v are not distinct positions of the %d-attribute domain", i, tab.Attrs, len(p.Sizes))
			}
			if n > MaxTableValues/p.Sizes[a] {
				return nil, errorf("table %d on %v has more than %d cells", i, tab.Attrs, MaxTableValues)
			}
			n *= p.Sizes[a]
		}
		if len(tab.Values) != n {
			return nil, errorf("table %d on %v has %d values, want %d", i, tab.Attrs, len(tab.Values), n)
		}
		for k, v := range tab.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, errorf("table %d on %v: value %d is %v", i, tab.Attrs, k, v)
			}
		}
		total += n
		if total > MaxTableValues {
			return nil, errorf("the tables hold more than %d values", MaxTableValues)
		}
	}
	order := make([]int, len(tables))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(len(tables[a].Values), len(tables[b].Values)) })
	return order, nil
}

// Estimate is one reconstructed workload marginal.
type Estimate struct {
	Table
	// Set is the index of the marginal in the plan's Sets.
	Set int
	// CellVariance is the variance of every cell under the noise actually
	// added (the plan's CellVariance times Sigma², up to the snapping
	// inflation of Measure).
	CellVariance float64
}

// Reconstruct returns every estimable workload marginal, in the plan's Sets
// order (non-estimable weight-0 marginals are skipped), as the
// least-squares estimate from the noisy residuals:
//
//	Ŵ_S x = Σ_{T⊆S} [⊗_{a∈T} U_{d_a} ⊗_{a∈S∖T} 1_{d_a}/d_a] y_T,
//
// which equals W_S (AᵀA)⁺Aᵀy for the stacked strategy A (see the package
// documentation); it is unbiased and its cells have the planned variance.
func (p *Plan) Reconstruct(m *Measurement) ([]Estimate, error) {
	if m == nil || len(m.Residuals) != len(p.Residuals) {
		return nil, errorf("the measurement does not belong to this plan")
	}
	for j, r := range m.Residuals {
		if !slices.Equal(r.Attrs, p.Residuals[j].Attrs) || float64(len(r.Values)) != p.Residuals[j].Coords {
			return nil, errorf("the measurement's residual %d does not match the plan", j)
		}
	}
	total := 0.0
	for i, s := range p.Sets {
		if p.lat.estimable[i] {
			total += cells(p.Sizes, s.Attrs)
		}
	}
	if total > MaxTableValues {
		return nil, errorf("the workload's marginals hold %s cells; the limit is %d", formatG(total), MaxTableValues)
	}
	var out []Estimate
	buf := make([]int, 0, 64)
	for i, set := range p.Sets {
		if !p.lat.estimable[i] {
			continue
		}
		attrs := set.Attrs
		est, variance := p.expand(attrs, buf, func(j int) ([]float64, float64) {
			return m.Residuals[j].Values, m.Residuals[j].Std
		})
		out = append(out, Estimate{Table: Table{Attrs: slices.Clone(attrs), Values: est}, Set: i, CellVariance: variance})
	}
	return out, nil
}

// expand returns the table on attrs reconstructed from residual
// coordinates, Σ_{T⊆attrs} [⊗_{a∈T} U_{d_a} ⊗_{a∈attrs∖T} 1_{d_a}/d_a] θ_T,
// and its cell variance Σ_T std_T² Π_{a∈T}(d_a−1)/d_a Π_{a∈attrs∖T} 1/d_a²,
// where get(j) returns residual j's coordinates θ_T and standard deviation.
// Every residual T ⊆ attrs must be in the plan's lattice.
func (p *Plan) expand(attrs []int, buf []int, get func(j int) ([]float64, float64)) ([]float64, float64) {
	full := make([]int, len(attrs))
	for k, a := range attrs {
		full[k] = p.Sizes[a]
	}
	est := make([]float64, product(full))
	variance := 0.0
	forSubsets(p.Sizes, attrs, buf, func(t []int, mask uint64) bool {
		j, _ := p.lat.lookup(t)
		vals, std := get(j)
		shape := make([]int, len(attrs))
		shrink := 1.0
		for k, a := range attrs {
			d := float64(p.Sizes[a])
			if mask&(1<<k) != 0 {
				shape[k] = p.Sizes[a] - 1
				shrink *= (d - 1) / d
			} else {
				shape[k] = 1
				shrink /= d * d
			}
		}
		variance += std * std * shrink
		cur := vals
		for k, a := range attrs {
			d := p.Sizes[a]
			next := make([]float64, len(cur)/shape[k]*d)
			if mask&(1<<k) != 0 {
				alongAxis(next, cur, shape, k, d, helmert)
			} else {
				inv := 1 / float64(d)
				alongAxis(next, cur, shape, k, d, func(out, in []float64) {
					for c := range out {
						out[c] = in[0] * inv
					}
				})
			}
			cur, shape[k] = next, d
		}
		for c, v := range cur {
			est[c] += v
		}
		return true
	})
	return est, variance
}
