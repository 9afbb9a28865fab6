package bench

import (
	"context"
	"os/exec"
	"testing"

	"github.com/dpsolve/dpsolve/internal/reference"
	"github.com/dpsolve/dpsolve/model/workload"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

// newTestPeers returns the peers, or skips the test where Debian's
// numpy/scipy are absent (CI installs them with scripts/install-deps.sh).
func newTestPeers(t *testing.T) *Peers {
	t.Helper()
	p, err := NewPeers(context.Background(), DefaultPython)
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// Through the Go runner: each peer's X, read back from .npy, certifies
// (by newton.Certificate) to the certified optimum of Prefix n = 64,
// reference.PrefixN64.
func TestPeersThroughRunner(t *testing.T) {
	p := newTestPeers(t)
	V := (&workload.Prefix{N: 64}).Gram()
	ref := reference.PrefixN64
	for _, name := range PeerNames {
		t.Run(name, func(t *testing.T) {
			s, err := p.Solver(name)
			require.NoError(t, err)
			o, err := s.solve(context.Background(), problem{Workload: "prefix", V: V, Tol: 1e-8}, ref*(1-1e-12))
			require.NoError(t, err)
			assert.Equal(t, "converged", o.Status)
			assert.Len(t, o.Trace, o.Iterations)
			f, g, gap, err := certify(V, o.X)
			require.NoError(t, err)
			// the peer stopped within 1e-8 of the given bound; our own
			// certificate at its X may be looser but not by orders of magnitude
			assert.InDelta(t, ref, f, ref*(1e-8+5e-10))
			assert.Less(t, gap, 1e-6)
			assert.LessOrEqual(t, g, ref*(1+5e-10))
			assert.InDelta(t, o.Objective, f, 1e-9*f, "peer's objective agrees with tr(V X⁻¹)")
		})
	}
	_, err := p.Solver("nosuch")
	assert.Error(t, err)
}

// A workload the peers do not know in closed form travels as a .npy file.
func TestPeersGramFile(t *testing.T) {
	p := newTestPeers(t)
	V := mat.NewSymDense(3, []float64{4, 1, 0, 1, 3, 1, 0, 1, 2})
	s, _ := p.Solver("fixedpoint")
	o, err := s.solve(context.Background(), problem{Workload: "custom matrix", V: V, Tol: 1e-10}, nan())
	require.NoError(t, err)
	f, _, gap, err := certify(V, o.X)
	require.NoError(t, err)
	assert.LessOrEqual(t, gap, 1e-9)
	assert.InDelta(t, o.Objective, f, 1e-12*f)
}

func TestPeersErrors(t *testing.T) {
	_, err := NewPeers(context.Background(), "/nonexistent/python3")
	assert.ErrorContains(t, err, "not found")
	// an interpreter without numpy: /bin/false exits 1 on everything
	if _, lerr := exec.LookPath("/bin/false"); lerr == nil {
		_, err = NewPeers(context.Background(), "/bin/false")
		assert.ErrorContains(t, err, "cannot import numpy")
	}
	p := newTestPeers(t)
	// an indefinite Gram makes the peer exit with an error message
	s, _ := p.Solver("fixedpoint")
	_, err = s.solve(context.Background(), problem{Workload: "x", V: mat.NewSymDense(2, []float64{1, 2, 2, 1}), Tol: 1e-8}, nan())
	assert.ErrorContains(t, err, "positive definite")
}
