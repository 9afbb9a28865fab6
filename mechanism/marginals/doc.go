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
package marginals
