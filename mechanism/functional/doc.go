// Package functional is the functional Laplace mechanism of Nozari,
// Tallapragada and Cortés ("Differentially private distributed convex
// optimization via functional perturbation", IEEE TCNS 2018): an agent releases
// a private objective function f ∈ L²(D) by perturbing every coefficient of f in
// an orthonormal basis with Laplace noise whose scale decays with the index.
// The basis is in package basis; the post-processing that restores smoothness
// and convexity is in package project; the agents' coordination is in package
// distributed.
//
// # Mechanism
//
// Write f = Σ_{k≥1} c_k φ_k in the orthonormal basis (φ_k) of L²(D) ordered by
// total degree (basis.Basis, 1-based index k here). The mechanism releases the
// first K coefficients, y_k = c_k + η_k with independent η_k ~ Laplace(b_k), i.e.
// the function Σ_{k≤K} y_k φ_k. Releasing only K coefficients is the paper's
// smoothing-by-truncation step folded into the mechanism: noise added to
// coefficients that are then discarded would not change the output.
//
// # Adjacency
//
// For q > 1 and γ > 0, two functions f, f′ are adjacent when their difference has
// weighted coefficient norm at most γ:
//
//	‖f − f′‖_q := ( Σ_k (k^q · δ_k)² )^{1/2} ≤ γ,   δ_k = c_k − c′_k.
//
// The weights k^q make high-index (rough) differences expensive, so adjacency
// covers changes that are small and smooth; γ sets their size. When the
// coefficients are computed by quadrature (basis.Coefficients), δ_k are the
// differences of the computed coefficients, which is what the mechanism sees.
//
// # Noise scales and the privacy proof
//
// For p ∈ (1/2, q − 1/2) the mechanism uses
//
//	b_k = γ · C_K / (ε · k^p),   C_K = ( Σ_{k=1}^{K} k^{−2(q−p)} )^{1/2}.
//
// Claim: this is ε-differentially private for the adjacency above.
// Proof. The released vector y ∈ ℝ^K has density Π_k (2b_k)⁻¹ exp(−|y_k − c_k|/b_k).
// For adjacent f, f′ and every y, by the triangle inequality and then
// Cauchy–Schwarz,
//
//	log p(y | f) − log p(y | f′) = Σ_k (|y_k − c′_k| − |y_k − c_k|)/b_k
//	                             ≤ Σ_k |δ_k| / b_k
//	                             = (ε/(γ C_K)) Σ_k k^{p−q} · k^q |δ_k|
//	                             ≤ (ε/(γ C_K)) · (Σ_k k^{−2(q−p)})^{1/2} · (Σ_k (k^q δ_k)²)^{1/2}
//	                             ≤ (ε/(γ C_K)) · C_K · γ = ε,
//
// so P(y ∈ A | f) ≤ e^ε P(y ∈ A | f′) for every measurable A. ∎
//
// The bound is tight: for δ_k = σ_k · γ k^{p−2q}/C_K (any signs σ_k) both
// inequalities are equalities at every y with y_k beyond both c_k and c′_k on
// the side of c_k, a set of positive probability. Hence any uniformly smaller
// scales (b_k/(1+τ), τ > 0) break ε-DP; the tests check both directions.
//
// The proposed constant C = (Σ_{k≥1} k^{−2(q−p)})^{1/2} = ζ(2(q−p))^{1/2}
// is also correct, and it is what the infinite-dimensional mechanism of the
// paper needs (perturbing every coefficient): it is finite exactly when
// 2(q − p) > 1, i.e. p < q − 1/2. Since C ≥ C_K, using C adds slightly more noise
// than necessary when only K coefficients are released; with q − p = 1,
// C = π/√6 ≈ 1.2825 and C_15 ≈ 1.2571, so the difference is small (2%).
// The lower limit p > 1/2 is what makes the perturbation a function at all: the
// noise η has E‖η‖²_{ℓ²} = Σ_k 2 b_k² = 2(γC/ε)² Σ_k k^{−2p} < ∞ iff 2p > 1, so the
// infinite series Σ η_k φ_k converges in L²(D) almost surely. Both limits are
// enforced (Params.Validate); q > 1 is needed for the interval to be non-empty.
//
// Post-processing (truncation, projection onto a convex set of regular
// functions, any optimization run on the released functions) cannot weaken the
// guarantee, so every agent's final function and every message it later sends
// are ε-DP with respect to its own objective.
//
// # Accuracy
//
// Let x* minimize F = Σᵢ fᵢ over the box X, x̄ minimize the noise-free
// post-processed sum F̄ = Σᵢ P(T_K fᵢ) and x̃ minimize the released sum
// F̃ = Σᵢ P(T_K fᵢ + ηᵢ), where P is the L² projection onto a closed convex set S of
// α-strongly convex functions (package project). For μ-strongly convex G, G′ on X
// with minimizers x_G, x_G′, the first-order conditions ⟨∇G(x_G), x_G′ − x_G⟩ ≥ 0,
// ⟨∇G′(x_G′), x_G − x_G′⟩ ≥ 0 and strong monotonicity give
// μ|x_G − x_G′|² ≤ ⟨∇G′(x_G′) − ∇G(x_G′), x_G − x_G′⟩, hence
//
//	|x_G − x_G′| ≤ sup_X |∇(G′ − G)| / μ.
//
// With G = F̄, G′ = F̃ (both nα-strongly convex) the difference is a polynomial
// with coefficients Σᵢ (P(T_K fᵢ + ηᵢ) − P(T_K fᵢ)), whose norm is at most Σᵢ ‖ηᵢ‖
// because P is non-expansive, and sup_D |∇h| ≤ M_K ‖h‖ (basis.GradientBound).
// With E‖ηᵢ‖ ≤ (2 Σ_k b_{ik}²)^{1/2} (Jensen),
//
//	E|x̃ − x*| ≤ |x̄ − x*| + (M_K / (nα)) Σᵢ (2 Σ_{k≤K} b_{ik}²)^{1/2},
//
// and always |x̃ − x*| ≤ diam(X). The first term is the deterministic smoothing
// error (truncation and regularization, computed once without noise); the second
// decays as 1/ε. Accuracy.Bound evaluates the right-hand side.
//
// # Randomness
//
// Released noise must come from a cryptographically secure source sampled so
// that floating-point artifacts do not leak the input (Mironov 2012): the
// mechanism draws through noise.Source, and noise.NewSecure snaps each coefficient to a power-of-two grid
// g_k and adds exactly sampled discrete Laplace noise drawn from crypto/rand.
// Snapping can move adjacent inputs apart by g_k per coordinate; the mechanism
// pays for it by inflating every scale by the factor 1+τ of Mechanism (τ ≈
// K·2⁻⁴⁰/ε), so the released vector is exactly ε-DP. Coefficients are clamped to
// the public bound ±CoefficientBound first (a contraction: privacy unchanged).
// noise.NewSeededInsecure is the one reproducible simulator (the same
// discrete sampler on a seeded bit stream) for simulations and tests only; it
// is not private.
package functional
