package bench

import (
	"math"
	"slices"
	"strconv"
)

// Num is a float64 that encodes NaN and ±Inf as JSON null (a measurement
// that does not exist, e.g. a speed-up without a reference run), so the
// report is always valid JSON.
type Num float64

// MarshalJSON writes the number, or null when it is not finite.
func (x Num) MarshalJSON() ([]byte, error) {
	f := float64(x)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

// UnmarshalJSON reads a number, or null as NaN.
func (x *Num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*x = Num(math.NaN())
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	*x = Num(f)
	return err
}

// Valid reports whether x is finite.
func (x Num) Valid() bool { return !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0) }

// median returns the median of the finite values in v (NaN if there are none);
// with an even count it averages the two middle values.
func median(v []float64) float64 {
	w := make([]float64, 0, len(v))
	for _, x := range v {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			w = append(w, x)
		}
	}
	if len(w) == 0 {
		return math.NaN()
	}
	slices.Sort(w)
	m := len(w) / 2
	if len(w)%2 == 1 {
		return w[m]
	}
	return (w[m-1] + w[m]) / 2
}

// maxFinite returns the largest finite value in v, or NaN.
func maxFinite(v []float64) float64 {
	r := math.NaN()
	for _, x := range v {
		if !math.IsNaN(x) && !math.IsInf(x, 0) && (math.IsNaN(r) || x > r) {
			r = x
		}
	}
	return r
}
