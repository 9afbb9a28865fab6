// Package lrm implements the Low-Rank Mechanism of Yuan, Zhang, Winslett,
// Xiao, Yang and Hao ("Low-Rank Mechanism: Optimizing Batch Queries under
// Differential Privacy", VLDB 2012) for answering a batch of linear queries W
// (m×n) over a histogram x (n cells).
//
// # The mechanism and its privacy
//
// A decomposition W ≈ B·L (B m×r, L r×n) is chosen from W alone, without
// looking at x. The curator releases the r noisy measurements
//
//	y = L·x + z
//
// and the analyst answers the workload with B·y. One individual changes one
// cell of x by one, which moves L·x by a column of L; so the release is
//
//   - ε-differentially private with z i.i.d. Laplace(Δ₁(L)/ε), Δ₁ the largest
//     column ℓ1 norm of L (ball L1, the seed's setting), and
//   - (ε,δ)-differentially private with z ~ N(0, σ²I), σ the analytic
//     Gaussian scale (Balle & Wang 2018) for L2 sensitivity Δ₂(L), the
//     largest column ℓ2 norm (ball L2).
//
// The answers B·y are post-processing of y and inherit the guarantee. The
// noise comes from package noise: snapped, exactly sampled discrete Laplace
// or Gaussian noise from crypto/rand (Mironov 2012 safe), calibrated to the
// snapped sensitivity; see Answer.
//
// # Error
//
// The answer error is B·y − W·x = B·z − (W − B·L)·x. Its expected total
// squared error is
//
//	E‖B·y − W·x‖² = v·Δ(L)²·Φ(B) + ‖(W − B·L)·x‖²,   Φ(B) = tr(BᵀB) = ‖B‖²_F,
//
// v the noise variance per measurement at unit sensitivity (2/ε² for
// Laplace, σ² for Gaussian). The first term is the noise error (for Laplace,
// the seed's 2·Φ·Δ²/ε²); the second, structural, term is zero for an exact
// decomposition and in general depends on the (private) data; the seed's
// theorem bounds it by ‖W − BL‖²_F·‖x‖²₂ (StructuralBound). On real counts
// it can dominate: the bound grows with ‖x‖², so a residual of 1e-3 on a
// histogram with tens of thousands of records allows a bias far above the
// noise (on DPBench's NETTRACE, n = 128, ε = 2, relaxed runs have measured
// between 2% and 6× the noise error), which is why Solve returns an exact
// pair by default. By the seed's scale-invariance lemma,
// Φ(αB, L/α)·Δ(L/α)² = Φ(B,L)·Δ(B,L)², so minimizing the error is the same as
//
//	minimize ½·tr(BᵀB)  subject to  W = B·L,  every column of L in the unit ball.
//
// Identity (B = W, L = I) has Φ = ‖W‖²_F: Laplace error 2‖W‖²_F/ε².
//
// # The optimizer
//
// The seed's augmented-Lagrangian method, relaxed to W ≈ B·L:
//
//	𝓛_β(B, L, π) = ½‖B‖²_F + ⟨π, W − BL⟩ + (β/2)‖W − BL‖²_F.
//
// Start (StartSVD, the seed's; see below for StartPIdentity): the SVD
// W = UΣVᵀ of rank k sets r = ⌈1.2·k⌉ (configurable) and the
// exact pair B = s·UΣQᵀ, L = QVᵀ/s, with Q an r×k matrix with orthonormal
// columns (random, seeded) and s the largest ball norm of a column of QVᵀ.
// Each outer iteration then
//
//  1. minimizes 𝓛_β over (B, L) for the current π: the L-step is the
//     accelerated projected gradient method (FISTA with backtracking and a
//     monotone restart) with the exact per-column projection onto the ℓ1 ball
//     (the sort-based algorithm of Duchi et al. 2008, ProjectL1, or
//     Michelot's equivalent pruning iteration in the inner loop) or the ℓ2
//     ball (scaling), and every L-step is followed by the closed-form
//     B-step B = (βW + π)Lᵀ(I + βLLᵀ)⁻¹;
//  2. updates the multipliers π ← π + β(W − BL);
//  3. multiplies β by 2 when ‖W − BL‖_F fell by less than half;
//  4. stops when ‖W − BL‖_F ≤ tol·‖W‖_F (default tol = 1e-3) or at the
//     iteration cap.
//
// The computation is reduced exactly to k×n (B = U_k·B̃: every B-step,
// residual and multiplier stays in span(U_k)), and the B-step is eliminated
// in closed form inside the L-step (the subproblem value is
// (β/2)·tr(C(I + βLᵀL)⁻¹Cᵀ), C = W + π/β), evaluated through the smaller of
// the n×n and r×r Cholesky factorizations.
//
// Three additions make it robust and its answers unbiased. Rank-deficient L
// is invariant under gradient steps (a factorization whose L has lost a
// direction of W's row space cannot regain it), so when an outer iteration
// fails to reduce the residual by a fifth, L is mixed with a random
// full-rank L (a convex combination, so still feasible). The converged pair
// is then polished to an exact decomposition: with R = W − BL,
// L' = L + B⁺R satisfies BL' = W, and the seed's scale invariance
// (B·s, L'/s), s ≥ 1 the largest column norm of L', puts L' back in the
// ball, for a relative change in Φ of the order of the residual (measured
// ≤ 4%); the answers then carry no structural error and the expected error
// no longer depends on the data (Options.Relaxed keeps the seed's relaxed
// pair). Finally, if the method ends unconverged, or above the exact scaled
// SVD decomposition, that decomposition is returned (Result.Fallback), so
// the objective never exceeds the seed's SVD bound; and if Identity
// (B = W, L = I) is better than both, it is returned (Result.Identity), so
// the objective never exceeds Identity's ‖W‖²_F either.
//
// # The p-Identity start (ε-DP, high-rank workloads)
//
// When r ≥ n (a workload whose rank is close to n, such as random ranges,
// where no factorization saves measurements), the seed's iteration is slow
// and ends far from the best it can reach: on WRange (m = n random ranges)
// its gain over Identity was 2.05, 2.26, 2.46 and 1.57 at n = 128, 256, 512
// and 1024, at 0.6 s to 189 s. For the ℓ1 ball, StartAuto then starts from
// the p-Identity strategies of HDMM (McKenna et al., VLDB 2018) instead:
//
//	L = [I; Θ]·D⁻¹,   Θ ≥ 0 (p×n, default p = ⌈n/16⌉),   D = diag(1 + Σᵢ Θᵢⱼ),
//
// every column of L on the unit ℓ1 sphere and L of full column rank, so that
// B = W·L⁺ is exact and Φ = tr(WᵀW·(LᵀL)⁻¹). Θ is optimized by a projected
// L-BFGS method for the bound Θ ≥ 0 (Kim, Sra and Dhillon 2010), each
// evaluation costing two n×n by n×p products through the Woodbury identity
// (2p/n DGEMM-equivalents), and the result is returned as is. On WRange it
// gains 2.27, 2.76, 3.84 and 5.78 over Identity at n = 128…1024, in 0.05 s
// to 9 s; scipy's L-BFGS-B on HDMM's formulation (bench/peers/pidentity.py,
// the independent reference) reaches 2.27, 2.77, 3.84 and 5.80. Options.Refine
// runs the augmented-Lagrangian iteration from it (with the multipliers
// π = W(LᵀL)⁻¹ that make it stationary in B, and a large penalty); on WRange
// that improved Φ by 0.5% at n = 128 and not at all at 256 and 512, at 10 to
// 24 times the cost, so it is off by default. The Gaussian (ℓ2) case keeps
// the SVD start: there p-Identity's family is narrow (gain 6.2 against 8.7
// at n = 128) and package newton solves the problem exactly anyway.
//
// # Bounds reported with every solve
//
// For W's k nonzero singular values λ: the seed's SVD upper bound k·Σλ²
// (Φ of B = √k·UΣ, L = Vᵀ/√k); the SVD lower bound (Σλ)²/n of Li & Miklau,
// valid for every exact decomposition (Δ₁ ≥ Δ₂ and tr(LᵀL) ≤ n); and the
// expression of the seed's Hardt–Talwar lemma (2ᵏ/k!·Πλ)^{2/k}·k³, which
// carries an unspecified Ω constant and is reported as a rate only.
//
// The problem is non-convex: the method finds a good stationary point, not a
// certified optimum. For low-rank workloads with k² ≪ n (few base queries)
// LRM's ε-DP error is far below answering each cell; for a random rank-s
// Gaussian workload its ε-DP error grows like s³ and exceeds Identity's once
// s is beyond about √n (the Laplace error of measuring s Gaussian queries is
// set by their column ℓ1 norms, about s each); Solve then returns Identity.
package lrm
