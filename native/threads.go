//go:build cgo && !purego

package native

/*
#include <stdlib.h>

extern void openblas_set_num_threads(int);
extern int openblas_get_num_threads(void);
extern int blas_thread_shutdown_(void);
extern int blas_thread_init(void);
extern void openblas_read_env(void);

// dp_short_spin makes OpenBLAS's pool threads sleep after about 2^k idle
// cycles instead of 2^28, unless the user set OPENBLAS_THREAD_TIMEOUT (or
// GOTO_THREAD_TIMEOUT). OpenBLAS reads the variable when it starts its pool,
// which it did when the library was loaded, before any Go code ran; so the
// pool is stopped and started again with the variable set (no kernel call
// can be running: this runs in the package's init), and the variable is
// removed again so that child processes see the user's environment
// (OpenBLAS keeps the value it read, also for a restart after fork).
// It returns 0 if it left the pool alone.
static int dp_short_spin(const char* k) {
	if (getenv("OPENBLAS_THREAD_TIMEOUT") != NULL || getenv("GOTO_THREAD_TIMEOUT") != NULL) return 0;
	if (setenv("OPENBLAS_THREAD_TIMEOUT", k, 0) != 0) return 0;
	openblas_read_env(); // OpenBLAS caches its variables when loaded
	blas_thread_shutdown_();
	blas_thread_init();
	unsetenv("OPENBLAS_THREAD_TIMEOUT");
	return 1;
}
*/
import "C"

import (
	"strconv"
	"sync"
	"unsafe"
)

// The kernel-thread policy. OpenBLAS's pthreads build (Debian's default
// libopenblas0-pthread) has one process-wide thread pool and one
// process-wide thread count. Two calls that both use the pool serialize
// inside OpenBLAS with busy waits (its callers spin with sched_yield until
// a pool thread is free, and its pool threads spin for about 2²⁸ cycles
// after each job before they sleep), so k goroutines calling multi-threaded
// OpenBLAS at once on c cores run many times slower than one after another
// (8 solves at n = 512 on 2 cores: 28× the sequential time, with system
// time a third of the CPU time). A call that runs with one thread never
// touches the pool: it runs in its caller's thread, reentrant, without any
// waiting.
//
// So every kernel call goes through a gate that keeps this invariant:
// OpenBLAS's thread count exceeds 1 only while exactly one kernel call is in
// flight. The call that finds the gate empty gets the threads it may use
// (see soleThreads); every call that arrives while another is running first
// sets the count to 1 and runs on its own thread; when all but one have
// left, the remaining call gets its threads back. The count is a plain
// variable that OpenBLAS reads at the start of each BLAS routine (a LAPACK
// routine reads it at each of its BLAS calls), so changing it while a call
// runs is safe: a running routine keeps the split it chose.
//
// Besides, at most limit kernel calls run at once (the others wait in the
// gate, parked, not spinning): limit is the process's kernel-thread budget,
// so k goroutines never run more than limit kernel threads between them.
var policy = struct {
	mu       sync.Mutex
	free     *sync.Cond
	limit    int // the budget: SetThreads, else OpenBLAS's count at start
	set      int // the count last handed to OpenBLAS
	inflight int // kernel calls in flight
	busy     int // budget units held by the calls in flight
	wantSum  int // threads the calls in flight would use alone
	leases   map[int]int
	nleases  int
}{}

func init() {
	cs := C.CString(strconv.Itoa(spinLog2))
	C.dp_short_spin(cs)
	C.free(unsafe.Pointer(cs))
	policy.free = sync.NewCond(&policy.mu)
	policy.limit = max(1, int(C.openblas_get_num_threads()))
	policy.set = policy.limit
	policy.leases = map[int]int{}
}

// spinLog2 is log₂ of the cycles OpenBLAS's idle pool threads spin before
// they sleep (OpenBLAS's default: 28, about 0.1 s). Between two kernel
// calls of a solve its own O(n²) passes run on every core; a pool thread
// that spins meanwhile (sched_yield in a loop) takes a core from them and
// shows up as system time: a solve at n = 512 on 2 threads took 1.6× the
// CPU time with the default. A user's OPENBLAS_THREAD_TIMEOUT (the same
// log₂; 28 restores OpenBLAS's behaviour) takes precedence.
const spinLog2 = 16

