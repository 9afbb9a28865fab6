// Package distributed runs the agents of a private distributed optimization:
// each agent i holds a convex function fᵢ on a common box X, and the group
// minimizes Σᵢ fᵢ over X by exchanging messages only with its neighbours in a
// connected graph. Agents are goroutines and messages travel over channels.
//
// # Algorithm
//
// Run is distributed projected gradient (Nedić, Ozdaglar & Parrilo, IEEE TAC
// 2010): with doubly stochastic Metropolis weights W on the graph,
//
//	vᵢ(k) = Σⱼ Wᵢⱼ xⱼ(k),   xᵢ(k+1) = Π_X(vᵢ(k) − s_k ∇fᵢ(vᵢ(k))),
//
// and with step sizes that are square-summable but not summable (Harmonic:
// s_k = s₀/(k+k₀)^τ, τ ∈ (1/2, 1]) every agent converges to the minimizer of the
// sum. Minimize is the centralized reference (projected Newton).
//
// # Privacy: perturb the functions, not the messages
//
// The functional-perturbation approach (package functional) gives each agent
// the ε-DP function f̃ᵢ = P(T_K fᵢ + ηᵢ) once, before the algorithm starts; Run
// then uses f̃ᵢ with noise-free messages, and everything sent is post-processing
// of f̃ᵢ, so it is ε-DP, while the algorithm still converges to the minimizer of
// Σᵢ f̃ᵢ, which approaches the true one as ε grows.
//
// The baseline Nozari et al. (IEEE TCNS 2018) argue against perturbs the
// messages instead
// (MessageNoise): agent i sends yᵢ(k) = xᵢ(k) + ηᵢ(k) with coordinates of ηᵢ(k)
// ~ Laplace(b_k), and everyone (i included) uses the noisy messages. Privacy
// then needs decaying noise and summable steps. Let adjacent problems differ
// only in agent i₀'s function with sup_X |∇f − ∇f′|₁ ≤ Δ. Given the observed
// message sequence, every other agent's state is the same under both, and
// agent i₀'s states differ by |xᵢ₀(k+1) − x′ᵢ₀(k+1)|₁ ≤ s_k Δ (projection onto a box
// clamps coordinates, which is 1-Lipschitz in each). The map from noise to
// messages is triangular with unit Jacobian, so the log-density ratio of the
// whole message sequence is at most Σ_{k≥1} s_{k−1}Δ/b_k; with s_k = s₀pᵏ and
// b_k = b₀qᵏ, 0 < p < q < 1, that is s₀Δ/(b₀(q − p)). MessageScale returns
// b₀ = s₀Δ/((ε − S)(q − p)), which makes T rounds of d-dimensional messages
// ε-DP; S = T·d·2⁻⁴⁰ pays for the secure sampler's snapping. The tests replay
// eavesdropped message sequences (Config.Observe) under adjacent objectives and
// check the log-density ratio, which reaches ε at the worst-case messages.
// Nozari et al. prove that no message-perturbing scheme whose noise-free
// dynamics are asymptotically stable can be DP; here the summable steps leave
// a bias that no value of ε removes.
package distributed
