"""Tests of hdmm_templates.py's error formulas against dense computations.

Run: /usr/bin/python3 -m unittest discover -s bench/peers -p 'test_hdmm*' -v

On a 3-attribute spec of every block kind the peer uses (identity,
identitytotal, prefix, allrange, ranges, matrix rows, marginals), the
structured errors are compared with tr(W (A^T A)^+ W^T) * sensitivity^2
from explicit W and A (numpy pinv): OPT_M's residual formula for random
weights theta (L1 sensitivity sum(theta); L2: sum(theta^2)), and the
Kronecker p-Identity error for random factors. Tolerance 1e-9 relative:
the dense pseudo-inverses are of matrices with condition number below 1e4.
"""

import json
import os
import sys
import tempfile
import unittest
from functools import reduce

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import hdmm_templates as H  # noqa: E402

SPEC = {
    "domain": [{"name": "a", "size": 3}, {"name": "b", "size": 4}, {"name": "c", "size": 2}],
    "workload": [
        {"name": "p1", "product": {"a": "prefix", "b": "identitytotal"}},
        {"name": "p2", "weight": 2, "product": {"b": "allrange", "c": "identity"}},
        {"name": "p3", "product": {"a": {"ranges": [[0, 1], [1, 2]]}, "c": "identitytotal"}},
        {"name": "m", "marginals": {"k": 1}},
    ],
}


def dense_workload(spec):
    names = [a["name"] for a in spec["domain"]]
    sizes = [a["size"] for a in spec["domain"]]
    rows = []
    for t in spec["workload"]:
        w = float(t.get("weight", 1.0))
        if "product" in t:
            blocks = [H.block_matrix(t["product"].get(n, "total"), d, HERE) for n, d in zip(names, sizes)]
            rows.append(w * reduce(np.kron, blocks))
        else:
            for a in range(len(sizes)):
                blocks = [np.eye(d) if i == a else np.ones((1, d)) for i, d in enumerate(sizes)]
                rows.append(w * reduce(np.kron, blocks))
    return np.vstack(rows), sizes


def dense_error(W, A):
    return float(np.trace(W @ np.linalg.pinv(A.T @ A) @ W.T))


class TestFormulas(unittest.TestCase):
    def setUp(self):
        fd, self.path = tempfile.mkstemp(suffix=".json")
        with os.fdopen(fd, "w") as f:
            json.dump(SPEC, f)
        self.sizes, self.names, self.products = H.load(self.path)
        self.W, _ = dense_workload(SPEC)

    def tearDown(self):
        os.unlink(self.path)

    def test_marginals_error(self):
        k = len(self.sizes)
        rng = np.random.default_rng(7)
        C = H.residual_weights(self.sizes, self.products)
        c = H.cells_outside(self.sizes)
        for _ in range(3):
            theta = rng.uniform(0.1, 1, 1 << k)
            A = np.vstack([theta[S] * reduce(np.kron, [np.eye(d) if S >> a & 1 else np.ones((1, d))
                                                       for a, d in enumerate(self.sizes)]) for S in range(1 << k)])
            base = dense_error(self.W, A)
            for pure, sens2 in ((True, theta.sum() ** 2), (False, float(np.sum(theta ** 2)))):
                got = H.marginals_error(theta, C, c, k, pure)
                self.assertLess(abs(got - base * sens2), 1e-9 * base * sens2)

    def test_kron_error(self):
        rng = np.random.default_rng(3)
        thetas = [rng.uniform(0, 1, (max(1, d // 2), d)) for d in self.sizes]
        factors = []
        for th in thetas:
            p, d = th.shape
            L = np.vstack([np.eye(d), th]) / (1 + th.sum(axis=0))  # unit L1 columns
            factors.append(L)
        A = reduce(np.kron, factors)
        self.assertAlmostEqual(np.abs(A).sum(axis=0).max(), 1.0, places=12)
        base = dense_error(self.W, A)
        got = sum(w2 * np.prod([H.pid_trace(Vs[a], thetas[a]) for a in range(len(self.sizes))])
                  for w2, Vs in self.products)
        self.assertLess(abs(got - base), 1e-9 * base)


if __name__ == "__main__":
    unittest.main()
