"""Correlated noise for a DP training loop from a dpsolve DP-MF plan.

dpsolve plans a strategy C (lower triangular, n x n) for n training steps;
the training adds at step t the noise (C^-1 Z)_t, Z having independent
standard-normal rows. This module streams those rows one step at a time in
O(state) memory, from the files `dpsolve mf --out DIR` writes:

* ``blt.json`` -- a buffered linear Toeplitz (BLT) strategy, jax_privacy's
  ``BufferedToeplitz`` naming::

      {"buf_decay": [th_1..th_d], "output_scale": [w_1..w_d],
       "inverse": {"buf_decay": [...], "output_scale": [...]}, ...}

  C is lower-triangular Toeplitz with c_0 = 1, c_j = sum_i w_i th_i^(j-1)
  (j >= 1); "inverse" is the BLT of C^-1 in the same form. Step t's noise is
  z_t + sum_i w^_i buf_i, then buf_i <- th^_i buf_i + z_t: d model-sized
  buffers. Without "inverse", C's own BLT is used (x_t = z_t - sum_i w_i
  buf_i, buf_i <- th_i buf_i + x_t), also d buffers.
* ``toeplitz.json`` -- ``{"coefs": [c_0, c_1, ..., c_{b-1}]}``, a b-banded
  lower-triangular Toeplitz C: x_t = (z_t - sum_{j=1}^{b-1} c_j x_{t-j}) / c_0,
  b - 1 past noise vectors.
* ``bands.npy`` -- a banded (not necessarily Toeplitz) C as dpsolve's dense
  banded solver writes it: an n x b array with ``bands[t, j] = C[t, t-j]``
  (zero for j > t): x_t = (z_t - sum_{j=1}^{b-1} bands[t, j] x_{t-j}) /
  bands[t, 0], b - 1 past noise vectors, at most n steps.

Where sigma and the clipping norm enter (a PyTorch loop; JAX is the same
with ``jnp``/``np.asarray``). ``sigma`` is dpsolve's noise multiplier (the
report's ``sigma``: the noise standard deviation before correlation is
sigma * clip, computed from the schema's sensitivity)::

    import numpy as np, torch
    from dpsolve_noise import NoiseGenerator

    gen = NoiseGenerator.from_file("plan/blt.json")
    rng = np.random.default_rng()          # see "Randomness" below
    for t, batch in enumerate(loader):     # the n steps the plan is for
        grads = per_example_grads(model, batch)        # [B, P], flattened
        norms = grads.norm(dim=1, keepdim=True)
        clipped = grads * torch.clamp(clip / (norms + 1e-12), max=1.0)
        z = rng.standard_normal(clipped.shape[1])      # one N(0, 1) per coordinate
        noise = torch.from_numpy(gen.next(z)).to(clipped)
        g = clipped.sum(0) + sigma * clip * noise      # the private sum
        apply_update(model, g / batch_size)

The same in JAX (params a pytree, flattened once for the noise)::

    import jax, jax.numpy as jnp
    from jax.flatten_util import ravel_pytree

    for t, batch in enumerate(batches):
        per_ex = jax.vmap(jax.grad(loss_fn), in_axes=(None, 0))(params, batch)
        G = jax.vmap(lambda g: ravel_pytree(g)[0])(per_ex)        # [B, P]
        scale = jnp.minimum(1.0, clip / (jnp.linalg.norm(G, axis=1, keepdims=True) + 1e-12))
        flat, unravel = ravel_pytree(params)
        z = rng.standard_normal(flat.shape[0])
        g = (G * scale).sum(0) + sigma * clip * jnp.asarray(gen.next(z))
        params = unravel(flat - lr * g / batch_size)

The model's iterates then carry the noise A C^-1 Z of the plan (A the
workload: prefix sums for SGD). The plan's privacy guarantee (the Gaussian
mechanism at sigma for the schema's sensitivity) holds only if every
record's participations follow the planned schema (e.g. at most k uses at
least b steps apart), each per-example gradient is clipped to ``clip``, and
the steps use one generator in order, one z per step.

Randomness: this module takes z from the caller. A real training run should
draw z from a cryptographically secure source (numpy's default generator is
not one; dpsolve's Go generator uses a secure discrete Gaussian). Seeded
generators are for simulation only.

Command line (used by dpsolve's Go cross-check test)::

    python3 dpsolve_noise.py --strategy FILE --steps T --dim D \\
        --normals IN.npy --out OUT.npy

IN.npy is a T x D float array of the z's, OUT.npy receives the T x D noise
C^-1 Z (without sigma), written atomically. FILE may also be a directory
holding one of blt.json, toeplitz.json, bands.npy. Exit status 2 on bad
input, with the reason on stderr.

numpy only; Python 3.9+.
"""

