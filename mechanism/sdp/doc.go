// Package sdp writes the semidefinite programs of Yuan, Yang, Zhang and
// Hao (KDD 2016, appendix §1) in SDPA sparse format (.dat-s), runs the
// CSDP interior-point solver on them when it is installed, and maps the
// solution back to the strategy. It gives dpsolve an independent check of
// its Newton optimizer and lets users take the problems to any SDP solver.
//
// # The programs
//
// For a workload W (m×n) the matrix mechanism with strategy A (p×n) has
// expected total squared error proportional to J_p(A) = ‖A‖²_{p,∞} ·
// tr(W (AᵀA)⁻¹ Wᵀ), where ‖A‖_{p,∞} is the largest column p-norm (the
// L_p sensitivity). With X = AᵀA and a variable Y ⪰ W X⁻¹ Wᵀ, the Schur
// complement lemma turns the objective into tr(Y) with an LMI:
//
//	Eq. (2), approximate DP (p = 2, Gaussian noise):
//	    min tr(Y)  s.t.  diag(X) ≤ 1,  [[X, Wᵀ], [W, Y]] ⪰ 0.
//
// It is exact: its optimum equals min tr(V X⁻¹) over diag(X) ≤ 1, V = WᵀW,
// the problem the newton package solves, and A = chol(X) attains it.
//
//	Eq. (3), exact DP (p = 1, Laplace noise), the relaxation of Yuan et al.:
//	    min tr(Y)  s.t.  ‖A‖₁,∞ ≤ 1,  [[X, Wᵀ], [W, Y]] ⪰ 0,  [[X, Aᵀ], [A, I]] ⪰ 0,
//
// obtained from X = AᵀA by relaxing to X ⪰ AᵀA and dropping rank(X) =
// rank(AᵀA). (The paper writes the second LMI as [[X, A], [Aᵀ, I]]; with A
// of size p×n the dimensionally consistent form is the one above, and A is
// taken square, p = n.) The ‖·‖₁,∞ bound is linear: T ≥ A, T ≥ −A
// entrywise and Σ_k T_kj ≤ 1 for every column j.
//
// # A defect of Eq. (3)
//
// Nothing in Eq. (3) bounds X from above: A = 0, X = c·I, Y = W Wᵀ/c is
// feasible for every c > 0 with objective tr(V)/c, so the infimum is 0 and
// is not attained. The relaxation therefore certifies only the trivial bound
// J₁ ≥ 0, and the A it returns is meaningless (CSDP returns A ≈ 0 with
// X ≈ 10¹¹·I). This package writes Eq. (3) exactly as the paper states it
// (Form Exact) so the finding can be reproduced, and also the repaired
// ExactBounded form, which adds diag(X) ≤ 1. That constraint is valid for the
// exact problem (X = AᵀA with ‖A‖₁,∞ ≤ 1 has X_jj = ‖a_j‖₂² ≤ ‖a_j‖₁² ≤ 1),
// so ExactBounded is still a relaxation and its value is a true lower bound
// on J₁(A) for every strategy A. Because A = 0 remains feasible, however, the
// A-constraints never bind: the value equals the Eq. (2) optimum (the
// Gaussian optimum, already a lower bound on J₁ since ‖·‖₂ ≤ ‖·‖₁), and A
// again carries no information. The strategy worth using from either form is
// A = chol(X) of the X part, scaled to ‖A‖₁,∞ = 1.
//
// # Variables and files
//
// Programs are in SDPA's form min cᵀy s.t. Σᵢ yᵢFᵢ − F₀ ⪰ 0 (CSDP's dual).
// The variables y are the upper triangle of X (row by row), then that of Y,
// then (Eq. 3) A and T row-major; Formulation.Recover maps y back. Block 1 is
// the (n+m)-square LMI, then (Eq. 3) the 2n-square LMI, then one diagonal
// block of linear inequalities. A Gram-only workload uses an n×n factor R of
// V (RᵀR = V; Cholesky, or Λ^{1/2}Qᵀ when V is singular) in place of W: the
// programs depend on W only through WᵀW.
//
// # Privacy
//
// This package does not touch data: it optimizes and checks strategies. The
// privacy guarantee comes from calibrating noise to the chosen strategy's
// sensitivity, ‖A‖₂,∞ ≤ 1 for Eq. (2) and ‖A‖₁,∞ ≤ 1 for Eq. (3), which is
// done elsewhere.
package sdp
