// Package bench measures dpsolve's strategy optimizer against independent
// peers on the same machine, in one process run, and reports how its cost
// grows with n.
//
// # What is compared
//
// Every method minimizes F(X) = tr(V X⁻¹) subject to diag(X) = 1, X ≻ 0, for
// the Gram matrix V = WᵀW of a workload W (package newton explains why this
// is the expected squared error of the Gaussian matrix mechanism). The
// methods are dpsolve's own newton.Solve (MethodNewton, the default, and
// MethodYuan2016, the seed's Algorithm 1) and two peers written in Python
// with numpy/scipy in the peers/ directory and embedded in this package, so
// that no Go code is involved in them: the dual fixed point of Denisov et
// al. (2022), y ← diag((D^{1/2} V D^{1/2})^{1/2}), and L-BFGS over the
// off-diagonal of X, the approach of HDMM (McKenna et al., 2018).
//
// # How a run is judged
//
// No method is trusted about its own result. The harness takes the X a
// method returns (the peers write it to .npy) and recomputes, with
// newton.Certificate, the objective F(X) and the weak-duality lower bound
//
//	g(y) = 2·tr((D^{1/2} V D^{1/2})^{1/2}) − Σᵢ yᵢ ≤ min F,  y = diag(X⁻¹VX⁻¹),
//
// so the certified relative gap (F − g)/F of every run comes from the same
// code. Because any g(y) bounds the optimum of every run on the same V, the
// harness also reports GapBest = (F − L*)/F, where L* is the largest
// certified bound over all runs of that problem; GapBest is the measure
// used to compare methods "at equal gap" and in the convergence picture.
//
// # Time
//
// Seconds are wall time of the solve alone (Gram construction, process
// start-up and the re-certification are excluded; for peers the time is the
// one they measure around their own solve). DGEMM-equivalents divide them
// by the median time of one n×n DGEMM, C = A·B, measured in the same
// process with the same kernel backend, which makes figures comparable
// across machines. Runs are interleaved — in every repetition each method
// runs once, in turn — and the summary takes medians over repetitions.
//
// The speed-up of dpsolve over a method m at equal gap is T_m / T_ours(g),
// g the GapBest m reached and T_ours(g) the time at which dpsolve's newton
// run of the same repetition first reached GapBest ≤ g (from its
// per-iteration history; its full solve time when that is its last
// iteration). Peers are given dpsolve's certified lower bound and stop as
// soon as their objective is within the target gap of it, so they are
// never charged for certifying themselves: the comparison favors them.
//
// The package also times the dense kernels (DGEMM, Cholesky, Cholesky
// inverse, symmetric eigendecomposition and the Hessian product
// H[S] = −(X⁻¹SG + G S X⁻¹)) and runs a scaling sweep recording peak
// resident memory, for each kernel backend compiled in (package blas).
//
// # The standing suite
//
// Suite runs every comparison the repository can run by itself (the dense
// core and the DP-MF solver against their peers, plans against the
// ResidualPlanner closed form and HDMM's p-Identity, releases' calibration)
// into one SuiteReport of ratios; Gate compares a run with a saved one and
// marks every row that got worse by more than its noise
// (docs/performance.md, "The standing side-by-side suite").
//
// Benchmarks are measurements, not privacy mechanisms: nothing here touches
// real data, so no privacy guarantee is involved; the strategies being timed
// are the ones whose (ε,δ) guarantee package newton documents. The suite's
// calibration rows release synthetic histograms through pipeline/publish
// with seeded simulation noise (noise.NewSeededInsecure): those releases
// are NOT private, and are made only to compare their error with the
// promised one.
package bench
