"""Tests of dpsolve_noise against dense C^-1 Z.

Run: cd python && /usr/bin/python3 -m unittest -v test_dpsolve_noise

Every generator is compared with the dense solve of C X = Z (numpy's
triangular solve of the materialized n x n C) at small n. Both are O(n)
sums of products of O(1) numbers for these well-conditioned C, so they agree
to a few hundred ulps: 1e-10 relative to max |X| is the tolerance.
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import dpsolve_noise as dn  # noqa: E402

TOL = 1e-10


def toeplitz_dense(c, n):
    C = np.zeros((n, n))
    for j, cj in enumerate(c[:n]):
        C += cj * np.eye(n, k=-j)
    return C


def blt_dense(theta, omega, n):
    c = np.zeros(n)
    c[0] = 1.0
    for j in range(1, n):
        c[j] = sum(w * th ** (j - 1) for th, w in zip(theta, omega))
    return toeplitz_dense(c, n)


def blt_inverse_numeric(theta, omega, n):
    """The inverse BLT found independently: C^-1's coefficients by the dense
    inverse, then fitted by the d exponentials of the generating function's
    poles (the roots of the denominator of 1/C(x))."""
    # 1/C(x) = prod(1 - th_i x) / Q(x); its poles are the roots of Q, where
    # C(x) = Q(x) / prod(1 - th_i x). Q(x) = prod(1 - th_i x) + sum_i w_i x prod_{j != i}(1 - th_j x).
    P = np.poly1d([1.0])
    for th in theta:
        P = P * np.poly1d([-th, 1.0])
    Q = P
    for i, w in enumerate(omega):
        R = np.poly1d([w, 0.0])
        for j, th in enumerate(theta):
            if j != i:
                R = R * np.poly1d([-th, 1.0])
        Q = Q + R
    ith = 1.0 / Q.roots.real  # decays of the inverse: reciprocals of the poles
    ct = np.linalg.inv(blt_dense(theta, omega, n))[:, 0]
    # ct_j = sum_i iw_i ith_i^(j-1), j >= 1: least squares on the first 2d terms
    d = len(theta)
    M = np.array([[th ** (j - 1) for th in ith] for j in range(1, 2 * d + 1)])
    iom = np.linalg.lstsq(M, ct[1:2 * d + 1], rcond=None)[0]
    return ith, iom


class Dense(unittest.TestCase):
    def run_gen(self, gen, Z):
        return np.array([gen.next(z) for z in Z])

    def check(self, gen, C, n=40, dim=3):
        Z = np.random.default_rng(7).standard_normal((n, dim))
        X = self.run_gen(gen, Z)
        ref = np.linalg.solve(C, Z)
        self.assertLessEqual(np.max(np.abs(X - ref)), TOL * np.max(np.abs(ref)))

    def test_blt_with_and_without_inverse(self):
        theta, omega = np.array([0.98, 0.6]), np.array([0.2, 0.25])
        n = 40
        ith, iom = blt_inverse_numeric(theta, omega, n)
        C = blt_dense(theta, omega, n)
        for inv in (None, (ith, iom)):
            with self.subTest(inverse=inv is not None):
                gen = dn.NoiseGenerator.blt(theta, omega, inv)
                self.check(gen, C, n)
                self.assertEqual(gen.state_vectors, 2)

    def test_blt_with_a_decay_near_one(self):
        # optimized BLTs at large n have a decay within 1e-5 of 1: the
        # buffers then sum thousands of steps without decaying
        theta, omega = np.array([0.99999, 0.9]), np.array([0.05, 0.3])
        n = 300
        C = blt_dense(theta, omega, n)
        gen = dn.NoiseGenerator.blt(theta, omega, blt_inverse_numeric(theta, omega, n))
        self.check(gen, C, n)

    def test_zero_buffers_is_identity(self):
        gen = dn.NoiseGenerator.blt([], [], ([], []))
        self.check(gen, np.eye(10), n=10)
        self.assertEqual(gen.state_vectors, 0)

    def test_toeplitz(self):
        c = np.array([0.8, 0.4, 0.3, 0.1])
        gen = dn.NoiseGenerator.toeplitz(c)
        self.check(gen, toeplitz_dense(c, 40))
        self.assertEqual(gen.state_vectors, 3)

    def test_banded_rows(self):
        # a banded, not Toeplitz, C as dpsolve's bands.npy: bands[t, j] = C[t, t-j]
        n, b = 30, 4
        rng = np.random.default_rng(3)
        C = np.tril(rng.uniform(0.1, 0.5, (n, n))) * (np.abs(np.subtract.outer(range(n), range(n))) < b)
        C[np.diag_indices(n)] = rng.uniform(1.0, 2.0, n)
        bands = np.zeros((n, b))
        for t in range(n):
            for j in range(min(b, t + 1)):
                bands[t, j] = C[t, t - j]
        gen = dn.NoiseGenerator.banded(bands)
        self.check(gen, C, n=n)
        self.assertEqual(gen.state_vectors, b - 1)
        with self.assertRaisesRegex(ValueError, "covers 30 steps"):
            gen.next(np.zeros(3))

    def test_any_shape_and_state_memory(self):
        # a model-shaped z: the state is state_vectors arrays of that shape
        gen = dn.NoiseGenerator.toeplitz([1.0, 0.5, 0.25])
        Z = np.random.default_rng(1).standard_normal((12, 2, 3, 4))
        X = self.run_gen(gen, Z)
        ref = np.linalg.solve(toeplitz_dense([1.0, 0.5, 0.25], 12), Z.reshape(12, -1)).reshape(Z.shape)
        self.assertLessEqual(np.max(np.abs(X - ref)), TOL * np.max(np.abs(ref)))
        self.assertEqual(gen._state.shape, (2, 2, 3, 4))
        with self.assertRaisesRegex(ValueError, "shape"):
            gen.next(np.zeros(5))
        gen.reset()
        np.testing.assert_array_equal(gen.next(Z[0]), X[0])


class Files(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.d = self.dir.name

    def tearDown(self):
        self.dir.cleanup()

    def write(self, name, obj):
        p = os.path.join(self.d, name)
        if name.endswith(".npy"):
            np.save(p, obj)
        else:
            with open(p, "w") as f:
                f.write(obj if isinstance(obj, str) else json.dumps(obj))
        return p

    def test_each_format_from_file_and_cli(self):
        n, dim = 25, 4
        theta, omega = [0.95, 0.5], [0.3, 0.2]
        ith, iom = blt_inverse_numeric(np.array(theta), np.array(omega), n)
        c = [1.0, 0.5, 0.2]
        bands = np.zeros((n, 2))
        bands[:, 0] = 2.0
        bands[1:, 1] = 0.5
        Cb = 2.0 * np.eye(n) + 0.5 * np.eye(n, k=-1)
        cases = [
            ("blt.json", {"buf_decay": theta, "output_scale": omega,
                          "inverse": {"buf_decay": list(ith), "output_scale": list(iom)}, "loss": 1.0},
             blt_dense(theta, omega, n)),
            ("toeplitz.json", {"coefs": c}, toeplitz_dense(c, n)),
            ("bands.npy", bands, Cb),
        ]
        Z = np.random.default_rng(5).standard_normal((n, dim))
        zpath = self.write("z.npy", Z)
        for name, content, C in cases:
            with self.subTest(name=name):
                sub = os.path.join(self.d, name + ".dir")
                os.mkdir(sub)
                p = os.path.join(sub, name)
                if name.endswith(".npy"):
                    np.save(p, content)
                else:
                    with open(p, "w") as f:
                        json.dump(content, f)
                ref = np.linalg.solve(C, Z)
                for src in (p, sub):  # the file, or the plan directory
                    gen = dn.NoiseGenerator.from_file(src)
                    X = np.array([gen.next(z) for z in Z])
                    self.assertLessEqual(np.max(np.abs(X - ref)), TOL * np.max(np.abs(ref)))
                out = os.path.join(self.d, "out.npy")
                r = subprocess.run([sys.executable, os.path.join(HERE, "dpsolve_noise.py"), "--strategy", p,
                                    "--steps", str(n), "--dim", str(dim), "--normals", zpath, "--out", out],
                                   capture_output=True, text=True, timeout=60)
                self.assertEqual(r.returncode, 0, r.stderr)
                X = np.load(out)
                self.assertEqual((X.shape, X.dtype), ((n, dim), np.float64))
                self.assertLessEqual(np.max(np.abs(X - ref)), TOL * np.max(np.abs(ref)))

    def test_bad_files_refused(self):
        good_inv = blt_inverse_numeric(np.array([0.9]), np.array([0.3]), 10)
        cases = [
            ("a.json", "{not json", "not valid JSON"),
            ("b.json", [1, 2], "want a JSON object"),
            ("c.json", {"foo": 1}, "want 'buf_decay'"),
            ("d.json", {"buf_decay": [0.9], "output_scale": [0.1, 0.2]}, "buf_decay has 1 entries"),
            ("e.json", {"buf_decay": [0.9], "output_scale": ["x"]}, "list of numbers"),
            ("f.json", {"buf_decay": [0.9], "output_scale": [0.3],
                        "inverse": {"buf_decay": [0.5], "output_scale": [-0.3]}}, "not the inverse"),
            ("g.json", {"buf_decay": [0.9]}, "missing 'output_scale'"),
            ("h.json", {"coefs": [0.0, 1.0]}, "singular"),
            ("i.json", {"coefs": []}, "non-empty"),
            ("j.json", {"buf_decay": [1.5], "output_scale": [0.3]}, "modulus > 1"),
            ("k.npy", np.array([[1.0, 0.5], [0.0, 1.0]]), "singular"),
            ("l.npy", np.array([[1.0, 0.5], [1.0, 0.2]]), "before step 0"),
            ("m.npy", np.array([1.0, 2.0]), "n x b"),
            ("n.npy", np.array([["a"]]), "numeric"),
            ("o.txt", "1 2 3", "want a .json"),
        ]
        self.assertEqual(len(good_inv[0]), 1)
        for name, content, msg in cases:
            with self.subTest(name=name):
                p = self.write(name, content)
                with self.assertRaisesRegex(dn.StrategyError, msg):
                    dn.load_strategy(p)
        with self.assertRaisesRegex(dn.StrategyError, "no such file"):
            dn.load_strategy(os.path.join(self.d, "missing.json"))
        with self.assertRaisesRegex(dn.StrategyError, "exactly one"):
            dn.load_strategy(self.d)  # holds none of the three names

    def test_cli_bad_input(self):
        p = self.write("toeplitz.json", {"coefs": [1.0, 0.5]})
        z = self.write("z.npy", np.zeros((3, 2)))
        zi = self.write("zi.npy", np.zeros((3, 2), dtype=np.int64))
        out = os.path.join(self.d, "o.npy")
        for args, msg in [
            (["--strategy", p, "--steps", "4", "--dim", "2", "--normals", z], "shape"),
            (["--strategy", p, "--steps", "3", "--dim", "2", "--normals", zi], "float"),
            (["--strategy", p, "--steps", "0", "--dim", "2", "--normals", z], "positive"),
            (["--strategy", self.write("bad.json", "{"), "--steps", "3", "--dim", "2", "--normals", z], "JSON"),
        ]:
            with self.subTest(msg=msg):
                r = subprocess.run([sys.executable, os.path.join(HERE, "dpsolve_noise.py")] + args + ["--out", out],
                                   capture_output=True, text=True, timeout=60)
                self.assertEqual(r.returncode, 2)
                self.assertIn(msg, r.stderr)
                self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()
