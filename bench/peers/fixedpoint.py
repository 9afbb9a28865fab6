#!/usr/bin/python3
"""Peer: the dual fixed point of Denisov, McMahan, Rush, Smith, Thakurta
("Improved Differential Privacy for SGD via Optimal Private Linear Operators
on Adaptive Streams", NeurIPS 2022), for min tr(V X^-1) s.t. diag(X) = 1.

The Lagrange dual of the problem is  max_{y>0} g(y) = 2 tr(M^1/2) - sum(y),
M = D^1/2 V D^1/2, D = diag(y). Its stationarity condition y_i = (M^1/2)_ii
gives the fixed-point iteration

    y <- diag((D^1/2 V D^1/2)^1/2),

one symmetric eigendecomposition M = U diag(lam) U^T per iteration. Each
iterate also yields
  * the certified lower bound g(y) = 2 sum(sqrt(lam)) - sum(y) (free), and
  * a feasible primal point: the KKT solution X = D^-1/2 M^1/2 D^-1/2 rescaled
    to unit diagonal, Xn = R^-1 M^1/2 R^-1 with R = diag(sqrt(m)),
    m = diag(M^1/2); its objective tr(V Xn^-1) = sum_ij V_ij r_i r_j (M^-1/2)_ij
    costs one SYRK of U lam^-1/4.
So the method certifies itself: it stops when (F(Xn) - max_k g(y_k))/F(Xn) <= gap
(or, with --lower-bound L, as soon as F(Xn) is within gap of L).

Start: y0 = diag(V) (the iteration is homogeneous, so only the shape matters).
V must be positive definite. No Go involved: numpy/scipy on the system LAPACK.
"""

import math
import sys
import os

import numpy as np
import scipy.linalg
from scipy.linalg.blas import dsyrk

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402


def fixed_point(V, rec, gap=1e-8, lower_bound=None, max_iter=100000):
    """Runs the dual fixed point on V; rec (a common.Recorder) times it and keeps
    the trace. Returns (X, objective, lower, lower_source, iterations, status)."""
    y = np.diag(V).copy()
    if np.any(y <= 0):
        raise ValueError("V has a non-positive diagonal entry: a cell no query touches (V must be positive definite)")
    best_lower, best_src = -math.inf, None
    if lower_bound is not None:
        best_lower, best_src = lower_bound, "external"
    best = None  # (F, U, sqrt(lam), m) of the lowest objective seen
    status, it = "iteration_limit", 0
    for it in range(1, max_iter + 1):
        s = np.sqrt(y)
        M = s[:, None] * V * s[None, :]
        lam, U = scipy.linalg.eigh(M, driver="evd", overwrite_a=True, check_finite=False)
        if lam[0] <= 0 or not np.isfinite(lam[0]):
            raise ValueError("D^1/2 V D^1/2 is not positive definite (smallest eigenvalue %g): "
                             "V must be positive definite" % lam[0])
        sq = np.sqrt(lam)
        lower = 2.0 * sq.sum() - y.sum()
        m = (U * U) @ sq  # diag(M^1/2)
        # objective of the unit-diagonal primal point: sum_ij V_ij r_i r_j (M^-1/2)_ij
        C = dsyrk(1.0, U * lam ** -0.25)  # upper triangle of M^-1/2
        r = np.sqrt(m)
        W = V * C
        W *= r[:, None]
        W *= r[None, :]
        F = 2.0 * W.sum() - np.trace(W)
        if lower > best_lower:
            best_lower, best_src = lower, "self"
        rec.record(F, lower)
        if best is None or F < best[0]:
            best = (F, U, sq, m)
        if common.relative_gap(best[0], best_lower) <= gap:
            status = "converged"
            break
        if rec.out_of_time():
            status = "time_limit"
            break
        y = m
    F, U, sq, m = best
    B = U * np.sqrt(sq)
    X = dsyrk(1.0, B)  # upper triangle of M^1/2
    X = np.triu(X) + np.triu(X, 1).T
    X = common.unit_diagonal(X)  # = R^-1 M^1/2 R^-1 up to rounding
    return X, F, best_lower, best_src, it, status


def solve(args, V):
    rec = common.Recorder(args)
    X, F, lower, src, it, status = fixed_point(V, rec, args.gap, args.lower_bound, args.max_iter)
    common.finish(args, "fixedpoint", V, X, rec, F, lower, src, it, status)


if __name__ == "__main__":
    common.main(solve, common.parser(__doc__.splitlines()[0]))
