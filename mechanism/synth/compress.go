package synth

import (
	"math"
	"math/rand/v2"
	"slices"
)

// compression merges each attribute's rare values (estimated count below
// three standard deviations of its noisy one-way marginal) into one code,
// as MST does: a 100-value attribute with ten common values is then
// measured over 11 cells instead of 100, so its pairs carry less noise.
// It is computed from private measurements only (post-processing).
type compression struct {
	orig   []int     // original sizes
	sizes  []int     // compressed sizes
	code   [][]int32 // original code → compressed code, per attribute
	rare   [][]int   // original codes merged into the last code (nil: none)
	weight [][]float64
}

// newCompression builds the map from non-negative one-way estimates and
// each one's per-cell standard deviation.
func newCompression(orig []int, oneWay [][]float64, std []float64) *compression {
	c := &compression{orig: slices.Clone(orig), sizes: slices.Clone(orig), code: make([][]int32, len(orig)), rare: make([][]int, len(orig)), weight: make([][]float64, len(orig))}
	for a, d := range orig {
		c.code[a] = make([]int32, d)
		var keep, rare []int
		for v := 0; v < d; v++ {
			if oneWay[a][v] >= 3*std[a] {
				keep = append(keep, v)
			} else {
				rare = append(rare, v)
			}
		}
		if len(rare) <= 1 {
			for v := range c.code[a] {
				c.code[a][v] = int32(v)
			}
			continue
		}
		for i, v := range keep {
			c.code[a][v] = int32(i)
		}
		w := make([]float64, len(rare))
		for i, v := range rare {
			c.code[a][v] = int32(len(keep))
			w[i] = math.Max(oneWay[a][v], 0)
		}
		c.sizes[a] = len(keep) + 1
		c.rare[a], c.weight[a] = rare, w
	}
	return c
}

// apply maps records into the compressed domain.
func (c *compression) apply(d *Data) *Data {
	out := &Data{Sizes: c.sizes, Cols: make([][]int32, len(d.Cols))}
	for a, col := range d.Cols {
		out.Cols[a] = make([]int32, len(col))
		for i, v := range col {
			out.Cols[a][i] = c.code[a][v]
		}
	}
	return out
}

// expand maps compressed records back: the records holding an attribute's
// merged code get its rare original values in proportion to their
// estimated counts, rounded to integers that add up (largest remainders),
// shuffled among the records by rng.
func (c *compression) expand(d *Data, rng *rand.Rand) *Data {
	out := &Data{Sizes: c.orig, Cols: make([][]int32, len(d.Cols))}
	for a, col := range d.Cols {
		o := make([]int32, len(col))
		back := make([]int32, c.sizes[a])
		for v, nv := range c.code[a] {
			back[nv] = int32(v)
		}
		var rareRecs []int
		for i, v := range col {
			if c.rare[a] != nil && int(v) == c.sizes[a]-1 {
				rareRecs = append(rareRecs, i)
				continue
			}
			o[i] = back[v]
		}
		if len(rareRecs) > 0 {
			counts := roundTo(c.weight[a], len(rareRecs))
			rng.Shuffle(len(rareRecs), func(x, y int) { rareRecs[x], rareRecs[y] = rareRecs[y], rareRecs[x] })
			pos := 0
			for j, k := range counts {
				for _, r := range rareRecs[pos : pos+k] {
					o[r] = int32(c.rare[a][j])
				}
				pos += k
			}
		}
		out.Cols[a] = o
	}
	return out
}
