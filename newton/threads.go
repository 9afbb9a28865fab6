package newton

import (
	"runtime"
	"sync"
)

// The solvers' own O(n²) passes between kernel calls run on goroutines;
// this file is their one thread policy (Options.Threads caps it).

// par runs f over [0, n) on at most s.threads goroutines (see parallelRows).
func (s *newtonState) par(n int, f func(lo, hi int)) { parallelRows(s.threads, n, f) }

// parallelRows runs f over [0, n) split into contiguous chunks, one per
// worker: the O(n²) elementwise passes between BLAS calls would otherwise
// run on one core while the BLAS runs on all of them. The upper triangle
// passes are uneven per row, so chunks are interleaved in four times as
// many pieces as workers. threads caps the workers (Options.Threads; 0
// means GOMAXPROCS), so that k concurrent solves with k·threads ≤ cores do
// not oversubscribe the machine.
func parallelRows(threads, n int, f func(lo, hi int)) {
	p := runtime.GOMAXPROCS(0)
	if threads > 0 {
		p = min(p, threads)
	}
	if p <= 1 || n < 256 {
		f(0, n)
		return
	}
	pieces := 4 * p
	var wg sync.WaitGroup
	next := make(chan int, pieces)
	for c := 0; c < pieces; c++ {
		next <- c
	}
	close(next)
	for w := 0; w < p; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range next {
				f(c*n/pieces, (c+1)*n/pieces)
			}
		}()
	}
	wg.Wait()
}

// forTiles calls f(bi, ie, bj, je) for every tile [bi, ie)×[bj, je) of
// the upper triangle of an n×n matrix (bj ≥ bi), the tile rows spread over
// the threads. Filling or mirroring a triangle tile by tile keeps the
// transposed writes in cache: row by row, each write to the lower
// triangle touches a new cache line (measured at n = 2048: 148–233 ms a
// pass row by row against 124–157 ms tiled, on one thread of a shared
// machine; the O(n²) passes run several times per Newton iteration).
func forTiles(threads, n int, f func(bi, ie, bj, je int)) {
	const t = tileEdge
	parallelRows(threads, n, func(lo, hi int) {
		// The tile rows that start in [lo, hi): each is handled once.
		for bi := (lo + t - 1) / t * t; bi < hi; bi += t {
			ie := min(bi+t, n)
			for bj := bi; bj < n; bj += t {
				f(bi, ie, bj, min(bj+t, n))
			}
		}
	})
}

// tileEdge is forTiles' tile edge: a 32×32 tile of float64 is 8 KiB, two
// fit any L1 data cache.
const tileEdge = 32
