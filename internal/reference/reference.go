// Package reference holds published or certified reference values that
// several packages' tests check against, each once, with its provenance.
package reference

// PrefixN32 is min tr(V X⁻¹) subject to diag(X) = 1, X ≻ 0, for the Prefix
// workload on n = 32 cells (V_ij = 32 − max(i,j), 0-based): the optimal
// Gaussian-noise strategy's total squared error per unit noise.
//
// Provenance: dpsolve's Newton solver (newton.Solve, Tol 1e-13) certifies it
// with a duality gap of 2.4e-14 relative; the value is rounded to 13
// significant digits, so it is exact to ±5e-13 relative. The test of this
// package recomputes the primal value tr(V X⁻¹) and the weak-duality bound
// 2·tr((D^{1/2} V D^{1/2})^{1/2}) − Σ yᵢ with gonum's dense eigensolver, not
// with newton's code, and checks that they bracket the constant. The
// brief's interior-point (CVXOPT) value 114.559696 agrees to 6e-8 relative,
// the accuracy of that solver: tests must not accept both values by widening
// a tolerance — they use this one.
const PrefixN32 = 114.5597028251
