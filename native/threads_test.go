//go:build cgo && !purego

package native

import (
	"sync"
	"testing"
	"time"
)

const big = 2 * 1024 * 1024 * 1024 // a 1024³ product: above minParallelFlops

// withBudget runs f with the kernel-thread budget n, restoring it after.
func withBudget(t *testing.T, n int, f func()) {
	t.Helper()
	old := Threads()
	SetThreads(n)
	defer SetThreads(old)
	f()
}

// A lone large call takes its threads; a second call that overlaps it
// takes OpenBLAS's count down to 1 (so the pool has one user at most), and
// when it leaves the first gets its threads back. A small call runs on one
// thread even alone.
func TestGateThreads(t *testing.T) {
	withBudget(t, 4, func() {
		r1, r2 := Reserve(0), Reserve(0) // two solves: a lone call takes 4/2 threads
		defer r1()
		defer r2()
		a := begin(big)
		if got := openBLASThreads(); got != 2 {
			t.Fatalf("lone call: OpenBLAS on %d threads, want 2", got)
		}
		b := begin(big)
		if got := openBLASThreads(); got != 1 {
			t.Fatalf("overlapping calls: OpenBLAS on %d threads, want 1", got)
		}
		end(b)
		if got := openBLASThreads(); got != 2 {
			t.Fatalf("after the overlap: OpenBLAS on %d threads, want 2", got)
		}
		end(a)
		s := begin(minParallelFlops / 2)
		if got := openBLASThreads(); got != 1 {
			t.Fatalf("small lone call: OpenBLAS on %d threads, want 1", got)
		}
		end(s)
	})
}

// A lone call that holds the whole budget makes the next call wait (parked
// in the gate, not spinning in OpenBLAS) until it leaves.
func TestGateWaitsForBudget(t *testing.T) {
	withBudget(t, 2, func() {
		a := begin(big) // nobody registered: it takes both threads
		admitted := make(chan ticket)
		go func() { admitted <- begin(big) }()
		select {
		case b := <-admitted:
			end(b)
			end(a)
			t.Fatal("a second call was admitted while the first held the whole budget")
		case <-time.After(50 * time.Millisecond):
		}
		end(a)
		end(<-admitted)
	})
}

// Registered callers share the budget: with k registered, a lone call
// takes budget/k threads, and no more than the smallest positive cap.
func TestReserveShares(t *testing.T) {
	withBudget(t, 4, func() {
		share := func() int {
			policy.mu.Lock()
			defer policy.mu.Unlock()
			return soleThreads(big)
		}
		if got := share(); got != 4 {
			t.Fatalf("nobody registered: %d threads, want 4", got)
		}
		r1 := Reserve(0)
		r2 := Reserve(0)
		if got := share(); got != 2 {
			t.Fatalf("two registered: %d threads, want 2", got)
		}
		r3 := Reserve(1)
		if got := share(); got != 1 {
			t.Fatalf("one registered with 1 thread: %d threads, want 1", got)
		}
		r3()
		r3() // idempotent
		if got := share(); got != 2 {
			t.Fatalf("after a release (twice): %d threads, want 2", got)
		}
		r1()
		r2()
		if got := share(); got != 4 {
			t.Fatalf("all released: %d threads, want 4", got)
		}
	})
}

// Under many concurrent calls the invariants hold at every admission:
// OpenBLAS runs more than one thread only for a lone call, and the calls in
// flight never hold more than the budget.
func TestGateInvariantUnderLoad(t *testing.T) {
	withBudget(t, 2, func() {
		var wg sync.WaitGroup
		errs := make(chan string, 64)
		for g := 0; g < 16; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 2000; i++ {
					flops := float64(big)
					if (i+g)%3 == 0 {
						flops = 1000
					}
					tk := begin(flops)
					policy.mu.Lock()
					if policy.set > 1 && policy.inflight != 1 {
						errs <- "OpenBLAS threaded with several calls in flight"
					}
					if policy.busy > policy.limit {
						errs <- "budget exceeded"
					}
					policy.mu.Unlock()
					end(tk)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Fatal(e)
		}
		if policy.inflight != 0 || policy.busy != 0 || policy.wantSum != 0 {
			t.Fatalf("gate not empty after all calls: %+v", policy.inflight)
		}
	})
}
