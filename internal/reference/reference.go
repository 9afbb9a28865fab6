// Package reference holds published or certified reference values that
// several packages' tests check against, each once, with its provenance.
//
// The optima of min tr(V X⁻¹) subject to diag(X) = 1, X ≻ 0 (the
// Gaussian matrix mechanism's total squared error per unit noise at unit L2
// column norm; Yuan et al., KDD 2016) are certified the same way: this
// package's test proposes a strategy X with newton.Solve, rescales it to
// unit diagonal, and recomputes with gonum's dense linear algebra — not
// newton's code — the primal value tr(V X⁻¹) (an upper bound on the optimum,
// X being feasible) and the weak-duality bound
// 2·tr((D^{1/2} V D^{1/2})^{1/2}) − Σ yᵢ at y = c·diag(X⁻¹VX⁻¹) (a lower
// bound for every y > 0). The bracket is at most 1e-12 wide (relative) and
// each constant, rounded to 13 significant digits (±5e-13), lies in it.
package reference

// PrefixN32 is min tr(V X⁻¹) subject to diag(X) = 1, X ≻ 0, for the Prefix
// workload on n = 32 cells (V_ij = 32 − max(i,j), 0-based): the optimal
// Gaussian-noise strategy's total squared error per unit noise.
//
// Provenance: the dense certified bracket of the package documentation,
// [114.5597028250555, 114.559702825058]. An interior-point SDP solve
// (CVXOPT) gives 114.559696, 6e-8 relative below, the accuracy of that
// solver: tests must not accept both values by widening a tolerance — they
// use this one.
const PrefixN32 = 114.5597028251

// PrefixN64 is the optimum for the Prefix workload on n = 64 cells.
//
// Provenance: the dense certified bracket of the package documentation,
// [282.2014210524019, 282.2014210524049]. The 10-digit value used before,
// PrefixN64Published, agrees to 1.7e-10 relative.
const PrefixN64 = 282.2014210524

// PrefixN64Published is the optimum for Prefix n = 64 as quoted to 10
// significant digits for single-participation prefix sums at unit
// sensitivity; tests use PrefixN64.
const PrefixN64Published = 282.2014211

// PrefixN256 is the optimum for the Prefix workload on n = 256 cells.
//
// Provenance: the dense certified bracket of the package documentation,
// [1631.403044504556, 1631.403044504608] (the dual bound computed above the
// primal value by 3e-14 relative, the dense computations' rounding). The
// 10-digit value PrefixN256Published agrees to 3e-10 relative.
const PrefixN256 = 1631.403044505

// PrefixN256Published is the optimum for Prefix n = 256 to 10 significant
// digits on which L-BFGS (HDMM, McKenna et al., VLDB 2018) and the dual
// fixed point (Denisov et al., NeurIPS 2022) agree; tests use PrefixN256.
const PrefixN256Published = 1631.403045

// AllRangeN64 is the optimum for the AllRange workload (all 2080 ranges)
// on n = 64 cells.
//
// Provenance: the dense certified bracket of the package documentation,
// [11024.38150344426, 11024.38150344444].
const AllRangeN64 = 11024.38150344

// AllRangeN256 is the optimum for the AllRange workload on n = 256 cells.
//
// Provenance: the dense certified bracket of the package documentation,
// [276929.3084412985, 276929.3084413]. An L-BFGS run (HDMM's method) with
// its dual bound was reported as the interval [276928.5, 276929.3], whose
// upper (primal) end lies 3e-8 relative below the optimum: the interval was
// rounded, not certified, at that accuracy; tests use this constant.
const AllRangeN256 = 276929.3084413

// Marginals3Way4x5 is the optimum for all ten 3-way marginals over five
// attributes of size 4 (n = 1024 cells, unit weights): min tr(V X⁻¹) over
// diag(X) = 1, which for marginal workloads equals the SVD bound
// (tr V^{1/2})²/n (ResidualPlanner, Xiao, Kifer et al., NeurIPS 2023).
//
// Provenance: the closed form. In the basis of per-attribute total and
// residual directions V is diagonal; the residual directions on an
// attribute set T (3^|T| of them for each of the C(5,|T|) sets) have
// eigenvalue 4²·C(5−|T|, 3−|T|) for |T| ≤ 3, so
// tr V^{1/2} = Σ_{t=0}^{3} C(5,t)·3^t·4·√C(5−t, 3−t) = 4√10 + 60√6 +
// 360√3 + 1080, and the optimum is its square over 1024, to 15 significant
// digits. This package's test evaluates that sum.
const Marginals3Way4x5 = 3389.99336813103
