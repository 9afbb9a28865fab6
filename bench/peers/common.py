"""Shared plumbing for the benchmark peers: Gram matrices, the command line,
the weak-duality certificate, and the one-line JSON report.

The peers are deliberately independent of dpsolve's Go code: they read a Gram
matrix (a closed-form built-in or a .npy file), run their own optimizer with
numpy/scipy (Debian's, on the system BLAS/LAPACK), write the final X to .npy
and print one JSON object on stdout. dpsolve's benchmark harness then
re-certifies the returned X with its own certificate.

Objective: F(X) = tr(V X^-1) subject to diag(X) = 1, X positive definite.
Certificate (weak duality): for every y > 0, D = diag(y),
    g(y) = 2 tr((D^1/2 V D^1/2)^1/2) - sum(y) <= min F.
"""

import argparse
import json
import math
import sys
import time

import numpy as np
import scipy.linalg


def prefix_gram(n):
    """V = W^T W for the n prefix sums: V_ij = n - max(i, j) (0-based)."""
    i = np.arange(n)
    return (n - np.maximum.outer(i, i)).astype(np.float64)


def allrange_gram(n):
    """V = W^T W for all n(n+1)/2 ranges: V_ij = (min(i,j)+1)(n - max(i,j))."""
    i = np.arange(n)
    return ((np.minimum.outer(i, i) + 1) * (n - np.maximum.outer(i, i))).astype(np.float64)


def identity_gram(n):
    """V = I for the identity workload."""
    return np.eye(n)


BUILTINS = {"prefix": prefix_gram, "allrange": allrange_gram, "identity": identity_gram}


def load_gram(args):
    """Returns the Gram matrix named by --workload/--n or --gram, validated."""
    if args.gram:
        V = np.load(args.gram, allow_pickle=False)
        if V.ndim != 2 or V.shape[0] != V.shape[1] or V.shape[0] == 0:
            raise ValueError("gram %s: want a non-empty square matrix, got shape %s" % (args.gram, V.shape))
        V = np.ascontiguousarray(V, dtype=np.float64)
    else:
        if args.workload not in BUILTINS:
            raise ValueError("unknown workload %r (want %s)" % (args.workload, ", ".join(sorted(BUILTINS))))
        if args.n is None or args.n <= 0:
            raise ValueError("--n must be a positive integer")
        V = BUILTINS[args.workload](args.n)
    if not np.all(np.isfinite(V)):
        raise ValueError("gram has NaN or Inf entries")
    if not np.allclose(V, V.T, rtol=1e-12, atol=0):
        raise ValueError("gram is not symmetric")
    return V


def certificate_bound(V, y):
    """g(y) = 2 tr((D^1/2 V D^1/2)^1/2) - sum(y); one eigenvalue-only decomposition."""
    s = np.sqrt(y)
    lam = scipy.linalg.eigvalsh(s[:, None] * V * s[None, :], check_finite=False)
    return 2.0 * np.sum(np.sqrt(np.clip(lam, 0.0, None))) - np.sum(y)


def parser(description):
    """The command line every peer shares."""
    p = argparse.ArgumentParser(description=description)
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--workload", help="built-in Gram: prefix, allrange or identity (needs --n)")
    src.add_argument("--gram", help="Gram matrix V as a 2-D float64 .npy file")
    p.add_argument("--n", type=int, help="domain size for --workload")
    p.add_argument("--out", help="write the final X (unit diagonal) to this .npy file")
    p.add_argument("--gap", type=float, default=1e-8,
                   help="stop when (F - L)/F <= GAP, L the best lower bound known (default 1e-8)")
    p.add_argument("--lower-bound", type=float, default=None,
                   help="a lower bound on min F known from elsewhere (e.g. dpsolve's certificate); "
                        "the peer then stops as soon as its objective is within --gap of it")
    p.add_argument("--max-iter", type=int, default=100000, help="iteration cap")
    p.add_argument("--max-seconds", type=float, default=math.inf, help="wall-time budget for the solve")
    p.add_argument("--verbose", action="store_true", help="one progress line per iteration on stderr")
    return p


class Recorder:
    """Times the solve and keeps the per-iteration trace (seconds, objective, lower bound)."""

    def __init__(self, args):
        self.args = args
        self.t0 = time.perf_counter()
        self.trace = []

    def elapsed(self):
        return time.perf_counter() - self.t0

    def record(self, objective, lower):
        """Appends one iteration; lower may be None when the method has no bound this iteration."""
        t = self.elapsed()
        self.trace.append([t, float(objective), None if lower is None else float(lower)])
        if self.args.verbose:
            gap = (objective - lower) / objective if lower is not None else float("nan")
            print("iter %5d  t %9.3fs  F %.12g  L %s  gap %.3g" % (
                len(self.trace), t, objective, "-" if lower is None else "%.12g" % lower, gap),
                file=sys.stderr)
        return t

    def out_of_time(self):
        return self.elapsed() >= self.args.max_seconds


def relative_gap(objective, lower):
    """(F - L)/F, or +inf without a bound."""
    if lower is None or not math.isfinite(lower):
        return math.inf
    return (objective - lower) / objective


def unit_diagonal(X):
    """Rescales a positive definite X to unit diagonal and symmetrizes it exactly."""
    d = 1.0 / np.sqrt(np.diag(X))
    X = d[:, None] * X * d[None, :]
    X = 0.5 * (X + X.T)
    np.fill_diagonal(X, 1.0)
    return X


def finish(args, peer, V, X, rec, objective, lower, lower_source, iterations, status, extra=None):
    """Writes X to --out and prints the one-line JSON report on stdout."""
    seconds = rec.elapsed()
    if args.out:
        np.save(args.out, np.ascontiguousarray(X, dtype=np.float64), allow_pickle=False)
    report = {
        "peer": peer,
        "n": int(V.shape[0]),
        "objective": float(objective),
        "lower_bound": None if lower is None else float(lower),
        "lower_bound_source": lower_source,
        "gap": None if lower is None else float(relative_gap(objective, lower)),
        "iterations": int(iterations),
        "seconds": seconds,
        "status": status,
        "out": args.out,
        "blas_threads": blas_threads(),
        "trace": rec.trace,
    }
    if extra:
        report.update(extra)
    json.dump(report, sys.stdout, allow_nan=False)
    sys.stdout.write("\n")
    sys.stdout.flush()


def blas_threads():
    """The OPENBLAS_NUM_THREADS setting the peer ran with, or None (all cores)."""
    import os
    v = os.environ.get("OPENBLAS_NUM_THREADS") or os.environ.get("OMP_NUM_THREADS")
    return int(v) if v and v.isdigit() else None


def main(solve, argparser):
    """Command-line entry of a peer: parses flags with argparser, loads the
    Gram, runs solve(args, V) and exits 2 on bad input, 1 on a failed solve."""
    args = argparser.parse_args()
    try:
        V = load_gram(args)
    except (ValueError, OSError) as e:
        print("error: %s" % e, file=sys.stderr)
        sys.exit(2)
    try:
        solve(args, V)
    except (ValueError, np.linalg.LinAlgError) as e:
        print("error: %s" % e, file=sys.stderr)
        sys.exit(1)
