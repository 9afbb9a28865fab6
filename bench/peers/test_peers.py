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
import blt_ref  # noqa: E402
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


def dense_toeplitz(c, n):
    """The n x n lower-triangular Toeplitz matrix with coefficients c."""
    C = np.zeros((n, n))
    for j in range(min(len(c), n)):
        C += c[j] * np.eye(n, k=-j)
    return C


def dense_workload(n, beta):
    t = np.arange(n)
    lag = np.subtract.outer(t, t)
    if beta is None:
        return np.tril(np.ones((n, n)))
    return np.where(lag >= 0, (1 - beta ** (np.maximum(lag, 0) + 1.0)) / (1 - beta), 0.0)


def brute_sensitivity_squared(C, B, k):
    """max over every participation pattern (steps >= B apart, at most k of
    them) of |sum of C's columns|^2, by enumeration."""
    n = C.shape[0]
    best = 0.0

    def rec(start, cols, depth):
        nonlocal best
        if depth:
            best = max(best, float(cols @ cols))
        if depth == k:
            return
        for i in range(start, n):
            rec(i + B, cols + C[:, i], depth + 1)

    rec(0, np.zeros(n), 0)
    return best


class BLTReferenceTest(unittest.TestCase):
    """The structured peer's O(n) loss against dense numpy (materialized C,
    C^-1, A C^-1, every participation pattern) at small n; its gradient
    against central differences; its command line."""

    # Dense and O(n) computations of the same sums of O(n^2) O(1) terms agree
    # to ~1e-13 relative; 1e-10 leaves room and still fails on any wrong term.
    REL = 1e-10

    def test_loss_against_dense(self):
        rng = np.random.default_rng(11)
        for n, B, k, beta, err in [(12, 3, 3, None, "mean"), (13, 4, 2, 0.9, "mean"), (12, 3, 4, None, "max"),
                                   (10, 1, 1, None, "mean"), (11, 2, 0, 0.5, "max")]:
            with self.subTest(n=n, B=B, k=k, beta=beta, error=err):
                d = 3
                theta = np.sort(rng.uniform(0.2, 0.95, d))[::-1]
                omega = rng.uniform(0.05, 0.3, d)  # sum < 1: c positive, decreasing
                prob = blt_ref.Problem(n, B, k, beta, err)
                c = blt_ref.blt_coefs(theta, omega, n)
                self.assertTrue(np.all(np.diff(c) <= 0) and np.all(c > 0))
                C = dense_toeplitz(c, n)
                Cinv = np.linalg.inv(C)
                ith, iom = blt_ref.blt_inverse(theta, omega)
                ct = blt_ref.blt_coefs(ith, iom, n)
                # the inverse BLT is the dense inverse
                np.testing.assert_allclose(dense_toeplitz(ct, n), Cinv, rtol=0, atol=1e-12 * np.abs(Cinv).max())
                # ... and the pair parameterization gives the same output scales
                np.testing.assert_allclose(blt_ref.omega_from_pair(theta, ith), omega, rtol=1e-10)
                np.testing.assert_allclose(blt_ref.omega_from_pair(ith, theta), iom, rtol=1e-10)
                E, e = prob.error_from_noise(ct)
                per_step = np.sum((dense_workload(n, beta) @ Cinv) ** 2, axis=1)
                np.testing.assert_allclose(e, per_step, rtol=self.REL)
                self.assertAlmostEqual(E / (per_step.mean() if err == "mean" else per_step.max()), 1, delta=self.REL)
                S = prob.sens_squared(c)
                kk = prob.k
                self.assertEqual(kk, min(k, -(-n // B)) if k else -(-n // B))
                self.assertAlmostEqual(S / brute_sensitivity_squared(C, B, kk), 1, delta=self.REL)
                # the banded-Toeplitz error (from C's coefficients) is the same function
                _, eb = prob.error_from_strategy(c)
                np.testing.assert_allclose(eb, per_step, rtol=self.REL)

    def test_sensitivity_is_an_upper_bound_for_any_signs(self):
        rng = np.random.default_rng(12)
        for _ in range(10):
            n, B, k = 11, int(rng.integers(1, 4)), int(rng.integers(1, 4))
            c = rng.standard_normal(n)
            c[0] = 1.0
            prob = blt_ref.Problem(n, B, k)
            brute = brute_sensitivity_squared(dense_toeplitz(np.abs(c), n), B, prob.k)
            self.assertGreaterEqual(prob.sens_squared(c), brute * (1 - self.REL))

    def test_gradients_against_central_differences(self):
        # h = 1e-6 on O(1) parameters: truncation O(h^2) ~ 1e-12 and rounding
        # ~ 1e-16 |f| / h ~ 1e-10, both far below 1e-6 of the gradient's scale
        h = 1e-6
        for beta, err in [(None, "mean"), (0.9, "mean"), (None, "max")]:
            with self.subTest(beta=beta, error=err):
                prob = blt_ref.Problem(50, 7, 4, beta, err)
                obj = blt_ref.BLTObjective(prob)
                th, om = blt_ref.rational_init(3)
                th = th * 0.999  # the start has a decay at 1 - 1e-6: keep x +- h inside the barriers
                thh, _ = blt_ref.blt_inverse(th, om)
                x = np.concatenate([th, thh])
                _, g = obj(x)
                fd = np.array([(obj(x + h * e)[0] - obj(x - h * e)[0]) / (2 * h) for e in np.eye(len(x))])
                self.assertLessEqual(np.max(np.abs(fd - g)), 1e-6 * np.max(np.abs(g)))
                c = blt_ref.banded_init(5)
                _, _, gc = prob.error_from_strategy(c, grad=True)
                fd = np.array([(prob.error_from_strategy(c + h * q)[0] - prob.error_from_strategy(c - h * q)[0])
                               / (2 * h) for q in np.eye(5)])
                self.assertLessEqual(np.max(np.abs(fd - gc)), 1e-6 * np.max(np.abs(gc)))
                # the sensitivity's gradient where the coefficients are strictly decreasing
                cc = blt_ref.blt_coefs(th, om, 50)
                _, gs = prob.sens_squared(cc, grad=True)
                for j in (0, 1, 7, 20):
                    q = np.zeros(50)
                    q[j] = h
                    fdj = (prob.sens_squared(cc + q) - prob.sens_squared(cc - q)) / (2 * h)
                    self.assertAlmostEqual(fdj, gs[j], delta=1e-6 * np.max(np.abs(gs)))

    def test_command_line(self):
        def run(*args):
            return subprocess.run([sys.executable, os.path.join(HERE, "blt_ref.py")] + list(args),
                                  capture_output=True, text=True, timeout=300)

        n = 64
        p = run("--n", "64", "--min-sep", "8", "--epochs", "4", "--max-buffers", "2", "--steps", "40")
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stdout.splitlines()
        self.assertEqual(len(lines), 1)
        r = json.loads(lines[0])
        self.assertEqual((r["peer"], r["family"], r["n"], r["participations"]), ("blt_ref", "blt", 64, 4))
        self.assertLessEqual(r["buffers"], 2)
        self.assertEqual(len(r["buf_decay"]), r["buffers"])
        self.assertEqual(len(r["inverse"]["output_scale"]), r["buffers"])
        # the reported loss is the dense loss of the reported BLT, whose
        # reported inverse is C's dense inverse
        theta, omega = np.array(r["buf_decay"]), np.array(r["output_scale"])
        C = dense_toeplitz(blt_ref.blt_coefs(theta, omega, n), n)
        Cinv = np.linalg.inv(C)
        inv = dense_toeplitz(blt_ref.blt_coefs(np.array(r["inverse"]["buf_decay"]),
                                               np.array(r["inverse"]["output_scale"]), n), n)
        np.testing.assert_allclose(inv, Cinv, rtol=0, atol=1e-10)
        err = np.mean(np.sum((dense_workload(n, None) @ Cinv) ** 2, axis=1))
        self.assertAlmostEqual(r["loss"] / (err * brute_sensitivity_squared(C, 8, 4)), 1, delta=1e-9)
        self.assertLess(r["loss"], r["history"][0]["loss"])  # better than C = I
        self.assertIn(r["stop"], ("gain<1%", "max-buffers"))
        p = run("--n", "64", "--min-sep", "8", "--epochs", "4", "--family", "toeplitz", "--bands", "4",
                "--workload", "momentum:0.9")
        self.assertEqual(p.returncode, 0, p.stderr)
        r = json.loads(p.stdout)
        c = np.array(r["coefs"])
        self.assertEqual(len(c), 4)
        self.assertAlmostEqual(float(c @ c), 1.0, delta=1e-12)
        C = dense_toeplitz(c, n)
        err = np.mean(np.sum((dense_workload(n, 0.9) @ np.linalg.inv(C)) ** 2, axis=1))
        self.assertAlmostEqual(r["loss"] / (err * brute_sensitivity_squared(C, 8, 4)), 1, delta=1e-9)
        for args, msg in [(["--n", "1"], "--n"), (["--n", "8", "--workload", "nosuch"], "unknown workload"),
                          (["--n", "8", "--min-sep", "9"], "--min-sep"),
                          (["--n", "8", "--family", "toeplitz"], "--bands"),
                          (["--n", "8", "--workload", "momentum:1.5"], "beta")]:
            with self.subTest(args=args):
                p = run(*args)
                self.assertEqual(p.returncode, 2)
                self.assertIn(msg, p.stderr)


if __name__ == "__main__":
    unittest.main()
