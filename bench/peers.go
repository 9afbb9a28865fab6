package bench

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dpsolve/dpsolve/internal/matio"
	"gonum.org/v1/gonum/mat"
)

// DefaultPython is the interpreter the peers run with: Debian's python3,
// which has numpy and scipy (a python3 earlier on PATH may lack them).
const DefaultPython = "/usr/bin/python3"

// The peers' sources, embedded so that the dpsolve binary can run them
// wherever a suitable Python is installed.
//
//go:embed peers/common.py peers/fixedpoint.py peers/lbfgs.py peers/pidentity.py
var peerFS embed.FS

// PeerNames lists the Python peers: the dual fixed point of Denisov et al.
// (2022) and HDMM-style L-BFGS over the off-diagonal of X.
var PeerNames = []string{"fixedpoint", "lbfgs"}

// builtinPeerWorkloads are the workloads whose closed-form Gram the peers
// build themselves; any other is handed over as a .npy file.
var builtinPeerWorkloads = map[string]bool{"prefix": true, "allrange": true, "identity": true}

// Peers runs the embedded Python peers.
type Peers struct {
	// Python is the interpreter.
	Python string
	// Dir holds the extracted scripts and the scratch files of runs.
	Dir string
	// Version describes the interpreter and its numpy/scipy.
	Version string
	// MaxSeconds is each run's time budget (the peer stops itself and returns
	// its best X); the process is killed 60 s after it.
	MaxSeconds float64
	// Threads, if positive, is passed as OPENBLAS_NUM_THREADS.
	Threads int
}

// NewPeers checks that python can import numpy and scipy and extracts the
// peer scripts into a fresh temporary directory; Close removes it. The error
// says why peers cannot run (the harness then skips them with that note).
func NewPeers(ctx context.Context, python string) (*Peers, error) {
	if python == "" {
		python = DefaultPython
	}
	if _, err := exec.LookPath(python); err != nil {
		return nil, fmt.Errorf("peers skipped: %s not found", python)
	}
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(cctx, python, "-B", "-c",
		"import sys, numpy, scipy; print('python %d.%d.%d, numpy %s, scipy %s' % (sys.version_info[:3] + (numpy.__version__, scipy.__version__)))").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("peers skipped: %s cannot import numpy and scipy (%v: %s)", python, err, strings.TrimSpace(lastLine(string(out))))
	}
	dir, err := os.MkdirTemp("", "dpsolve-peers-")
	if err != nil {
		return nil, err
	}
	entries, err := peerFS.ReadDir("peers")
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	for _, e := range entries {
		b, err := peerFS.ReadFile("peers/" + e.Name())
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644)
		}
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	return &Peers{Python: python, Dir: dir, Version: strings.TrimSpace(string(out)), MaxSeconds: 600}, nil
}

// Close removes the scripts and scratch files.
func (p *Peers) Close() error { return os.RemoveAll(p.Dir) }

// Solver returns the Solver for the named peer ("fixedpoint" or "lbfgs").
func (p *Peers) Solver(name string) (Solver, error) {
	for _, n := range PeerNames {
		if n == name {
			return &peerSolver{p: p, peer: name}, nil
		}
	}
	return nil, fmt.Errorf("unknown peer %q (want %s)", name, strings.Join(PeerNames, " or "))
}

type peerSolver struct {
	p    *Peers
	peer string
	runs int
}

func (s *peerSolver) name() string { return s.peer }

// peerReport is the JSON line a peer prints.
type peerReport struct {
	Peer       string        `json:"peer"`
	N          int           `json:"n"`
	Objective  float64       `json:"objective"`
	Gap        *float64      `json:"gap"`
	Iterations int           `json:"iterations"`
	Seconds    float64       `json:"seconds"`
	Status     string        `json:"status"`
	Trace      [][3]*float64 `json:"trace"`
}