import argparse
import json
import math
import os
import sys
import tempfile

import numpy as np

__all__ = ["NoiseGenerator", "StrategyError", "load_strategy"]

# A BLT's "inverse" must invert C: the product of the two coefficient series
# is checked to be the identity on its first CHECK_TERMS terms, to CHECK_TOL
# (each product coefficient is a sum of CHECK_TERMS terms of size <= max|c|
# * max|c~|, so rounding alone stays below ~1e-13 for sane plans; a wrong
# inverse is off by O(1)).
CHECK_TERMS = 256
CHECK_TOL = 1e-6


class StrategyError(ValueError):
    """A strategy file that cannot be used (malformed, inconsistent)."""


def _vector(obj, key, where):
    if key not in obj:
        raise StrategyError("%s: missing %r" % (where, key))
    v = obj[key]
    if not isinstance(v, list) or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
        raise StrategyError("%s: %r must be a list of numbers" % (where, key))
    a = np.array(v, dtype=np.float64)
    if not np.all(np.isfinite(a)):
        raise StrategyError("%s: %r has a NaN or infinite entry" % (where, key))
    return a


def _blt_coefs(theta, omega, m):
    c = np.zeros(m)
    c[0] = 1.0
    if len(theta) and m > 1:
        c[1:] = np.power(theta[None, :], np.arange(m - 1)[:, None]) @ omega
    return c


def _pair(obj, where):
    th = _vector(obj, "buf_decay", where)
    om = _vector(obj, "output_scale", where)
    if th.shape != om.shape:
        raise StrategyError("%s: buf_decay has %d entries, output_scale %d" % (where, len(th), len(om)))
    return th, om


