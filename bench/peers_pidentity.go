package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/dpsolve/dpsolve/internal/matio"
)

// pIdentityOutcome is one run of the p-Identity peer (peers/pidentity.py):
// HDMM's Laplace strategy L = [I; Θ]·D⁻¹ optimized by scipy's L-BFGS-B with
// Θ ≥ 0, the independent reference for lrm's p-Identity start.
type pIdentityOutcome struct {
	Theta      *mat.Dense // p×n
	Objective  float64    // the peer's tr(G (LᵀL)⁻¹), as it reports it
	Iterations int
	Seconds    float64 // the optimization alone, timed by the peer
	Status     string
}

// PIdentity runs the p-Identity peer on the Gram G = WᵀW with p extra rows,
// at most maxIter L-BFGS-B iterations and the given seed of its random start.
func (p *Peers) pIdentity(ctx context.Context, g mat.Symmetric, rows, maxIter, seed int) (*pIdentityOutcome, error) {
	n := g.SymmetricDim()
	dir, err := os.MkdirTemp(p.Dir, "pidentity-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	gfile, tfile := filepath.Join(dir, "gram.npy"), filepath.Join(dir, "theta.npy")
	if err := matio.WriteMatrix(gfile, mat.DenseCopyOf(g)); err != nil {
		return nil, fmt.Errorf("writing the Gram for pidentity: %w", err)
	}
	stdout, stderr, err := p.run(ctx, "-B", filepath.Join(p.Dir, "pidentity.py"), "--gram", gfile,
		"--p", strconv.Itoa(rows), "--max-iter", strconv.Itoa(maxIter), "--seed", strconv.Itoa(seed), "--out", tfile)
	if err != nil {
		return nil, fmt.Errorf("peer pidentity: %v: %s", err, strings.TrimSpace(lastLine(stderr.String())))
	}
	var rep struct {
		Peer       string  `json:"peer"`
		N          int     `json:"n"`
		P          int     `json:"p"`
		Objective  float64 `json:"objective"`
		Iterations int     `json:"iterations"`
		Seconds    float64 `json:"seconds"`
		Status     string  `json:"status"`
	}
	if err := json.Unmarshal([]byte(lastLine(stdout.String())), &rep); err != nil {
		return nil, fmt.Errorf("peer pidentity: unreadable report: %v", err)
	}
	if rep.Peer != "pidentity" || rep.N != n || rep.P != rows {
		return nil, fmt.Errorf("peer pidentity reported peer %q with n = %d, p = %d, want n = %d, p = %d", rep.Peer, rep.N, rep.P, n, rows)
	}
	theta, err := matio.ReadMatrix(tfile)
	if err != nil {
		return nil, fmt.Errorf("peer pidentity: reading Θ: %w", err)
	}
	if r, c := theta.Dims(); r != rows || c != n {
		return nil, fmt.Errorf("peer pidentity: Θ is %d×%d, want %d×%d", r, c, rows, n)
	}
	return &pIdentityOutcome{Theta: theta, Objective: rep.Objective, Iterations: rep.Iterations, Seconds: rep.Seconds, Status: rep.Status}, nil
}
