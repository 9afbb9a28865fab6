package synth

// Data holds records column by column: Cols[a][i] is record i's code of
// attribute a, in [0, Sizes[a]).
type Data struct {
	Sizes []int
	Cols  [][]int32
}

// Len is the number of records.
func (d *Data) Len() int {
	if len(d.Cols) == 0 {
		return 0
	}
	return len(d.Cols[0])
}

// Marginal returns the counts over attrs (increasing positions), row-major.
func (d *Data) Marginal(attrs []int) []float64 {
	out := make([]float64, cells(d.Sizes, attrs))
	n := d.Len()
	strides := make([]int, len(attrs))
	st := 1
	for k := len(attrs) - 1; k >= 0; k-- {
		strides[k] = st
		st *= d.Sizes[attrs[k]]
	}
	for i := 0; i < n; i++ {
		idx := 0
		for k, a := range attrs {
			idx += int(d.Cols[a][i]) * strides[k]
		}
		out[idx]++
	}
	return out
}
