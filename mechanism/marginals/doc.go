// Package marginals plans, measures and reconstructs workloads made only of
// marginals (counts over every combination of values of a few attributes)
// with the provably optimal Gaussian strategy, in the residual basis of
// ResidualPlanner (Xiao, Kifer et al., "An Optimal and Scalable Matrix
// Mechanism for Noisy Marginals under Convex Loss Functions", NeurIPS 2023).
// Its cost depends on the number of residual subsets and their table sizes,
// never on the number of cells Π d_a, so it plans domains of 10¹⁷ cells and
// more.
//
// # The residual basis
//
// A domain has attributes a = 0…k−1 of sizes d_a; cells are row-major with
// attribute 0 slowest. The marginal on an attribute set S has the query
// matrix W_S = ⊗_a (I_{d_a} if a ∈ S, else 1ᵀ_{d_a}) and weight w_S ≥ 0
// multiplying its queries. Per attribute, R^d splits into the orthogonal
// "total" line (projector J/d) and the "residual" space 1⊥ (projector I − J/d,
// d − 1 dimensions). For T ⊆ {0…k−1} the residual subspace
//
//	R_T = ⊗_a (1⊥ if a ∈ T, else span 1),   projector Π_T, dim_T = Π_{a∈T}(d_a−1),
//
// and since I = (I − J/d) + J/d and J = d·(J/d),
//
//	W_SᵀW_S = ⊗_{a∈S} I ⊗_{a∉S} J = c_S · Σ_{T⊆S} Π_T,   c_S = Π_{a∉S} d_a.
//
// Every marginal Gram, hence the workload Gram V = Σ_S w_S² W_SᵀW_S =
// Σ_T λ_T Π_T with λ_T = Σ_{S⊇T} w_S² c_S, is diagonal in this basis.
//
// # The strategy and its privacy accounting
//
// Let U_d (d × (d−1)) be an orthonormal basis of 1⊥ (the Helmert basis; it
// is applied in O(d) by prefix sums). Residual T is measured as
//
//	y_T = Q_T x + σ_T z_T,   Q_T = ⊗_{a∈T} U_{d_a}ᵀ ⊗_{a∉T} 1ᵀ_{d_a},   z_T ~ N(0, I_{dim_T}),
//
// i.e. the marginal table on T projected onto its residual coordinates.
// Adding or removing one record moves x by a unit vector e_i, which moves
// Q_T x by a column of Q_T; every column has squared norm
// Δ_T² = Π_{a∈T}(d_a−1)/d_a. Independent Gaussian measurements compose in
// zero-concentrated DP: the plan is ρ-zCDP with ρ = Σ_T Δ_T²/(2σ_T²).
// Equivalently, the stacked strategy A = [Q_T/σ_T]_T answered with unit noise
// has squared L2 sensitivity Σ_T Δ_T²/σ_T² (every column of A has that norm).
// A Plan is normalised to Σ_T Δ_T²/σ_T² = 1, the convention of
// `dpsolve solve` (unit column norms): for a budget, multiply every σ_T by
// the Gaussian scale of a unit-sensitivity query (σ = 1/√(2ρ) under ρ-zCDP).
//
// # Reconstruction and variances
//
// AᵀA = Σ_T (c_T/σ_T²) Π_T, so the least-squares estimate is
// x̂ = (AᵀA)⁺Aᵀ(y/σ) = Σ_T Q_Tᵀ y_T / c_T, and the marginal on S is
//
//	Ŵ_S x = Σ_{T⊆S} [⊗_{a∈T} U_{d_a} ⊗_{a∈S∖T} 1_{d_a}/d_a] y_T,
//
// unbiased whenever every residual T ⊆ S (with dim_T > 0) is measured. Every
// cell of it has the same variance
//
//	var_S = Σ_{T⊆S} σ_T² Π_{a∈T}(d_a−1)/d_a Π_{a∈S∖T} 1/d_a²,
//
// and the marginal's total squared error is tr(W_S (AᵀA)⁺ W_Sᵀ) = var_S·Π_{a∈S} d_a.
//
// # The objectives
//
// Sum (total squared error, the unit of `dpsolve solve`): Σ_S w_S² Π_{a∈S}d_a
// var_S = Σ_T b_T σ_T² with b_T = dim_T Σ_{S⊇T} w_S²/Π_{a∈S∖T} d_a. By
// Cauchy–Schwarz, (Σ_T b_T σ_T²)(Σ_T Δ_T²/σ_T²) ≥ (Σ_T Δ_T √b_T)², with
// equality at σ_T² ∝ Δ_T/√b_T: the optimum is (Σ_T Δ_T √b_T)² in closed
// form. It equals the SVD bound (Σᵢ σᵢ(W))²/n = (Σ_T dim_T √(λ_T/n))², a
// lower bound over every strategy, so the plan is optimal among all
// strategies, not only residual ones; Plan reports that bound computed from
// the spectrum, independently of the strategy's error.
//
// Max (the largest per-query variance max_S w_S² var_S): by homogeneity it
// equals min Σ_T Δ_T²/v_T subject to w_S² var_S(v) ≤ 1 for every S, v_T =
// σ_T² > 0, a convex problem with one variable per residual. Its Lagrange
// dual is, for multipliers μ_S ≥ 0 (one per marginal),
//
//	D(μ) = 2 Σ_T Δ_T √g_T(μ) − Σ_S μ_S,   g_T(μ) = Σ_{S⊇T} μ_S w_S² p_{S,T},
//
// p_{S,T} the coefficient of σ_T² in var_S; maximised over the scale of μ it
// gives the certified lower bound (Σ_T Δ_T √g_T(μ))² / Σ_S μ_S. The solver
// is a barrier (interior-point) method with Newton steps and a backtracking
// line search; every iterate is certified by that bound (at μ_S = 1/(t·s_S))
// and by the primal value of the iterate rescaled to sensitivity 1, and it
// stops at relative gap ≤ 1e-8. The bound holds over every strategy
// too: averaging any strategy's Gram over the group of per-attribute value
// permutations (which maps every marginal's queries onto themselves and keeps
// the sensitivity) gives a Gram of the form Σ_T θ_T Π_T whose per-query
// variances are, by operator convexity of X ↦ X⁻¹, no larger than the
// average, so no larger than the maximum.
//
// # Pure ε-DP plans
//
// Under pure ε-DP the residual strategy's accounting (L2 sensitivity) does
// not apply; a PurePlan instead measures every positive-weight workload
// marginal table M_A x directly with discrete Laplace noise and
// reconstructs consistent answers by generalized least squares.
//
// Neighbouring relation (the project's, as in the accounting above):
// datasets differ by adding or removing one record, which moves x by a unit
// vector e_i and so changes exactly one cell of every marginal table by 1:
// the L1 sensitivity of one table is Δ_A = 1. (Under replace-one it would be
// 2; dpsolve uses add/remove throughout.) Releasing table A with Laplace
// noise of scale b_A is (1/b_A)-DP and pure DP composes by addition, so the
// plan is ε-DP with ε = Σ_A Δ_A/b_A. A PurePlan is normalised to
// Σ_A 1/b_A = 1 (unit L1 sensitivity of the stacked measurement [M_A/b_A]_A,
// the `--privacy pure` convention of dpsolve plan); at budget ε every scale
// is divided by ε.
//
// The scales. Answering every marginal from its own table alone gives the
// "direct" error D(b) = Σ_A W_A c_A b_A² (per unit Laplace variance 2/ε²;
// c_A = cells of A, W_A = Σ w_S² over the workload sets on A). Minimizing
// D subject to Σ_A 1/b_A = 1 by Lagrange, 2 W_A c_A b_A = λ/b_A², so
// b_A ∝ (W_A c_A)^(−1/3); normalising, b_A = t (W_A c_A)^(−1/3) with
// t = Σ_A (W_A c_A)^(1/3), and the optimum is D* = t³ (Hölder). D is convex
// on the convex feasible set {Σ 1/b_A ≤ 1}, so this is its global minimum.
// For the Max objective, max_A W_A b_A² (W_A = the largest w_S² on A) is
// minimized by equalizing W_A b_A², b_A = t/√W_A, t = Σ_A √W_A, optimum t².
// Both are exact for the direct estimator. The released answers come from
// generalized least squares over all tables, which is never worse (it is
// the best linear unbiased estimator and the direct one is linear and
// unbiased); the GLS error of these scales is reported exactly, but the
// scales are not claimed to minimize it — the GLS optimum over b has no
// closed form.
//
// Generalized least squares in the residual basis. Table A decomposes as
// M_A x = Σ_{T⊆A} E_{A,T} θ_T with θ_T = Q_T x and E_{A,T} = ⊗_{a∈T} U_{d_a}
// ⊗_{a∈A∖T} 1_{d_a}/d_a (package documentation). The ranges of E_{A,T} for
// T ⊆ A are orthogonal and together span R^{c_A}, and E_{A,T}ᵀE_{A,T} =
// I/c_{A∖T}, c_{A∖T} = Π_{a∈A∖T} d_a. So r_{A,T} = c_{A∖T} E_{A,T}ᵀ y_A
// (sum out A∖T, apply U_dᵀ along T) equals θ_T plus noise of covariance
// V_A c_{A∖T} I (V_A = 2 b_A² the table's Laplace variance), uncorrelated
// across T (orthogonal projections of white noise) and across tables. The
// GLS normal equations therefore split by residual:
//
//	θ̂_T = Σ_{A⊇T} r_{A,T}/(V_A c_{A∖T}) / Σ_{A⊇T} 1/(V_A c_{A∖T}),
//	Var θ̂_T = I / Σ_{A⊇T} 1/(V_A c_{A∖T}),
//
// the inverse-variance combination of every table that sees T, and every
// marginal is reconstructed from the θ̂_T exactly as in Reconstruct, with
// the cell variance formula there. The answers are consistent (all come from
// one θ̂) and the variances exact (Laplace variance 2b², independent cells).
//
// # Consistent post-processing
//
// The least-squares tables (Plan.Reconstruct, PurePlan.Reconstruct) are
// consistent — every table is derived from one set of residual coordinates
// θ, so two tables agree on every sub-marginal they share — but may have
// negative cells. Clamping cell by cell would break the agreement.
// Clamping and projecting onto the non-negative consistent tables without
// more would also move the grand total: the positive part of noise around
// the many near-empty cells adds up (+48% on Adult's 91 two-way tables at
// ε = 1). MakeConsistent instead computes the closest tables that are
// consistent, non-negative and keep the least-squares grand total N̂ = θ̂_∅
// (unbiased, with the ∅ residual's variance; Measurement.TotalStd,
// PurePlan.TotalStd), by Dykstra's alternating projections between
//
//	C = {(Σ_{T⊆S} E_{S,T} θ_T)_S : θ, θ_∅ = max(N̂, 0)}   (derivable from one θ, total N̂),
//	K = {every cell ≥ 0},
//
// in the metric ‖t‖² = Σ_S ‖t_S‖²/v_S, v_S the released table's cell
// variance: the diagonal of the least-squares covariance (the full
// covariance is singular and correlated across tables; its diagonal keeps
// both projections in closed form). The projection onto K in that metric is
// clamping at 0; the projection onto C is the inverse-variance combination
// of the tables' residual coordinates (PurePlan's GLS step, applied to the
// tables with variances v_S) with θ_∅ then set to N̂ — the ranges of the
// E_{S,T} are orthogonal and the metric splits by residual, so fixing one
// coordinate after the combination is the exact projection onto C, which
// adds (N̂ − total)/c_S to every cell of table S. Dykstra's iterates converge to the projection
// of the least-squares tables onto C ∩ K in that metric (Boyle & Dykstra
// 1986); C is a subspace, so only K needs a correction term. It stops when
// the consistent iterate's most negative cell is ≥ −Tol and no cell moved
// by more than Tol in the last sweep, or after MaxIter sweeps (Converged
// false). Its remaining negativity (≤ Tol when converged) is removed without
// giving up consistency: the iterate x is moved toward the uniform tables u
// (the marginals of the histogram that spreads x's grand total N > 0 evenly
// over all cells; consistent and positive, same total) by the smallest α ∈ [0, 1] with
// (1 − α)x + αu ≥ 0. Both are in C, so the released tables are exactly
// consistent (up to rounding) and exactly non-negative; α is reported
// (ShiftTowardUniform) and is of the order Tol/min u. When N ≤ 0 the only
// consistent non-negative tables with that total are 0, which are released.
// So the released tables are consistent and non-negative even when the cap
// stops the iterations early; they are then only farther from the
// least-squares tables than the projection (and α larger). Every released
// table sums to N̂. The estimator is biased (a constrained least-squares
// estimate): mass moves from the large cells to the cells the noise made
// negative — small cells are biased upward, large ones downward, the
// total not at all.
//
// Exactly consistent integer tables close to the real ones are hard to find
// in general: controlled rounding (every cell to an adjacent integer, every
// margin rounded too) is a network-flow problem for two-way tables, but for
// three-way tables it need not exist and no efficient method is known.
// With Integer, N is the nearest integer to the tables' common total and
// every attribute's one-way marginal is rounded to total N by largest
// remainders (floor every cell, give the N − Σ⌊t⌋ units left to the largest
// fractional parts, or take them from the smallest among cells ≥ 1 when the
// sum must shrink).
// Tables on at most two attributes are then rounded to exactly those
// margins by controlled rounding (every cell to ⌊t⌋ or ⌊t⌋ + 1, a bipartite
// flow; where the independently rounded margins admit none, every cell
// within [⌊t⌋ − 1, ⌊t⌋ + 2]; see controlledRound), so they agree exactly on every attribute and
// on the total: for a workload of ≤2-way marginals, on every shared
// sub-marginal. Larger tables, and a two-way table for which no controlled
// rounding to those margins exists, are rounded to N alone by largest
// remainders; cells move by at most 1 and the disagreement that remains is
// measured and reported (MaxInconsistency), not removed.
package marginals