// minParallelFlops is the size below which a call runs on one thread even
// when it is alone. Waking OpenBLAS's sleeping pool thread, splitting the
// work and joining cost tens of microseconds, and after every pooled call
// the pool threads spin (sched_yield, system time) for about 2²⁸ cycles
// before they sleep, taking a core from the caller's Go code between
// kernel calls. The blocks of a Kronecker or union plan (≤ 100 per
// attribute in examples/adult/two-way.json: ~700 eigendecompositions of
// 9·100³ flops each) then ran slower on two threads than on one, with 15×
// the system time. 2·256³ flops is a 256×256×256 product, about 1.7 ms
// on one SkylakeX core; an eigendecomposition runs on the pool from
// n ≈ 155 on. Below this size a call's result also does not depend on the
// thread count.
const minParallelFlops = 2 * 256 * 256 * 256

// soleThreads returns the threads a call of the given size may use when it
// is the only one in flight. Under mu.
func soleThreads(flops float64) int {
	if flops < minParallelFlops {
		return 1
	}
	t := policy.limit
	if policy.nleases > 0 {
		t = max(1, t/policy.nleases)
		for c := range policy.leases {
			if c > 0 {
				t = min(t, c)
			}
		}
	}
	return t
}

// apply hands n threads to OpenBLAS if that is not its count already. Under mu.
func apply(n int) {
	if n != policy.set {
		C.openblas_set_num_threads(C.int(n))
		policy.set = n
	}
}

// ticket is what begin returns and end takes back.
type ticket struct{ want, units int }

// begin admits a kernel call of about flops floating-point operations.
func begin(flops float64) ticket {
	p := &policy
	p.mu.Lock()
	for p.busy >= p.limit {
		p.free.Wait()
	}
	want := soleThreads(flops)
	t := ticket{want: want, units: 1}
	p.inflight++
	p.wantSum += want
	if p.inflight == 1 {
		t.units = want // alone: it may take the whole budget
		apply(want)
	} else {
		apply(1)
	}
	p.busy += t.units
	p.mu.Unlock()
	return t
}

// end releases a call admitted by begin.
func end(t ticket) {
	p := &policy
	p.mu.Lock()
	p.inflight--
	p.wantSum -= t.want
	p.busy -= t.units
	if p.inflight == 1 {
		// The one left may use the pool again from its next BLAS call on.
		apply(p.wantSum)
	}
	p.mu.Unlock()
	p.free.Broadcast()
}

// Reserve registers a caller (a solve, a plan) that will run kernels until
// it calls the returned release, using at most threads kernel threads
// (threads ≤ 0: its share of the budget). While k callers are registered, a
// call that runs alone uses at most budget/k threads and at most the
// smallest positive threads among them; unregistered calls count as
// nobody's. Release is idempotent.
func Reserve(threads int) (release func()) {
	threads = max(0, threads)
	p := &policy
	p.mu.Lock()
	p.leases[threads]++
	p.nleases++
	p.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			if p.leases[threads]--; p.leases[threads] == 0 {
				delete(p.leases, threads)
			}
			p.nleases--
			p.mu.Unlock()
		})
	}
}

// SetThreads sets the kernel-thread budget: the most threads one call uses
// (when it runs alone) and the most kernel calls that run at once. n < 1 is
// taken as 1. It must not be called while kernels are running if n exceeds
// OpenBLAS's pool (OpenBLAS then starts threads); with kernels in flight
// the new count reaches OpenBLAS at the next call.
func SetThreads(n int) {
	n = max(1, n)
	policy.mu.Lock()
	policy.limit = n
	if policy.inflight == 0 {
		apply(n) // so that OpenBLAS grows its pool now if it must
	}
	policy.mu.Unlock()
	policy.free.Broadcast()
}

// Threads returns the kernel-thread budget (see SetThreads).
func Threads() int {
	policy.mu.Lock()
	defer policy.mu.Unlock()
	return policy.limit
}

// openBLASThreads returns the count OpenBLAS holds now (for tests).
func openBLASThreads() int { return int(C.openblas_get_num_threads()) }

// cube returns n³ as a float64: the flop count scale of an n×n factorization.
func cube(n int) float64 { return float64(n) * float64(n) * float64(n) }
