package newton

import "github.com/dpsolve/dpsolve/internal/expsum"

// expSum approximates 1/x on [lo, hi] by Σ_r w_r·exp(−t_r·x) with relative
// error at most about tol (see expsum.Reciprocal).
func expSum(lo, hi, tol float64) (t, w []float64) { return expsum.Reciprocal(lo, hi, tol) }
