package newton_test

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/testkit"
	"github.com/dpsolve/dpsolve/newton"
)

// weightedPrefix returns the Gram V = Wᵀ D² W of the n prefix queries
// weighted by d_i = 1 + ((i·(k+3)) mod 7)/7: V[j][l] = Σ_{i ≥ max(j,l)} d_i².
// Different k give different, full-rank problems of the same size.
func weightedPrefix(n, k int) *mat.SymDense {
	tail := make([]float64, n+1) // tail[i] = Σ_{i' ≥ i} d_{i'}²
	for i := n - 1; i >= 0; i-- {
		d := 1 + float64((i*(k+3))%7)/7
		tail[i] = tail[i+1] + d*d
	}
	v := mat.NewSymDense(n, nil)
	for j := 0; j < n; j++ {
		for l := j; l < n; l++ {
			v.SetSym(j, l, tail[l])
		}
	}
	return v
}

// solveAll solves the problems with one default Solver each, in g
// goroutines (g = 1: one after another), and returns the objectives.
func solveAll(vs []*mat.SymDense, g int) ([]float64, error) {
	obj := make([]float64, len(vs))
	errs := make([]error, len(vs))
	next := make(chan int, len(vs))
	for i := range vs {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for w := 0; w < g; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				var res newton.Result
				errs[i] = newton.NewSolver(nil).Solve(context.Background(), vs[i], &res)
				obj[i] = res.Objective
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return obj, nil
}

// now returns the wall clock and the process's CPU times.
func now() (time.Time, time.Duration, time.Duration) {
	u, s := testkit.CPUTime()
	return time.Now(), u, s
}

// BenchmarkConcurrentSolvers solves k different weighted-prefix problems
// at n = 512 with default options, one after another and then in k
// goroutines, in each iteration, and reports the concurrent wall time as a
// multiple of the sequential one (conc/seq), and the CPU time (user +
// system) of both phases: on a machine shared with other work the CPU time
// is the steadier figure.
func BenchmarkConcurrentSolvers(b *testing.B) {
	for _, k := range []int{2, 8, 32} {
		b.Run(fmt.Sprintf("goroutines=%d", k), func(b *testing.B) {
			vs := make([]*mat.SymDense, k)
			for i := range vs {
				vs[i] = weightedPrefix(512, i)
			}
			var seq, conc, seqCPU, concCPU, concSys time.Duration
			for i := 0; i < b.N; i++ {
				t0, u0, s0 := now()
				want, err := solveAll(vs, 1)
				if err != nil {
					b.Fatal(err)
				}
				t1, u1, s1 := now()
				got, err := solveAll(vs, k)
				if err != nil {
					b.Fatal(err)
				}
				t2, u2, s2 := now()
				seq += t1.Sub(t0)
				conc += t2.Sub(t1)
				seqCPU += u1 - u0 + s1 - s0
				concCPU += u2 - u1 + s2 - s1
				concSys += s2 - s1
				for j := range want {
					if math.Abs(got[j]-want[j]) > 1e-12*math.Abs(want[j]) {
						b.Fatalf("problem %d: concurrent objective %.17g, sequential %.17g", j, got[j], want[j])
					}
				}
			}
			b.ReportMetric(seq.Seconds()/float64(b.N), "seq-s")
			b.ReportMetric(conc.Seconds()/float64(b.N), "conc-s")
			b.ReportMetric(conc.Seconds()/seq.Seconds(), "conc/seq")
			b.ReportMetric(seqCPU.Seconds()/float64(b.N), "seq-cpu-s")
			b.ReportMetric(concCPU.Seconds()/float64(b.N), "conc-cpu-s")
			b.ReportMetric(concSys.Seconds()/float64(b.N), "conc-sys-s")
		})
	}
}