class NoiseGenerator:
    """Streams (C^-1 Z)_t, one step per call to :meth:`next`.

    Build one with :meth:`from_file` (or the ``blt``, ``toeplitz``,
    ``banded`` constructors). The state is ``state_vectors`` arrays of the
    shape of z: d buffers (BLT) or b - 1 past outputs (banded).
    """

    def __init__(self, kind, state_vectors, step_fn, max_steps=None):
        self.kind = kind
        self.state_vectors = state_vectors
        self.max_steps = max_steps
        self.t = 0
        self._step = step_fn
        self._state = None
        self._shape = None

    # constructors ----------------------------------------------------------
    @classmethod
    def blt(cls, buf_decay, output_scale, inverse=None):
        """From C's BLT (buf_decay, output_scale) and, if given, C^-1's BLT
        ``inverse = (buf_decay, output_scale)``, which is then used (and
        checked against C)."""
        th, om = np.asarray(buf_decay, float), np.asarray(output_scale, float)
        if th.shape != om.shape or th.ndim != 1:
            raise StrategyError("buf_decay and output_scale must be vectors of one length")
        if not (np.all(np.isfinite(th)) and np.all(np.isfinite(om))):
            raise StrategyError("BLT parameters must be finite")
        if inverse is not None:
            ith, iom = (np.asarray(x, float) for x in inverse)
            if ith.shape != iom.shape or ith.ndim != 1:
                raise StrategyError("inverse: buf_decay and output_scale must be vectors of one length")
            if not (np.all(np.isfinite(ith)) and np.all(np.isfinite(iom))):
                raise StrategyError("inverse BLT parameters must be finite")
            m = CHECK_TERMS
            prod = np.convolve(_blt_coefs(th, om, m), _blt_coefs(ith, iom, m))[:m]
            prod[0] -= 1.0
            err = float(np.max(np.abs(prod)))
            if not err <= CHECK_TOL:
                raise StrategyError("inverse is not the inverse of the BLT: C * C^-1 differs from I by %.3g "
                                    "in its first %d Toeplitz coefficients" % (err, m))
            if np.any(np.abs(ith) > 1):
                raise StrategyError("inverse BLT has a buffer decay of modulus > 1: the noise would grow "
                                    "without bound (%s)" % ith)
            d = len(ith)

            def step(z, bufs):
                x = z + np.tensordot(iom, bufs, axes=1) if d else z.copy()
                if d:
                    bufs *= ith.reshape((d,) + (1,) * z.ndim)
                    bufs += z
                return x

            return cls("blt-inverse", d, step)
        if np.any(np.abs(th) > 1):
            raise StrategyError("BLT has a buffer decay of modulus > 1 (%s)" % th)
        d = len(th)

        def step(z, bufs):
            x = z - np.tensordot(om, bufs, axes=1) if d else z.copy()
            if d:
                bufs *= th.reshape((d,) + (1,) * z.ndim)
                bufs += x
            return x

        return cls("blt", d, step)

    @classmethod
    def toeplitz(cls, coefs):
        """A banded lower-triangular Toeplitz C with coefficients c_0..c_{b-1}."""
        c = np.asarray(coefs, float)
        if c.ndim != 1 or len(c) == 0:
            raise StrategyError("coefs must be a non-empty list")
        if not np.all(np.isfinite(c)):
            raise StrategyError("coefs must be finite")
        if c[0] == 0:
            raise StrategyError("coefs[0] = 0: C is singular")
        b = len(c)

        def step(z, past):
            x = z - np.tensordot(c[1:], past, axes=1) if b > 1 else z.copy()
            x = x / c[0]
            if b > 1:
                past[1:] = past[:-1].copy()
                past[0] = x
            return x

        return cls("toeplitz", b - 1, step)

    @classmethod
    def banded(cls, bands):
        """A banded C given by rows: ``bands[t, j] = C[t, t-j]`` (n x b)."""
        B = np.asarray(bands, float)
        if B.ndim != 2 or B.shape[0] == 0 or B.shape[1] == 0:
            raise StrategyError("bands must be a non-empty n x b matrix, got shape %s" % (B.shape,))
        if not np.all(np.isfinite(B)):
            raise StrategyError("bands has a NaN or infinite entry")
        n, b = B.shape
        if np.any(B[:, 0] == 0):
            raise StrategyError("bands[t, 0] = 0 at t = %d: C is singular" % int(np.argmax(B[:, 0] == 0)))
        for t in range(min(n, b - 1)):
            if np.any(B[t, t + 1:] != 0):
                raise StrategyError("bands[%d, j] != 0 for some j > %d: entries before step 0 must be 0" % (t, t))
        gen = None

        def step(z, past):
            t = gen.t
            row = B[t]
            x = z - np.tensordot(row[1:], past, axes=1) if b > 1 else z.copy()
            x = x / row[0]
            if b > 1:
                past[1:] = past[:-1].copy()
                past[0] = x
            return x

        gen = cls("banded", b - 1, step, max_steps=n)
        return gen

    @classmethod
    def from_file(cls, path):
        """Reads blt.json, toeplitz.json or bands.npy (or a directory holding
        exactly one of them)."""
        return load_strategy(path)

    # streaming -------------------------------------------------------------
    def next(self, z):
        """Returns step t's noise (C^-1 Z)_t for the t-th standard-normal
        draw z (any shape; all steps the same shape), as float64."""
        z = np.asarray(z, dtype=np.float64)
        if self._shape is None:
            self._shape = z.shape
            self._state = np.zeros((self.state_vectors,) + z.shape)
        elif z.shape != self._shape:
            raise ValueError("z has shape %s, earlier steps %s" % (z.shape, self._shape))
        if self.max_steps is not None and self.t >= self.max_steps:
            raise ValueError("the strategy covers %d steps; step %d asked" % (self.max_steps, self.t))
        x = self._step(z, self._state)
        self.t += 1
        return x

    def reset(self):
        """Forgets the state: the next call is step 0 again."""
        self.t = 0
        self._state = None
        self._shape = None


