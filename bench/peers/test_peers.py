"""Tests of the benchmark peers against published optima.

Run: /usr/bin/python3 -m unittest discover -s bench/peers -v

The reference optima of tr(V X^-1), diag(X) = 1, are those of BRIEF.md
(interior-point SDP for Prefix n = 32, 64; L-BFGS and the dual fixed point
agreeing for n = 256; AllRange n = 256 from dpsolve's issue 2). Each is
printed to 10 significant digits, i.e. rounded by at most 5e-10 relative.
A run stopped at certified relative gap <= 1e-8 has F - OPT <= 1e-8 F, so
|F - ref|/ref <= 1e-8 + 5e-10 < 1.1e-8 is the tolerance, and the lower
bound must not exceed ref by more than the rounding.
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest
import types

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import common  # noqa: E402
import fixedpoint  # noqa: E402
import lbfgs  # noqa: E402
import pidentity  # noqa: E402

REFERENCE = [
    ("prefix", 32, 114.5597028),
    ("prefix", 64, 282.2014211),
    ("prefix", 256, 1631.403045),
    ("allrange", 256, 276929.3084),
]
GAP = 1e-8
TOL = 1.1e-8  # certified gap 1e-8 plus the references' rounding (see module doc)
ROUNDING = 5e-10


def quiet_recorder():
    return common.Recorder(types.SimpleNamespace(verbose=False, max_seconds=float("inf")))


def objective(V, X):
    """tr(V X^-1) computed independently of the peers (solve, not dpotri)."""
    return float(np.trace(np.linalg.solve(X, V)))


class PeerTest(unittest.TestCase):
    def check(self, name, run):
        for w, n, ref in REFERENCE:
            with self.subTest(peer=name, workload=w, n=n):
                V = common.BUILTINS[w](n)
                rec = quiet_recorder()
                X, F, lower, src, it, status = run(V, rec)
                self.assertEqual(status, "converged")
                self.assertEqual(src, "self")
                self.assertLessEqual((F - lower) / F, GAP)
                self.assertLessEqual(abs(F - ref) / ref, TOL)
                self.assertLessEqual(lower, ref * (1 + ROUNDING))
                # the returned X is feasible and has the reported objective
                np.testing.assert_allclose(np.diag(X), 1.0, rtol=0, atol=1e-12)
                np.testing.assert_array_equal(X, X.T)
                np.linalg.cholesky(X)
                self.assertAlmostEqual(objective(V, X) / F, 1.0, delta=1e-10)
                # the trace is monotone in time, one entry per iteration
                self.assertEqual(len(rec.trace), it)
                t = [e[0] for e in rec.trace]
                self.assertEqual(t, sorted(t))

    def test_fixed_point_reference_optima(self):
        self.check("fixedpoint", lambda V, rec: fixedpoint.fixed_point(V, rec, gap=GAP))

    def test_lbfgs_reference_optima(self):
        self.check("lbfgs", lambda V, rec: lbfgs.lbfgs(V, rec, gap=GAP))

    def test_certificate_is_a_lower_bound(self):
        # weak duality: g(y) <= F(X) for every y > 0 and feasible X
        rng = np.random.default_rng(1)
        for _ in range(20):
            n = int(rng.integers(2, 12))
            B = rng.standard_normal((n, n + 2))
            V = B @ B.T
            C = rng.standard_normal((n, n + 1))
            X = common.unit_diagonal(C @ C.T)
            y = rng.uniform(0.01, 10.0, n)
            self.assertLessEqual(common.certificate_bound(V, y), objective(V, X) * (1 + 1e-12))

    def test_external_lower_bound_stops_early(self):
        # with a known bound the peer stops once F is within gap of it, even loosely
        V = common.prefix_gram(64)
        for name, run in (("fixedpoint", fixedpoint.fixed_point), ("lbfgs", lbfgs.lbfgs)):
            with self.subTest(peer=name):
                X, F, lower, src, it, status = run(V, quiet_recorder(), gap=1e-3, lower_bound=282.2014211)
                self.assertEqual((status, src, lower), ("converged", "external", 282.2014211))
                self.assertLessEqual((F - lower) / F, 1e-3)
                self.assertGreater((F - lower) / F, 1e-8)  # stopped well before full convergence

    def test_iteration_cap(self):
        V = common.prefix_gram(64)
        for name, run in (("fixedpoint", fixedpoint.fixed_point), ("lbfgs", lbfgs.lbfgs)):
            with self.subTest(peer=name):
                X, F, lower, src, it, status = run(V, quiet_recorder(), gap=1e-14, max_iter=3)
                self.assertEqual((status, it), ("iteration_limit", 3))
                self.assertLessEqual(lower, F)

    def test_indefinite_gram_is_an_error(self):
        V = np.array([[1.0, 2.0], [2.0, 1.0]])
        with self.assertRaises(ValueError):
            fixedpoint.fixed_point(V, quiet_recorder())
        with self.assertRaises(ValueError):
            lbfgs.lbfgs(np.array([[1.0, 0.0], [0.0, 0.0]]), quiet_recorder())


class PIdentityTest(unittest.TestCase):
    """The p-Identity peer's value against an explicit inverse, its gradient
    against central differences, and its command line."""

    def test_value_and_gradient(self):
        rng = np.random.default_rng(4)
        G = common.prefix_gram(24)
        theta = rng.random((3, 24))
        f, g = pidentity.objective_and_gradient(G, theta)
        d = 1.0 + theta.sum(axis=0)
        A = np.vstack([np.eye(24), theta]) / d[None, :]
        direct = float(np.trace(G @ np.linalg.inv(A.T @ A)))
        self.assertAlmostEqual(f / direct, 1.0, delta=1e-12)
        # central differences: error O(h^2) + O(eps/h), about 1e-9 relative at h = 1e-5
        h = 1e-5
        for (i, j) in [(0, 0), (1, 7), (2, 23)]:
            tp, tm = theta.copy(), theta.copy()
            tp[i, j] += h
            tm[i, j] -= h
            fd = (pidentity.objective_and_gradient(G, tp)[0] - pidentity.objective_and_gradient(G, tm)[0]) / (2 * h)
            self.assertAlmostEqual(fd, g[i, j], delta=1e-7 * np.abs(g).max())

    def test_command_line(self):
        with tempfile.TemporaryDirectory() as d:
            gram = os.path.join(d, "g.npy")
            out = os.path.join(d, "theta.npy")
            np.save(gram, common.prefix_gram(32))
            p = subprocess.run([sys.executable, os.path.join(HERE, "pidentity.py"), "--gram", gram,
                                "--p", "2", "--out", out], capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr)
            r = json.loads(p.stdout)
            self.assertEqual((r["peer"], r["n"], r["p"]), ("pidentity", 32, 2))
            theta = np.load(out)
            self.assertEqual(theta.shape, (2, 32))
            self.assertTrue(np.all(theta >= 0))
            f, _ = pidentity.objective_and_gradient(common.prefix_gram(32), theta)
            self.assertAlmostEqual(f / r["objective"], 1.0, delta=1e-12)
            # better than Identity (tr G = 528 for Prefix 32)
            self.assertLess(r["objective"], 528)
            p = subprocess.run([sys.executable, os.path.join(HERE, "pidentity.py"), "--gram", gram, "--p", "0"],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 2)
            self.assertIn("--p", p.stderr)


class CommandLineTest(unittest.TestCase):
    def run_peer(self, script, *args):
        return subprocess.run([sys.executable, os.path.join(HERE, script)] + list(args),
                              capture_output=True, text=True, timeout=120)

    def test_json_report_and_npy(self):
        with tempfile.TemporaryDirectory() as d:
            gram = os.path.join(d, "v.npy")
            np.save(gram, common.allrange_gram(48))
            for script in ("fixedpoint.py", "lbfgs.py"):
                with self.subTest(script=script):
                    out = os.path.join(d, script + ".x.npy")
                    p = self.run_peer(script, "--gram", gram, "--out", out)
                    self.assertEqual(p.returncode, 0, p.stderr)
                    lines = p.stdout.splitlines()
                    self.assertEqual(len(lines), 1)
                    r = json.loads(lines[0])
                    self.assertEqual(r["peer"], script[:-3])
                    self.assertEqual(r["n"], 48)
                    self.assertEqual(r["status"], "converged")
                    self.assertLessEqual(r["gap"], GAP)
                    self.assertEqual(len(r["trace"]), r["iterations"])
                    self.assertAlmostEqual(r["trace"][-1][1], r["objective"], delta=1e-6 * r["objective"])
                    X = np.load(out)
                    self.assertEqual((X.shape, X.dtype), ((48, 48), np.float64))
                    self.assertAlmostEqual(objective(common.allrange_gram(48), X) / r["objective"], 1.0, delta=1e-10)

    def test_bad_input_exit_status(self):
        with tempfile.TemporaryDirectory() as d:
            gram = os.path.join(d, "bad.npy")
            np.save(gram, np.array([[1.0, 2.0], [0.0, 1.0]]))
            p = self.run_peer("fixedpoint.py", "--gram", gram)
            self.assertEqual(p.returncode, 2)
            self.assertIn("not symmetric", p.stderr)
            p = self.run_peer("lbfgs.py", "--workload", "nosuch", "--n", "4")
            self.assertEqual(p.returncode, 2)
            self.assertIn("unknown workload", p.stderr)
            p = self.run_peer("lbfgs.py", "--workload", "prefix", "--n", "0")
            self.assertEqual(p.returncode, 2)


if __name__ == "__main__":
    unittest.main()
