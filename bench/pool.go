package bench

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/blas"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/dpsolve/dpsolve/newton"
)

// poolResult compares a worker pool of newton.Solvers with the
// one-at-a-time loop on the same batch of Grams.
type poolResult struct {
	N, Solves, Workers int
	// SequentialSeconds: one Solver, one solve after another, the kernels
	// on all their threads. PoolSeconds: Workers goroutines, each with its
	// own Solver, Options.Threads = 1 and the BLAS on one thread.
	SequentialSeconds, PoolSeconds float64
	// SequentialRate and PoolRate are solves per second; Speedup their ratio.
	SequentialRate, PoolRate, Speedup float64
	// Identical counts the solves whose objective, bound and X agree bit for
	// bit between the two runs; MaxRelDiff is the largest relative
	// difference of objectives and MaxXDiff of X entries otherwise.
	Identical            int
	MaxRelDiff, MaxXDiff float64
}

// poolGrams returns count Grams of size n for the pool benchmark: related
// queries (2n Gaussian products) of full rank n for even i and of rank n/4
// for odd i, so the batch exercises both of newton's methods.
func poolGrams(n, count int) ([]*mat.SymDense, error) {
	gs := make([]*mat.SymDense, count)
	for i := range gs {
		s := n
		if i%2 == 1 {
			s = max(1, n/4)
		}
		w, err := workload.Parse(fmt.Sprintf("wrelated:m=%d,s=%d,seed=%d", 2*n, s, i+1), n)
		if err != nil {
			return nil, err
		}
		gs[i] = w.Gram()
	}
	return gs, nil
}

// workerPool solves grams one at a time, then from a pool of workers (0:
// the backend's thread count), and compares speed and results. The BLAS
// thread count is restored on return.
func workerPool(ctx context.Context, grams []*mat.SymDense, workers int) (poolResult, error) {
	be := blas.Current()
	threads := be.Threads()
	if workers <= 0 {
		workers = max(1, threads)
	}
	r := poolResult{Solves: len(grams), Workers: workers}
	if len(grams) > 0 {
		r.N = grams[0].SymmetricDim()
	}
	seq := make([]newton.Result, len(grams))
	one := newton.NewSolver(nil)
	start := time.Now()
	for i, v := range grams {
		if err := one.Solve(ctx, v, &seq[i]); err != nil {
			return r, err
		}
	}
	r.SequentialSeconds = time.Since(start).Seconds()

	par := make([]newton.Result, len(grams))
	errs := make([]error, len(grams))
	be.SetThreads(1)
	defer be.SetThreads(threads)
	jobs := make(chan int)
	var wg sync.WaitGroup
	start = time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := newton.NewSolver(&newton.Options{Threads: 1})
			for i := range jobs {
				errs[i] = s.Solve(ctx, grams[i], &par[i])
			}
		}()
	}
	for i := range grams {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	r.PoolSeconds = time.Since(start).Seconds()
	for _, err := range errs {
		if err != nil {
			return r, err
		}
	}
	r.SequentialRate = float64(len(grams)) / r.SequentialSeconds
	r.PoolRate = float64(len(grams)) / r.PoolSeconds
	r.Speedup = r.PoolRate / r.SequentialRate
	for i := range grams {
		a, b := &seq[i], &par[i]
		same := a.Objective == b.Objective && a.LowerBound == b.LowerBound
		xd := 0.0
		for k, x := range a.X.RawSymmetric().Data {
			xd = math.Max(xd, math.Abs(x-b.X.RawSymmetric().Data[k]))
		}
		if same && xd == 0 {
			r.Identical++
			continue
		}
		r.MaxRelDiff = math.Max(r.MaxRelDiff, math.Abs(a.Objective-b.Objective)/math.Abs(a.Objective))
		r.MaxXDiff = math.Max(r.MaxXDiff, xd)
	}
	return r, nil
}
