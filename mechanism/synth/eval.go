package synth

// WorkloadError is the mean over all k-way marginals of
// ½‖x/Σx − y/Σy‖₁ between the records of real and synthetic (the total
// variation distance of each marginal, as AIM's evaluation reports it).
func WorkloadError(real, synthetic *Data, k int) float64 {
	n := len(real.Sizes)
	var sets [][]int
	var rec func(start int, cur []int)
	rec = func(start int, cur []int) {
		if len(cur) == k {
			sets = append(sets, append([]int(nil), cur...))
			return
		}
		for a := start; a < n; a++ {
			rec(a+1, append(cur, a))
		}
	}
	rec(0, nil)
	if len(sets) == 0 {
		return 0
	}
	nx, ny := float64(real.Len()), float64(synthetic.Len())
	sum := 0.0
	for _, s := range sets {
		x, y := real.Marginal(s), synthetic.Marginal(s)
		e := 0.0
		for c := range x {
			d := x[c]/nx - y[c]/ny
			if d < 0 {
				d = -d
			}
			e += d
		}
		sum += e / 2
	}
	return sum / float64(len(sets))
}
