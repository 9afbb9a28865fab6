#!/usr/bin/python3
"""Peer: L-BFGS over the off-diagonal of X, the approach of HDMM (McKenna,
Miklau, Hay, Machanavajjhala, "Optimizing error of high-dimensional
statistical queries under differential privacy", VLDB 2018; the
`McKennaConvex` template of the hdmm code), for min tr(V X^-1) s.t. diag(X) = 1.

Parametrization (as HDMM): the unknowns are the n(n-1)/2 strictly-lower
entries theta of X, and X = I + L(theta) + L(theta)^T, so diag(X) = 1 holds
by construction and the problem is unconstrained apart from X > 0.
  F(theta) = tr(V X^-1) = sum(X^-1 * V) via Cholesky (dpotrf) and its
             inverse (dpotri);
  dF/dtheta_ij = 2 G_ij, G = -X^-1 V X^-1 (two GEMMs), i > j.
A point that is not positive definite (Cholesky fails) returns 100x the last
objective with a zero gradient, HDMM's device that makes the line search back
off. The optimizer is scipy.optimize.minimize(method="L-BFGS-B") without
bounds, with its own tolerances disabled (ftol = gtol = 0) so that it stops on
the gap below, the iteration cap, the time budget, or a failed line search.

Start (--init): "corr" (default) is V^1/2 rescaled to unit diagonal, the same
warm start dpsolve's Newton method uses, so both start from the same point;
"hdmm" is HDMM's choice, V^1/2 / max(diag V^1/2) with the diagonal then set to 1.
Memory (--maxcor): scipy's default 10 corrections (HDMM passes 1).

Stopping: with --lower-bound L it stops as soon as (F - L)/F <= gap (it pays
nothing for certification). Without it, every --cert-every iterations it
certifies itself with the weak-duality bound at y = diag(X^-1 V X^-1) = -diag(G)
(one eigenvalue-only decomposition, counted in its time).

No Go involved: numpy/scipy on the system BLAS/LAPACK.
"""

import math
import os
import sys

import numpy as np
import scipy.linalg
import scipy.optimize
from scipy.linalg.lapack import dpotrf, dpotri

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402


class _Stop(Exception):
    """Raised from the L-BFGS callback to end the run."""

    def __init__(self, status):
        super().__init__(status)
        self.status = status


class OffDiagonalObjective:
    """F(theta) = tr(V X(theta)^-1) and its gradient over the strictly-lower entries."""

    def __init__(self, V):
        self.V = V
        self.n = V.shape[0]
        self.mask = np.tri(self.n, k=-1, dtype=bool)
        self.X = np.empty((self.n, self.n))
        self.last = None  # (theta, F, diag(X^-1 V X^-1)) of the last successful evaluation

    def matrix(self, theta):
        """X(theta) = I + L + L^T as a new array."""
        X = np.zeros((self.n, self.n))
        X[self.mask] = theta
        X += X.T
        np.fill_diagonal(X, 1.0)
        return X

    def __call__(self, theta):
        X = self.X
        X.fill(0.0)
        X[self.mask] = theta
        X += X.T
        np.fill_diagonal(X, 1.0)
        c, info = dpotrf(X, lower=0, clean=0, overwrite_a=0)
        if info == 0:
            iX, info = dpotri(c, lower=0, overwrite_c=1)
        if info != 0:
            F = 100.0 * self.last[1] if self.last else math.inf
            return F, np.zeros_like(theta)
        iX = np.triu(iX) + np.triu(iX, 1).T
        F = float(np.sum(iX * self.V))
        G = iX @ self.V @ iX  # = -gradient matrix
        grad = -2.0 * G[self.mask]
        self.last = (theta.copy(), F, np.diag(G).copy())
        return F, grad


def initial_point(V, init):
    """The starting X's off-diagonal for --init corr or hdmm."""
    lam, U = scipy.linalg.eigh(V, driver="evd", check_finite=False)
    R = (U * np.sqrt(np.clip(lam, 0.0, None))) @ U.T  # V^1/2
    if init == "corr":
        X = common.unit_diagonal(R)
    elif init == "hdmm":
        X = R / np.diag(R).max()
        np.fill_diagonal(X, 1.0)
    else:
        raise ValueError("unknown --init %r (want corr or hdmm)" % init)
    return X[np.tri(V.shape[0], k=-1, dtype=bool)]


def lbfgs(V, rec, gap=1e-8, lower_bound=None, max_iter=100000, maxcor=10, init="corr", cert_every=10):
    """Runs L-BFGS on V; rec (a common.Recorder) times it and keeps the trace.
    Returns (X, objective, lower, lower_source, iterations, status)."""
    if np.any(np.diag(V) <= 0):
        raise ValueError("V has a non-positive diagonal entry: a cell no query touches (V must be positive definite)")
    if cert_every < 1:
        raise ValueError("--cert-every must be at least 1")
    f = OffDiagonalObjective(V)
    theta0 = initial_point(V, init)
    F0, _ = f(theta0)
    if not math.isfinite(F0):
        raise ValueError("the initial point is not positive definite: V must be positive definite")
    state = {"lower": lower_bound, "src": "external" if lower_bound is not None else None,
             "iter": 0, "best": (F0, theta0.copy())}

    def certify():
        _, F, y = f.last
        lower = common.certificate_bound(V, y)
        if state["lower"] is None or lower > state["lower"]:
            state["lower"], state["src"] = lower, "self"
        return lower

    def callback(xk):
        state["iter"] += 1
        if f.last is None or not np.array_equal(f.last[0], xk):
            f(xk)  # the accepted point was not the last evaluation (rare): evaluate it
        F = f.last[1]
        if F < state["best"][0]:
            state["best"] = (F, f.last[0])
        lower = None
        if lower_bound is None and state["iter"] % cert_every == 0:
            lower = certify()
        rec.record(F, lower)
        if common.relative_gap(state["best"][0], state["lower"]) <= gap:
            raise _Stop("converged")
        if rec.out_of_time():
            raise _Stop("time_limit")

    try:
        res = scipy.optimize.minimize(
            f, theta0, jac=True, method="L-BFGS-B", callback=callback,
            options={"maxcor": maxcor, "ftol": 0.0, "gtol": 0.0, "maxiter": max_iter,
                     "maxfun": 20 * max_iter, "maxls": 40})
        status = "iteration_limit" if res.status == 1 else "stalled"
    except _Stop as stop:
        status = stop.status
    F, theta = state["best"]
    if lower_bound is None and status != "converged":
        f(theta)  # certify the iterate returned (the bound is valid for any X; this one is the tightest)
        certify()
    return f.matrix(theta), F, state["lower"], state["src"], state["iter"], status


def solve(args, V):
    rec = common.Recorder(args)
    X, F, lower, src, it, status = lbfgs(V, rec, args.gap, args.lower_bound, args.max_iter,
                                         args.maxcor, args.init, args.cert_every)
    common.finish(args, "lbfgs", V, X, rec, F, lower, src, it, status,
                  {"maxcor": args.maxcor, "init": args.init})


def _parser():
    p = common.parser(__doc__.splitlines()[0])
    p.add_argument("--maxcor", type=int, default=10, help="L-BFGS memory (corrections kept); HDMM uses 1")
    p.add_argument("--init", default="corr", help="starting point: corr (V^1/2 at unit diagonal) or hdmm")
    p.add_argument("--cert-every", type=int, default=10,
                   help="without --lower-bound: certify every this many iterations")
    return p


if __name__ == "__main__":
    common.main(solve, _parser())
