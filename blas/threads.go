package blas

// reserver is implemented by backends with a kernel-thread policy for
// concurrent callers (OpenBLAS's; see Reserve).
type reserver interface {
	Reserve(threads int) (release func())
}

// Reserve registers a caller that is about to run kernels (a solve, a
// plan, a release) and may use at most threads kernel threads; threads ≤ 0
// means its share of the process's kernel-thread budget (Backend.Threads,
// set by SetThreads). The caller calls release when it is done, usually
// deferred:
//
//	defer blas.Reserve(opt.Threads)()
//
// The OpenBLAS backend admits every kernel call through one process-wide
// gate: a call that runs while another is in flight runs on its own thread
// (OpenBLAS's pool is then untouched: no spinning, no waiting), at most
// Threads() calls run at once, and a call that runs alone uses up to
// min(threads, budget/k) threads with k callers registered. So k goroutines
// that each run solves need no settings to get at least the throughput of
// running them one after another. Unregistered kernel calls (a program's
// own gonum/mat code) go through the same gate; registering only refines
// how many threads a lone call takes. The pure-Go backend runs its kernels
// as goroutines on GOMAXPROCS threads, which never oversubscribe, and
// ignores the registration. release is idempotent.
func Reserve(threads int) (release func()) {
	if r, ok := Current().(reserver); ok {
		return r.Reserve(threads)
	}
	return func() {}
}