def load_strategy(path):
    """A :class:`NoiseGenerator` for a strategy file (see the module doc)."""
    if os.path.isdir(path):
        found = [f for f in ("blt.json", "toeplitz.json", "bands.npy") if os.path.exists(os.path.join(path, f))]
        if len(found) != 1:
            raise StrategyError("%s: want exactly one of blt.json, toeplitz.json, bands.npy; found %s"
                                % (path, found or "none"))
        path = os.path.join(path, found[0])
    if not os.path.exists(path):
        raise StrategyError("%s: no such file" % path)
    if path.endswith(".npy"):
        try:
            B = np.load(path, allow_pickle=False)
        except (ValueError, OSError) as e:
            raise StrategyError("%s: not a readable .npy array (%s)" % (path, e))
        if B.dtype.kind not in "fiu":
            raise StrategyError("%s: want a numeric array, got dtype %s" % (path, B.dtype))
        try:
            return NoiseGenerator.banded(B)
        except StrategyError as e:
            raise StrategyError("%s: %s" % (path, e))
    if path.endswith(".json"):
        try:
            with open(path) as f:
                obj = json.load(f)
        except (ValueError, OSError) as e:
            raise StrategyError("%s: not valid JSON (%s)" % (path, e))
        if not isinstance(obj, dict):
            raise StrategyError("%s: want a JSON object" % path)
        if "coefs" in obj:
            return NoiseGenerator.toeplitz(_vector(obj, "coefs", path))
        if "buf_decay" in obj:
            th, om = _pair(obj, path)
            inv = None
            if "inverse" in obj:
                if not isinstance(obj["inverse"], dict):
                    raise StrategyError("%s: 'inverse' must be an object" % path)
                inv = _pair(obj["inverse"], path + ": inverse")
            try:
                return NoiseGenerator.blt(th, om, inv)
            except StrategyError as e:
                raise StrategyError("%s: %s" % (path, e))
        raise StrategyError("%s: want 'buf_decay' (BLT) or 'coefs' (banded Toeplitz)" % path)
    raise StrategyError("%s: want a .json (BLT or Toeplitz) or .npy (bands) file" % path)


def _save_atomic(path, arr):
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".dpsolve_noise.", suffix=".npy")
    try:
        with os.fdopen(fd, "wb") as f:
            np.save(f, arr)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def main(argv=None):
    ap = argparse.ArgumentParser(description="C^-1 Z for a dpsolve strategy, one step at a time.")
    ap.add_argument("--strategy", required=True, help="blt.json, toeplitz.json, bands.npy or a plan directory")
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--dim", type=int, required=True)
    ap.add_argument("--normals", required=True, help="T x D .npy of standard normals")
    ap.add_argument("--out", required=True, help="T x D .npy to write")
    args = ap.parse_args(argv)
    if args.steps < 1 or args.dim < 1:
        ap.error("--steps and --dim must be positive")
    try:
        gen = load_strategy(args.strategy)
    except StrategyError as e:
        ap.error(str(e))
    try:
        Z = np.load(args.normals, allow_pickle=False, mmap_mode="r")
    except (ValueError, OSError) as e:
        ap.error("--normals %s: %s" % (args.normals, e))
    if Z.shape != (args.steps, args.dim):
        ap.error("--normals %s has shape %s, want (%d, %d)" % (args.normals, Z.shape, args.steps, args.dim))
    if Z.dtype.kind != "f":
        ap.error("--normals %s: want a float array, got dtype %s" % (args.normals, Z.dtype))
    if gen.max_steps is not None and args.steps > gen.max_steps:
        ap.error("--steps %d exceeds the %d steps of %s" % (args.steps, gen.max_steps, args.strategy))
    out = np.empty((args.steps, args.dim))
    for t in range(args.steps):
        z = np.asarray(Z[t], dtype=np.float64)
        if not np.all(np.isfinite(z)):
            ap.error("--normals %s: row %d has a NaN or infinite entry" % (args.normals, t))
        out[t] = gen.next(z)
    if not np.all(np.isfinite(out)):
        print("dpsolve_noise: the noise overflowed (is the strategy stable?)", file=sys.stderr)
        return 1
    _save_atomic(args.out, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
