"""Tests of hdmm_own.py's re-scoring (the parts that need no HDMM checkout).

Run: /usr/bin/python3 -m unittest discover -s bench/peers -p 'test_hdmm*' -v

On test_hdmm_templates' 3-attribute spec: score_kron (a Kronecker strategy's
error from its factors, with the row-space check) and score_marg (HDMM's
marginal key order: attribute i is bit d-1-i) against
tr(W (AᵀA)⁺ Wᵀ) · Δ² from explicit W and A; a factor that does not support
its workload block scores inf; dpsolve_spec renames a reserved attribute
everywhere it is named. Tolerance 1e-9 relative, as test_hdmm_templates
(condition numbers below 1e4).
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
import hdmm20  # noqa: E402
import hdmm_own as O  # noqa: E402
import hdmm_templates as H  # noqa: E402
from test_hdmm_templates import SPEC, dense_error, dense_workload  # noqa: E402


class Dense:
    def __init__(self, A):
        self.A = A

    def dense_matrix(self):
        return self.A


class Kron:
    def __init__(self, As):
        self.matrices = [Dense(A) for A in As]


class Marg:
    def __init__(self, weights):
        self.weights = weights


class TestRescore(unittest.TestCase):
    def setUp(self):
        fd, self.path = tempfile.mkstemp(suffix=".json")
        with os.fdopen(fd, "w") as f:
            json.dump(SPEC, f)
        self.sizes, self.names, self.products = H.load(self.path)
        self.W, _ = dense_workload(SPEC)

    def tearDown(self):
        os.unlink(self.path)

    def test_score_kron(self):
        rng = np.random.default_rng(5)
        As = [rng.uniform(0, 1, (d + 2, d)) for d in self.sizes]
        A = reduce(np.kron, As)
        base = dense_error(self.W, A)
        for pure in (True, False):
            s = np.abs(A).sum(axis=0).max() if pure else np.sqrt((A * A).sum(axis=0).max())
            got = O.score_kron(Kron(As), self.products, pure)
            self.assertLess(abs(got - base * s * s), 1e-9 * base * s * s)
        # a Total factor cannot answer the identity blocks of attribute c
        As[2] = np.ones((1, self.sizes[2]))
        self.assertEqual(O.score_kron(Kron(As), self.products, True), np.inf)

    def test_score_marg(self):
        k = len(self.sizes)
        rng = np.random.default_rng(11)
        w = rng.uniform(0.1, 1, 1 << k)  # HDMM's order: key bit k-1-i is attribute i
        rows = []
        for key in range(1 << k):
            blocks = [np.eye(d) if key >> (k - 1 - i) & 1 else np.ones((1, d)) for i, d in enumerate(self.sizes)]
            rows.append(w[key] * reduce(np.kron, blocks))
        A = np.vstack(rows)
        base = dense_error(self.W, A)
        for pure, s2 in ((True, w.sum() ** 2), (False, float(np.sum(w * w)))):
            got = O.score_marg(Marg(w), self.sizes, self.products, pure)
            self.assertLess(abs(got - base * s2), 1e-9 * base * s2)

    def test_dpsolve_spec_renames(self):
        spec = {"domain": [{"name": "term", "size": 2}, {"name": "b", "size": 3}],
                "workload": [{"product": {"term": "identity"}}, {"marginals": {"sets": [["term", "b"]]}}]}
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "s.json")
            with open(p, "w") as f:
                json.dump(spec, f)
            os.makedirs(os.path.join(d, "out"))
            with open(hdmm20.dpsolve_spec(p, os.path.join(d, "out"))) as f:
                out = json.load(f)
        self.assertEqual([a["name"] for a in out["domain"]], ["term_", "b"])
        self.assertEqual(out["workload"][0]["product"], {"term_": "identity"})
        self.assertEqual(out["workload"][1]["marginals"]["sets"], [["term_", "b"]])


if __name__ == "__main__":
    unittest.main()
