#!/usr/bin/python3
"""Peer: HDMM's templates (McKenna, Miklau, Hay, Machanavajjhala, VLDB 2018)
reimplemented from the paper's definitions for dpsolve's workload specs, and
an independent scorer of dpsolve's plans. No HDMM code (AGPL) is used.

Templates (errors are expected total squared errors per unit noise variance
at sensitivity 1, the unit of `dpsolve plan`):

- OPT_M (marginals): A = stack of θ_S·Q_S over every attribute subset S (Q_S
  the S-marginal). In the basis of per-attribute total/residual directions
  every Q_SᵀQ_S is diagonal; a residual T gets eigenvalue
  λ_T = Σ_{S⊇T} θ_S² Π_{a∉S} d_a and the workload puts weight
  C_T = Σ_p w_p² Π_{a∈T} (tr V_a − 1ᵀV_a1/d_a) Π_{a∉T} 1ᵀV_a1/d_a on it, so
  the error is Δ(θ)² Σ_T C_T/λ_T with Δ = Σθ (pure ε) or Δ² = Σθ² (Gaussian).
  L-BFGS-B over θ ≥ 0 from θ ~ U[0,1) (HDMM's start), one run per seed.
  λ and the gradient use superset/subset-sum transforms (O(k·2^k)).
- OPT_kron (p-Identity factors): A = ⊗ A_i, A_i = [I; Θ_i] D_i⁻¹ (columns of
  unit L1 norm, so Δ₁ = 1), error Σ_p w_p² Π_i tr(V_pi (A_iᵀA_i)⁻¹); block
  coordinate descent, each factor by L-BFGS-B on Θ_i ≥ 0 from U[0,1)
  (pidentity.py's objective), p_i = max(1, d_i // 16). Pure ε only.

Usage: hdmm_templates.py SPEC --seeds 0,1,2,3 [--kron] [--privacy pure|gaussian]
       hdmm_templates.py SPEC --score-marginals PLAN.json   (a `dpsolve plan --json` output)
Prints one JSON object.
"""
import argparse
import csv as csvmod
import itertools
import json
import os
import resource
import sys
import time

import numpy as np
import scipy.optimize

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pidentity import objective_and_gradient  # noqa: E402


def block_matrix(b, d, base):
    if b == "identity":
        return np.eye(d)
    if b == "total":
        return np.ones((1, d))
    if b == "identitytotal":
        return np.vstack([np.eye(d), np.ones((1, d))])
    if b == "prefix":
        return np.tril(np.ones((d, d)))
    if b == "allrange":
        rows = []
        for i in range(d):
            for j in range(i, d):
                r = np.zeros(d)
                r[i:j + 1] = 1
                rows.append(r)
        return np.array(rows)
    if isinstance(b, dict) and "ranges" in b:
        M = np.zeros((len(b["ranges"]), d))
        for q, (lo, hi) in enumerate(b["ranges"]):
            M[q, lo:hi + 1] = 1
        return M
    if isinstance(b, dict) and "matrix" in b:
        path = os.path.join(base, b["matrix"])
        with open(path) as f:
            rows = [[float(v) for v in r] for r in csvmod.reader(l for l in f if not l.startswith("#") and l.strip())]
        M = np.array(rows)
        assert M.shape[1] == d, (path, M.shape, d)
        return M
    raise ValueError("block %r not supported by the peer" % (b,))


def load(spec_path):
    """(sizes, names, products): products = [(w², [V_a per attribute])]."""
    spec = json.load(open(spec_path))
    base = os.path.dirname(os.path.abspath(spec_path))
    names = [a["name"] for a in spec["domain"]]
    sizes = [int(a["size"]) for a in spec["domain"]]
    k = len(sizes)
    grams = {}

    def gram(b, a):
        key = (json.dumps(b, sort_keys=True), a)
        if key not in grams:
            M = block_matrix(b, sizes[a], base)
            grams[key] = M.T @ M
        return grams[key]

    products = []
    for t in spec["workload"]:
        w2 = float(t.get("weight", 1.0)) ** 2
        if "product" in t:
            products.append((w2, [gram(t["product"].get(names[a], "total"), a) for a in range(k)]))
        else:
            m = t["marginals"]
            if "sets" in m:
                sets = [tuple(names.index(x) for x in s) for s in m["sets"]]
            elif "k" in m:
                sets = list(itertools.combinations(range(k), int(m["k"])))
            else:
                sets = [s for r in range(int(m["upto"]) + 1) for s in itertools.combinations(range(k), r)]
            for s in sets:
                products.append((w2, [gram("identity" if a in s else "total", a) for a in range(k)]))
    return sizes, names, products


# Subset index S: bit a (1 << a) set when attribute a is in S.
def superset_sum(x, k):
    y = x.reshape((2,) * k).copy()  # axis j is bit k-1-j
    for ax in range(k):
        sl1 = [slice(None)] * k
        sl0 = [slice(None)] * k
        sl1[ax], sl0[ax] = 1, 0
        y[tuple(sl0)] += y[tuple(sl1)]
    return y.reshape(-1)


def subset_sum(x, k):
    y = x.reshape((2,) * k).copy()
    for ax in range(k):
        sl1 = [slice(None)] * k
        sl0 = [slice(None)] * k
        sl1[ax], sl0[ax] = 1, 0
        y[tuple(sl1)] += y[tuple(sl0)]
    return y.reshape(-1)


