// Package synth makes synthetic records from private measurements of
// marginals: a graphical model fitted to noisy marginal measurements on a
// junction tree of the measured attribute sets, records sampled from it with
// controlled rounding, and two mechanisms that choose what to measure under
// zero-concentrated differential privacy (zCDP): an MST-class one
// (McKenna, Miklau & Sheldon 2021) and an AIM-class one (McKenna et al.,
// VLDB 2022).
//
// # Measurements
//
// Every measurement is made by package marginals' optimal residual plan: for
// a residual subset T of attributes it releases y_T = Q_T x + N(0, s_T² I),
// Q_T = ⊗_{a∈T} U_aᵀ ⊗_{a∉T} 1ᵀ (U_a the Helmert basis of 1⊥). Since the
// rows of Q_T restricted to the T-marginal are orthonormal,
// ‖Q_T μ_T − y_T‖² = ‖P_T μ_T − Q_Tᵀ y_T‖² with P_T = ⊗_{a∈T}(I − J/d_a),
// so each residual is kept as the table b_T = Q_Tᵀ y_T over T (basis-free)
// with its noise variance v_T; repeated measurements of one T are combined
// by inverse-variance weighting (a sufficient statistic for Gaussian noise).
//
// # Estimation
//
// The model is p(x) ∝ exp(Σ_C θ_C(x_C)) over the maximal cliques C of a
// triangulation of the graph in which two attributes are adjacent when some
// measured T holds both. It minimizes the negative log-likelihood of the
// measurements
//
//	L(μ) = Σ_{T≠∅} ‖P_T μ_T − b_T‖² / v_T,   μ = N̂·p,
//
// (N̂ the measured total) over the marginal polytope by entropic mirror
// descent on θ with a backtracking (Armijo) step: every iterate is a
// strictly positive distribution, so large noise never produces negative
// or NaN marginals, and every step costs one exact belief propagation on the
// junction tree. The Frank–Wolfe gap ⟨∇L(μ), μ − s⟩ with s the
// loss-minimizing vertex (one max-product pass) certifies L(μ) − L* from
// above at every iterate; Fit stops when it is small relative to L.
//
// # Privacy
//
// Selection uses the exponential mechanism with parameter ε, which is
// ε²/8-zCDP (bounded range; Cesar & Rogers 2021); a measurement at Gaussian
// scale σ of the plan (L2 sensitivity 1) is 1/(2σ²)-zCDP; zCDP composes by
// addition (Bun & Steinke 2016). Each mechanism's Report lists every step's
// ρ, and they add up to the budget.
package synth
