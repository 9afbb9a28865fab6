// Package newton computes optimal Gaussian-noise strategies for linear query
// workloads under (ε,δ)-differential privacy.
//
// Given the Gram matrix V = WᵀW (n×n, positive semidefinite) of a workload,
// Solve finds X ≻ 0 with diag(X) = 1 minimizing F(X) = tr(V X⁻¹) (Yuan et al.,
// KDD 2016) and returns the strategy A = chol(X) together with a certificate:
// a lower bound g(y) ≤ min F from weak duality,
//
//	g(y) = 2·tr((D^{1/2} V D^{1/2})^{1/2}) − Σᵢ yᵢ,  D = diag(y), y > 0,
//
// evaluated at y = diag(X⁻¹VX⁻¹), which is tight at the optimum. The relative
// gap (F − g)/F bounds how far the returned strategy's expected error is from
// the best possible.
package newton
