#!/usr/bin/python3
"""Peer: HDMM's p-Identity strategy for the Laplace mechanism (McKenna,
Miklau, Hay, Machanavajjhala, VLDB 2018, the `PIdentity` template), an
independent reference for dpsolve's lrm p-Identity start.

Strategy A = [I; Theta] D^-1 ((n+p) x n), Theta >= 0 (p x n), D = diag(1 +
column sums of Theta): every column of A has l1 norm exactly 1, so the
Laplace error of answering W through A is proportional to
    F(Theta) = tr(G (A^T A)^-1),   G = W^T W,
the same Phi = ||W A^+||_F^2 as dpsolve's lrm. HDMM's formulation is used as
is: L-BFGS-B with the bound Theta >= 0 (dpsolve instead squares an
unconstrained variable and uses gonum's L-BFGS), Theta uniform in [0, 1) at
the start (numpy's generator, so not the same start as dpsolve's).

Evaluation (Woodbury, X = I + Theta^T Theta, (A^T A)^-1 = D X^-1 D):
    X^-1 = I - Theta^T (I_p + Theta Theta^T)^-1 Theta.

Prints one JSON object {"peer", "n", "p", "objective", "iterations",
"seconds", "status"} on stdout and writes Theta to --out (.npy).

No Go involved: numpy/scipy on the system BLAS/LAPACK.
"""

import argparse
import json
import sys
import time

import numpy as np
import scipy.linalg
import scipy.optimize


def objective_and_gradient(G, theta):
    """F(Theta) and dF/dTheta for Theta >= 0 (p x n)."""
    p, n = theta.shape
    d = 1.0 + theta.sum(axis=0)
    S = np.eye(p) + theta @ theta.T
    Z = scipy.linalg.cho_solve(scipy.linalg.cho_factor(S), theta)  # (I + Theta Theta^T)^-1 Theta
    GDT = G @ (d[:, None] * theta.T)  # n x p: G D Theta^T
    MT = d[:, None] * GDT  # M Theta^T, M = D G D
    f = float(np.sum(d * d * np.diag(G)) - np.sum(MT * Z.T))
    MZ = d[:, None] * (G @ (d[:, None] * Z.T))  # M Z^T
    XMZ = MZ - theta.T @ (Z @ MZ)  # X^-1 M Z^T = (Theta X^-1 M X^-1)^T
    diag_gdx = np.diag(G) * d - np.sum(GDT * Z.T, axis=1)  # diag(G D X^-1)
    grad = -2.0 * XMZ.T + 2.0 * diag_gdx[None, :]
    return f, grad


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gram", required=True, help="G = W^T W as a 2-D float64 .npy file")
    ap.add_argument("--p", type=int, required=True, help="rows added to the identity")
    ap.add_argument("--max-iter", type=int, default=500, help="L-BFGS-B iteration cap")
    ap.add_argument("--seed", type=int, default=0, help="seed of the random start")
    ap.add_argument("--out", help="write Theta (p x n) to this .npy file")
    args = ap.parse_args(argv)
    try:
        G = np.load(args.gram, allow_pickle=False)
        if G.ndim != 2 or G.shape[0] != G.shape[1] or G.shape[0] == 0:
            raise ValueError("gram %s: want a non-empty square matrix, got shape %s" % (args.gram, G.shape))
        G = np.ascontiguousarray(G, dtype=np.float64)
        if not np.all(np.isfinite(G)):
            raise ValueError("gram has NaN or Inf entries")
        if args.p <= 0 or args.max_iter <= 0:
            raise ValueError("--p and --max-iter must be positive")
    except (OSError, ValueError) as e:
        print("pidentity: %s" % e, file=sys.stderr)
        return 2
    n = G.shape[0]
    p = args.p
    rng = np.random.default_rng(args.seed)
    x0 = rng.random(p * n)

    def fun(x):
        f, g = objective_and_gradient(G, x.reshape(p, n))
        return f, g.ravel()

    t0 = time.perf_counter()
    res = scipy.optimize.minimize(fun, x0, jac=True, method="L-BFGS-B",
                                  bounds=[(0.0, None)] * (p * n),
                                  options={"maxiter": args.max_iter, "maxfun": 2 * args.max_iter})
    seconds = time.perf_counter() - t0
    theta = res.x.reshape(p, n)
    if args.out:
        np.save(args.out, np.ascontiguousarray(theta), allow_pickle=False)
    print(json.dumps({"peer": "pidentity", "n": n, "p": p, "objective": float(res.fun),
                      "iterations": int(res.nit), "seconds": seconds,
                      "status": "converged" if res.success else str(res.message)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