def residual_weights(sizes, products):
    """C_T for every residual subset T (see the module documentation)."""
    k = len(sizes)
    C = np.zeros(1 << k)
    for w2, Vs in products:
        v = np.array([w2])
        # kron over attributes from the highest bit (axis 0) to bit 0
        for a in reversed(range(k)):
            V = Vs[a]
            t = V.sum() / sizes[a]
            v = np.kron(v, np.array([t, np.trace(V) - t]))
        C += v
    C[np.abs(C) < 1e-12 * np.abs(C).max()] = 0
    return C


def cells_outside(sizes):
    k = len(sizes)
    c = np.ones(1 << k)
    for S in range(1 << k):
        for a in range(k):
            if not S >> a & 1:
                c[S] *= sizes[a]
    return c


def marginals_error(theta, C, c, k, pure):
    lam = superset_sum(theta * theta * c, k)
    need = C > 0
    if np.any(lam[need] <= 0):
        return np.inf
    e = float(np.sum(C[need] / lam[need]))
    return (theta.sum() ** 2 if pure else float(np.sum(theta * theta))) * e


def opt_m(sizes, products, seeds, pure):
    k = len(sizes)
    C = residual_weights(sizes, products)
    c = cells_outside(sizes)
    need = C > 0

    def loss(th):
        lam = superset_sum(th * th * c, k)
        if np.any(lam[need] <= 0):
            return 1e300, np.zeros_like(th)
        e = float(np.sum(C[need] / lam[need]))
        h = np.where(need, C / np.where(lam > 0, lam, 1) ** 2, 0)
        de = -2 * th * c * subset_sum(h, k)
        if pure:
            s = th.sum()
            return s * s * e, 2 * s * e + s * s * de
        s = float(np.sum(th * th))
        return s * e, 2 * th * e + s * de

    best, runs = np.inf, []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        x0 = rng.uniform(0, 1, 1 << k)
        r = scipy.optimize.minimize(loss, x0, jac=True, method="L-BFGS-B",
                                    bounds=[(0, None)] * (1 << k), options={"maxiter": 5000})
        v = marginals_error(r.x, C, c, k, pure)
        runs.append(v)
        best = min(best, v)
    return best, runs


def pid_trace(V, theta):
    return objective_and_gradient(V, theta)[0]


def opt_kron(sizes, products, seeds, sweeps=10):
    k = len(sizes)
    best, runs = np.inf, []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        thetas = [rng.uniform(0, 1, (max(1, d // 16), d)) for d in sizes]
        tr = np.array([[pid_trace(Vs[a], thetas[a]) for a in range(k)] for _, Vs in products])
        w2 = np.array([p[0] for p in products])
        prev = np.inf
        for _ in range(sweeps):
            for a in range(k):
                others = w2 * np.prod(np.delete(tr, a, axis=1), axis=1)
                G = sum(o * Vs[a] for o, (_, Vs) in zip(others, products))
                p, d = thetas[a].shape

                def fun(x):
                    f, g = objective_and_gradient(G, x.reshape(p, d))
                    return f, g.ravel()
                r = scipy.optimize.minimize(fun, thetas[a].ravel(), jac=True, method="L-BFGS-B",
                                            bounds=[(0, None)] * (p * d), options={"maxiter": 500})
                thetas[a] = r.x.reshape(p, d)
                tr[:, a] = [pid_trace(Vs[a], thetas[a]) for _, Vs in products]
            cur = float(np.sum(w2 * np.prod(tr, axis=1)))
            if prev - cur <= 1e-7 * cur:
                break
            prev = cur
        runs.append(cur)
        best = min(best, cur)
    return best, runs


def score_marginals(sizes, names, products, plan, pure):
    """The error of a plan's marginals_family tables, from this file's formula."""
    k = len(sizes)
    theta = np.zeros(1 << k)
    for t in plan["marginals_family"]["tables"]:
        S = 0
        for n in t["attributes"]:
            S |= 1 << names.index(n)
        theta[S] += t["weight"]
    return marginals_error(theta, residual_weights(sizes, products), cells_outside(sizes), k, pure)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("spec")
    ap.add_argument("--seeds", default="0,1,2,3")
    ap.add_argument("--privacy", default="pure", choices=["pure", "gaussian"])
    ap.add_argument("--kron", action="store_true", help="also run OPT_kron (pure only)")
    ap.add_argument("--score-marginals", help="re-score a dpsolve plan --json output's marginals tables")
    args = ap.parse_args()
    pure = args.privacy == "pure"
    sizes, names, products = load(args.spec)
    if args.score_marginals:
        plan = json.load(open(args.score_marginals))
        print(json.dumps({"rescored": score_marginals(sizes, names, products, plan, pure),
                          "objective": plan["objective"]}))
        return 0
    seeds = [int(s) for s in args.seeds.split(",")]
    out = {"spec": args.spec, "privacy": args.privacy}
    t0 = resource.getrusage(resource.RUSAGE_SELF)
    out["opt_m"], out["opt_m_runs"] = opt_m(sizes, products, seeds, pure)
    t1 = resource.getrusage(resource.RUSAGE_SELF)
    out["opt_m_cpu_s"] = (t1.ru_utime + t1.ru_stime) - (t0.ru_utime + t0.ru_stime)
    if args.kron and pure:
        out["opt_kron"], out["opt_kron_runs"] = opt_kron(sizes, products, seeds)
        t2 = resource.getrusage(resource.RUSAGE_SELF)
        out["opt_kron_cpu_s"] = (t2.ru_utime + t2.ru_stime) - (t1.ru_utime + t1.ru_stime)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