func (s *peerSolver) solve(ctx context.Context, pr problem, lowerBound float64) (*outcome, error) {
	p := s.p
	s.runs++
	n := pr.n()
	tag := fmt.Sprintf("%s-%s-%d-%d", s.peer, sanitize(pr.Workload), n, s.runs)
	xfile := filepath.Join(p.Dir, tag+".x.npy")
	defer os.Remove(xfile)
	args := []string{"-B", filepath.Join(p.Dir, s.peer+".py"), "--out", xfile,
		"--gap", strconv.FormatFloat(pr.Tol, 'g', -1, 64)}
	if builtinPeerWorkloads[pr.Workload] {
		args = append(args, "--workload", pr.Workload, "--n", strconv.Itoa(n))
	} else {
		gfile := filepath.Join(p.Dir, tag+".gram.npy")
		if err := matio.WriteMatrix(gfile, pr.V); err != nil {
			return nil, fmt.Errorf("writing the Gram for %s: %w", s.peer, err)
		}
		defer os.Remove(gfile)
		args = append(args, "--gram", gfile)
	}
	if !math.IsNaN(lowerBound) && !math.IsInf(lowerBound, 0) {
		args = append(args, "--lower-bound", strconv.FormatFloat(lowerBound, 'g', -1, 64))
	}
	if p.MaxSeconds > 0 {
		args = append(args, "--max-seconds", strconv.FormatFloat(p.MaxSeconds, 'g', -1, 64))
	}
	cctx := ctx
	if p.MaxSeconds > 0 {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(ctx, time.Duration((p.MaxSeconds+60)*float64(time.Second)))
		defer cancel()
	}
	stdout, stderr, err := p.run(cctx, args...)
	if err != nil {
		if cctx.Err() != nil {
			return nil, fmt.Errorf("peer %s killed (its time budget plus 60 s passed, or the run was cancelled): %w", s.peer, cctx.Err())
		}
		return nil, fmt.Errorf("peer %s: %v: %s", s.peer, err, strings.TrimSpace(lastLine(stderr.String())))
	}
	var rep peerReport
	if err := json.Unmarshal([]byte(lastLine(stdout.String())), &rep); err != nil {
		return nil, fmt.Errorf("peer %s: unreadable report: %v", s.peer, err)
	}
	if rep.Peer != s.peer || rep.N != n {
		return nil, fmt.Errorf("peer %s reported peer %q with n = %d, want n = %d", s.peer, rep.Peer, rep.N, n)
	}
	X, err := readSym(xfile)
	if err != nil {
		return nil, fmt.Errorf("peer %s: reading X: %w", s.peer, err)
	}
	out := &outcome{X: X, Objective: rep.Objective, Gap: math.NaN(), Iterations: rep.Iterations,
		Status: rep.Status, Seconds: rep.Seconds, Trace: make([]TracePoint, 0, len(rep.Trace))}
	if rep.Gap != nil {
		out.Gap = *rep.Gap
	}
	for _, t := range rep.Trace {
		if t[0] == nil || t[1] == nil {
			return nil, fmt.Errorf("peer %s: trace entry without seconds or objective", s.peer)
		}
		out.Trace = append(out.Trace, TracePoint{Seconds: *t[0], Objective: *t[1], GapBest: Num(math.NaN())})
	}
	return out, nil
}

// run runs the interpreter with args and the peers' environment, and
// returns what it wrote on stdout and stderr.
func (p *Peers) run(ctx context.Context, args ...string) (stdout, stderr *bytes.Buffer, err error) {
	cmd := exec.CommandContext(ctx, p.Python, args...)
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	if p.Threads > 0 {
		cmd.Env = append(cmd.Env, "OPENBLAS_NUM_THREADS="+strconv.Itoa(p.Threads))
	}
	stdout, stderr = new(bytes.Buffer), new(bytes.Buffer)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	return stdout, stderr, cmd.Run()
}

// readSym reads a square .npy matrix and checks that it is symmetric.
func readSym(path string) (*mat.SymDense, error) {
	d, err := matio.ReadMatrix(path)
	if err != nil {
		return nil, err
	}
	r, c := d.Dims()
	if r != c {
		return nil, fmt.Errorf("%s is %d×%d, not square", path, r, c)
	}
	s := mat.NewSymDense(r, nil)
	for i := 0; i < r; i++ {
		for j := i; j < r; j++ {
			a, b := d.At(i, j), d.At(j, i)
			if a != b {
				return nil, fmt.Errorf("%s is not symmetric: X[%d,%d] = %g, X[%d,%d] = %g", path, i, j, a, j, i, b)
			}
			s.SetSym(i, j, a)
		}
	}
	return s, nil
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}
