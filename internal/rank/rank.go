// Package rank holds dpsolve's one numerical-rank rule: a singular value
// or eigenvalue of a matrix of dimension dim counts as zero when it is at
// most dim·ε·largest, with ε = 2⁻⁵² the float64 machine epsilon and
// largest the largest one (the default of LAPACK's rank-revealing drivers
// and of numpy.linalg.matrix_rank). A value that small is rounding of a
// zero one; inverting it would amplify that rounding. Pseudo-inverses and
// ranks across the module use Cutoff; tolerances that scale the rule on
// purpose (a certificate's 64·n·ε, a solver's stopping test) are other
// rules and say so where they are defined.
package rank

// Eps is the float64 machine epsilon, 2⁻⁵².
const Eps = 0x1p-52

// Cutoff returns dim·ε·largest: the values at or below it are zero.
func Cutoff(dim int, largest float64) float64 { return float64(dim) * Eps * largest }
