"""DP-MF peer: projected-gradient L-BFGS on X for multi-participation matrix
factorization, the published algorithm of jax_privacy's
matrix_factorization/dense.py (Choquette-Choo et al., ICML 2023; McKenna's
implementation), written here from its description with numpy/scipy:

  * minimize the mean loss L(X) = tr(V X^-1)/n, V = A^T A, over X > 0;
  * start at X = I/k (fixed epoch, k epochs) or I (banded, unit diagonal);
  * gradient -X^-1 V X^-1 / n, projected: entries fixed at zero are zeroed
    (same pattern off the diagonal, or outside the band), and the diagonal
    has each pattern's mean removed (fixed epoch: keeps sum_{i in pattern}
    X_ii = 1) or is zeroed (banded: diag X = 1);
  * L-BFGS (memory 1, as jax_privacy's default optimizer) with a
    backtracking Armijo line search (slope 1e-4, factor 0.8, at most 128
    steps, a trial point must be positive definite); the first step is the
    gradient scaled to unit norm;
  * stop when max |projected gradient| <= --pg-tol (default 1e-3), or, for
    the tight run, when tr(V X^-1) <= --target * (1 + --target-rtol).

Every 50 steps the constraints are re-imposed exactly (zero entries set to
zero, pattern diagonal sums reset to 1 / diagonal to 1) so that rounding
drift cannot raise the sensitivity.

Prints one JSON object; writes X to --out.
"""

import argparse
import json
import math
import sys
import time

import numpy as np
import scipy.linalg


def masks(n, epochs, bands):
    i = np.arange(n)
    if bands:
        free = (np.abs(i[:, None] - i[None, :]) < bands) & (i[:, None] != i[None, :])
    else:
        b = n // epochs
        free = (i[:, None] % b) != (i[None, :] % b)
    return free


def project(G, free, epochs, bands):
    P = np.where(free, G, 0.0)
    n = G.shape[0]
    if not bands:
        d = np.diag(G).reshape(epochs, -1)
        d = d - d.mean(axis=0, keepdims=True)
        P[np.diag_indices(n)] = d.reshape(-1)
    return P


def reimpose(X, free, epochs, bands):
    n = X.shape[0]
    X = 0.5 * (X + X.T)
    d = np.diag(X).copy()
    X = np.where(free, X, 0.0)
    if bands:
        d[:] = 1.0
    else:
        dd = d.reshape(epochs, -1)
        dd += (1.0 - dd.sum(axis=0, keepdims=True)) / epochs
        d = dd.reshape(-1)
    X[np.diag_indices(n)] = d
    return X


def loss_grad(X, A, n, need_grad=True):
    try:
        c = scipy.linalg.cho_factor(X, lower=False, check_finite=False)
    except np.linalg.LinAlgError:
        return math.inf, None
    H = scipy.linalg.cho_solve(c, A.T, check_finite=False)  # X^-1 A^T
    f = float(np.sum(A.T * H))  # tr(A X^-1 A^T)
    if not math.isfinite(f) or not need_grad:
        return f, None
    return f, -(H @ H.T) / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", required=True, help="workload A (n x n .npy)")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--bands", type=int, default=0)
    ap.add_argument("--pg-tol", type=float, default=1e-3)
    ap.add_argument("--target", type=float, default=0.0)
    ap.add_argument("--target-rtol", type=float, default=1e-8)
    ap.add_argument("--max-steps", type=int, default=10000)
    ap.add_argument("--max-seconds", type=float, default=0)
    ap.add_argument("--memory", type=int, default=1)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    A = np.ascontiguousarray(np.load(args.a, allow_pickle=False), dtype=np.float64)
    n = A.shape[1]
    k = args.epochs
    if not args.bands and (k < 1 or n % k):
        raise SystemExit("n = %d not divisible by epochs = %d" % (n, k))
    free = masks(n, k, args.bands)
    X = np.eye(n) / (1 if args.bands else k)
    t0, c0 = time.perf_counter(), time.process_time()
    f, g = loss_grad(X, A, n)
    g = project(g, free, k, args.bands)
    S, Y = [], []
    lr = 1.0
    status = "max-steps"
    step = 0
    while step < args.max_steps:
        pg = float(np.max(np.abs(g)))
        if args.target > 0:
            if f <= args.target * (1 + args.target_rtol):
                status = "target"
                break
        elif pg <= args.pg_tol:
            status = "pg-tol"
            break
        if args.max_seconds and time.perf_counter() - t0 > args.max_seconds:
            status = "time"
            break
        # two-loop recursion on flattened projected gradients
        q = g.copy()
        alphas = []
        for s, y in reversed(list(zip(S, Y))):
            rho = 1.0 / np.vdot(y, s)
            a = rho * np.vdot(s, q)
            alphas.append((a, rho, s, y))
            q -= a * y
        if S:
            s, y = S[-1], Y[-1]
            q *= np.vdot(s, y) / np.vdot(y, y)
        else:
            q /= max(np.linalg.norm(q), 1e-300)
        for a, rho, s, y in reversed(alphas):
            b = rho * np.vdot(y, q)
            q += (a - b) * s
        d = project(-q, free, k, args.bands)
        slope = float(np.vdot(g, d))
        if slope >= 0:  # not a descent direction: restart from the gradient
            S, Y = [], []
            d = -g / max(np.linalg.norm(g), 1e-300)
            slope = float(np.vdot(g, d))
        t = min(1.0, lr * 1.5)
        accepted = False
        for _ in range(128):
            Xn = X + t * d
            fn, _ = loss_grad(Xn, A, n, need_grad=False)
            if math.isfinite(fn) and fn / n <= f / n + 1e-4 * t * slope:
                accepted = True
                break
            t *= 0.8
        if not accepted:
            status = "line-search"
            break
        lr = t
        step += 1
        if step % 50 == 0:
            Xn = reimpose(Xn, free, k, args.bands)
        fn, gn = loss_grad(Xn, A, n)
        if gn is None:
            status = "not-definite"
            break
        gn = project(gn, free, k, args.bands)
        s, y = (Xn - X), (gn - g)
        if np.vdot(s, y) > 1e-300:
            S.append(s)
            Y.append(y)
            if len(S) > args.memory:
                S.pop(0)
                Y.pop(0)
        X, f, g = Xn, fn, gn
    X = reimpose(X, free, k, args.bands)
    f, _ = loss_grad(X, A, n, need_grad=False)
    secs, cpu = time.perf_counter() - t0, time.process_time() - c0
    if args.out:
        np.save(args.out, X)
    print(json.dumps({"peer": "mflbfgs", "n": n, "objective": f, "steps": step, "seconds": secs, "cpu_seconds": cpu,
                      "status": status, "max_pg": pg}))


if __name__ == "__main__":
    main()
