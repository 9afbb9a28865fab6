package main

import (
	"context"
	"os"
	"sync"
	"time"
)

// commitGate orders the two irreversible steps of a release — the ledger
// charge and the rename of the output into place — with the decision an
// interrupt makes: each step runs holding mu and checks the context under
// it, and an interrupt takes mu for good, so afterwards neither step can
// happen and charged and released say exactly what did.
type commitGate struct {
	mu                sync.Mutex
	charged, released bool
	tmp               string // the output's temporary directory, once made
}

// spend runs the ledger charge (which must check the context itself)
// under the gate.
func (g *commitGate) spend(charge func() error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.charged { // --split terms: the parts share one charge
		return nil
	}
	if err := charge(); err != nil {
		return err
	}
	g.charged = true
	return nil
}

// commit runs rename under the gate if ctx is not cancelled.
func (g *commitGate) commit(ctx context.Context, rename func() error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := rename(); err != nil {
		return err
	}
	g.released = true
	return nil
}

// await returns the release's result from done, or on an interrupt at
// once: the noise and reconstruction after the charge do not check the
// context, and a user who pressed Ctrl-C wants out. The work left running
// is discarded when the process exits; the gate, held from then on, keeps
// it from charging or writing anything. A release that was already in
// place when the interrupt came is reported as done.
func (g *commitGate) await(ctx context.Context, done <-chan error) error {
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	g.mu.Lock() // never released: nothing is charged or renamed after this
	if g.released {
		g.mu.Unlock()
		return <-done
	}
	g.removeTemp()
	return errCancelled(ctx)
}

// mkdirTemp makes the output's temporary directory under the gate and
// records it, so that an interrupt, which takes the gate for good, either
// finds it recorded and removes it or prevents it from being made: an
// interrupted release leaves no temporary output behind.
func (g *commitGate) mkdirTemp(parent, pattern string) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	tmp, err := os.MkdirTemp(parent, pattern)
	if err == nil {
		g.tmp = tmp
	}
	return tmp, err
}

// removeTemp removes the recorded temporary directory; the caller holds
// mu. The writer may still be creating a file in it while RemoveAll walks
// it (then the final rmdir fails as not empty), so it tries again; once
// the directory is gone the writer's next create fails and it stops.
func (g *commitGate) removeTemp() {
	if g.tmp == "" {
		return
	}
	for i := 0; i < 10; i++ {
		if err := os.RemoveAll(g.tmp); err == nil {
			return
		}
		time.Sleep(time.Millisecond)
	}
}
