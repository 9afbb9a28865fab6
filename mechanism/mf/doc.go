// Package mf plans correlated-noise mechanisms for private training (DP
// matrix factorization, DP-FTRL): for n training steps with gradients
// g₁…gₙ, a workload A (prefix sums for SGD, momentum, learning-rate
// weights) is factored A = B·C and released as B·(C·G + Z), so step t adds
// the noise (C⁻¹Z)ₜ. With X = CᵀC and V = AᵀA the expected total squared
// error is σ²·sens(C)²·tr(V X⁻¹), and everything schema-specific is the
// sensitivity (Denisov et al., NeurIPS 2022; Choquette-Choo et al., ICML
// 2023 and NeurIPS 2023).
//
// # Schemas and feasible sets
//
//   - Single participation: sens² = max_j X_jj; the feasible set diag X = 1
//     is newton's problem, and Solve calls newton.
//   - (k, b) fixed epoch, n = k·b, record r used at π_r = {r, r+b, …}:
//     sens² = max_r Σ_{i,j∈π_r} |X_ij|. Solve optimizes over Choquette-Choo
//     et al.'s set X_ij = 0 for i ≠ j in one pattern, Σ_{i∈π_r} X_ii = 1
//     (the inequality ≤ 1 is active at the optimum: raising a diagonal entry
//     raises X in the Löwner order and cannot raise tr(V X⁻¹)).
//   - b-min-separation with at most k uses, b-banded strategies: X_ij = 0 for
//     |i − j| ≥ b and diag X = 1, so no two uses interact and sens² is the
//     number of uses the separation allows, min(k, ⌈n/b⌉).
//
// # Certificates
//
// For Λ ⪰ 0 supported on the diagonal and the entries fixed at zero, and
// any X ≻ 0, tr(V X⁻¹) + tr(Λ X) ≥ 2·tr((Λ^{1/2} V Λ^{1/2})^{1/2}) (the left
// side's minimum over X). On the feasible set tr(ΛX) = Σ y (the diagonal
// multipliers, shared within a pattern for the fixed-epoch schema), so
// 2·T − Σy, and after the best scaling of Λ, T²/Σy, is a lower bound on the
// optimum. At the optimum Λ = X⁻¹VX⁻¹ (stationarity on the free entries
// says X⁻¹VX⁻¹ vanishes off the constraint pattern), so the bound is
// evaluated at the pattern part of X⁻¹VX⁻¹ with each pattern's diagonal
// replaced by its mean and raised, if needed, until each k×k block (the
// fixed-epoch Λ is block diagonal in the pattern-permuted basis) is
// positive semidefinite. T is the nuclear norm of F·R (V = FᵀF, Λ = RRᵀ),
// from singular values.
//
// # Fixed epoch: Newton's method on the constrained problem
//
// In the coordinates of newton's dense core — X = UᵀU, U⁻ᵀVU⁻¹ = QΛQᵀ,
// Z = UᵀQ, so ZZᵀ = X and Z⁻¹VZ⁻ᵀ = Λ — a step X + Z·D̂·Zᵀ has the
// quadratic model tr Λ − ⟨Λ, D̂⟩ + ½ Σ_ij (λᵢ+λⱼ) D̂ᵢⱼ². The constraints say
// that D = ZD̂Zᵀ is orthogonal to the space 𝒩 of pattern-supported
// matrices with constant diagonal per pattern (b·(1 + k(k−1)/2)
// multipliers ν, N = 𝒯(ν)). The minimizer is D̂ = K∘(Λ + ZᵀNZ),
// Kᵢⱼ = 1/(λᵢ+λⱼ), with ν solving the positive definite system
//
//	𝒯*(Z [K ∘ (Zᵀ 𝒯(ν) Z)] Zᵀ) = −½·𝒯*(X),
//
// solved by conjugate gradients (two n×n GEMMs per product), warm-started
// from the previous iteration's multipliers and preconditioned by its
// diagonal blocks over groups of consecutive patterns, formed from a sum of
// exponentials for K (see blockJacobi). The start is V^{1/2} scaled to unit
// diagonal, masked by a triangular Toeplitz kernel of width b (feasible and
// definite by the Schur product theorem). The step is
// projected exactly onto the constraints (pattern entries zero, pattern
// diagonals summing to zero), so every iterate is exactly feasible: the
// zero entries stay exactly zero and each pattern's diagonal sums to 1 up
// to rounding in the last bit, and the reported sensitivity is computed
// from the final X itself. A backtracking line search keeps X definite.
// The iteration stops when the certified relative gap is at most Tol.
//
// # Banded: Newton's method on the band
//
// The banded problem has n·(b−1) − b(b−1)/2 free entries (the band off the
// diagonal). Its gradient is −P(M), M = X⁻¹VX⁻¹, and its Hessian
// H[D] = P(X⁻¹DM + MDX⁻¹), P keeping the free entries; the Newton system
// H[D] = P(M) is solved by conjugate gradients preconditioned by H's
// diagonal blocks, one per column of the band, and the step is supported
// on the band, so every iterate is b-banded with unit diagonal exactly.
// The iterate, the step and the CG vectors are stored as bands, and X is
// factored in band storage: in blocks of b rows X is block tridiagonal and
// its Cholesky factor U block bidiagonal, so the objective ‖F·U⁻¹‖²_F (a
// line-search trial) and G = F·X⁻¹ cost O(n²·b), M = GᵀG and X⁻¹ about one
// n×n product each per Newton step, and a Hessian product O(n²·b) (X⁻¹D
// meets only the band's columns, and only the band of X⁻¹DM is kept). The start is the band of V^{1/2} at unit diagonal,
// tapered towards the band's edge. The certificate's Λ is M off the band
// plus its diagonal, shifted to be positive semidefinite; it is evaluated
// once the Newton decrement is small, usually ending the run without
// another Newton system.
//
// # Privacy
//
// The package plans strategies and generates their noise (Generator); the
// guarantee is that of the Gaussian mechanism at sens(C)·σ with the noise
// from privacy/noise. Privacy amplification by sampling is out of scope.
package mf
