"""DP-MF reference peer for structured (Toeplitz) strategies at training scale:
the algorithm of jax_privacy's BLT optimizer (google-deepmind/jax_privacy,
matrix_factorization/buffered_toeplitz.py `optimize`, and toeplitz.py
`optimize_banded_toeplitz`), reimplemented here with numpy/scipy only.

WHAT "LOSS" MEANS (the normalisation the Go side must match)
------------------------------------------------------------
C is n x n lower-triangular Toeplitz with coefficients c_0 = 1, c_1, ...,
c_{n-1} (C[t][u] = c_{t-u}); C^-1 has coefficients ct (ct_0 = 1). A is the
workload (prefix: A[t][u] = 1; momentum:beta: A[t][u] = (1 - beta^(t-u+1)) /
(1 - beta), 0 <= u <= t). Step t's squared error per unit noise variance is

    e_t = || row t of A C^-1 ||^2 = sum_{s <= t} b_s^2,   b = coefs of A C^-1,

and the min-separation sensitivity (participations >= B steps apart, at most
k = min(K, ceil(n/B)) of them) of C is

    sens^2 = sum_{j < n} v_j^2,   v_j = sum_{m=0}^{k-1} p_{j - mB},

p = the non-increasing majorant of |c| (p_j = max_{i >= j} |c_i|): exact when
c is non-negative and non-increasing, an upper bound otherwise (jax_privacy's
toeplitz.minsep_sensitivity_squared). Then

    loss = error * sens^2,  error = mean_t e_t (--error mean, the default)
                                  or max_t e_t = e_{n-1} (--error max),

i.e. loss = tr(A X^-1 A^T) / n * sens^2 for mean, X = C^T C: the expected
mean (or max) per-step squared error of the released prefix sums at unit
noise multiplier. dpsolve's `mean_step_error * sensitivity_squared` (and
`max_step_error * sensitivity_squared`). Nothing here is n x n: every loss is
O(n * d) (BLT) or O(n * b) (banded) from the coefficients.

THE ALGORITHM (as jax_privacy; differences stated)
-------------------------------------------------
BLT (--family blt): C(x) = 1 + sum_i w_i x / (1 - th_i x) (buffer decays th,
output scales w); C^-1 is again a BLT (th^, w^).
  * parameters: the pair of decays (th, th^) ("buf_decay_pair"); w and w^
    follow in closed form (w_i = prod_j (th_i - th^_j) / prod_{j!=i}
    (th_i - th_j), and symmetrically), McMahan & Pillutla 2025, Thm 2;
  * objective: loss / (k + (1 + ln(n)/pi)^2) + 1e-8 * (log barriers keeping
    0 < th, th^ < 1, w > 0, w^ < 0, min gaps of th and of th^ > 1e-12,
    sum w < 1, sum w/th < 1);
  * start: jax_privacy's rational approximation of 1/sqrt(1-x) with d
    buffers (Dvijotham et al. 2024, Prop 4.5; scale 1.6, shift -1), decays
    scaled to <= 1 - 1e-6 and output scales to Pillutla score <= 1 - 1e-6;
    th^ from the eigenvalues of diag(th) - w 1^T;
  * L-BFGS, memory 15, initial scaling s'y/y'y (first step: min(1, 1/|g|)),
    every pair kept (no curvature skip), as optax.lbfgs; the zoom line search
    of optax (Nocedal-Wright 3.5/3.6 with Hager-Zhang's approximate Wolfe,
    slope 1e-4, curvature 0.5, at most 100 evaluations, step <= 1, initial
    guess = previous step, interval threshold 1e-20); exactly 600 steps (the
    reference has no convergence test), gradients by hand-written reverse
    mode instead of jax autodiff (same derivatives; checked against finite
    differences in test_peers.py). One evaluation is saved per step by
    reusing the line search's value and gradient at the accepted point
    (jax_privacy recomputes them: identical numbers);
  * buffers d = 0 (C = I), 1, 2, ... up to --max-buffers (10): d + 1 is kept
    while 1.01 * loss(d + 1) < loss(d) (jax_privacy's rtol = 1.01). A failed
    d (non-finite loss, inverse check) counts as loss = inf; difference: so
    do decays closer than 1e-9 at the end, a ValueError that jax_privacy
    does not catch (its whole optimize() would fail).
  * difference: for single participation with max error jax_privacy uses
    closed forms independent of n; here the same O(n d) coefficient loss is
    used for every schema (same value, not the same cost).
Banded Toeplitz (--family toeplitz --bands b): jax_privacy's
optimize_banded_toeplitz: L-BFGS memory 1 with the backtracking Armijo line
search (factor 0.8, at most 128, initial guess min(1.5 * previous, 1)), 250
steps on the b coefficients of the single-participation loss
mean_t(e_t) * |c|^2, start c_j = prod_{i<=j} (2i-1)/(2i); the result is
scaled to unit norm and scored by the min-separation loss above.

Prints one JSON line; exit status 2 on bad input.
"""

import argparse
import json
import math
import sys
import time
import warnings

import numpy as np
import scipy.signal

PENALTY_STRENGTH = 1e-8
MIN_THETA_GAP = 1e-12
MAX_SECOND_COEF = 1.0
RTOL_BUFFERS = 1.01


class TimeUp(Exception):
    """Raised inside an optimization when --time-limit has passed."""


def max_participations(n, min_sep, epochs):
    """k = min(epochs, ceil(n / min_sep)) (epochs <= 0: no cap)."""
    ub = -(-n // min_sep)
    return ub if epochs is None or epochs <= 0 else min(epochs, ub)


# ---------------------------------------------------------------- the loss


class Problem:
    """The schema and workload: n steps, min separation B, at most K uses,
    workload 'prefix' (beta = None) or momentum beta, error 'mean' | 'max'."""

    def __init__(self, n, min_sep, epochs, beta=None, error="mean"):
        if n < 1 or min_sep < 1:
            raise ValueError("need n >= 1 and min_sep >= 1")
        if error not in ("mean", "max"):
            raise ValueError("error must be mean or max, got %r" % error)
        if beta is not None and not 0 <= beta < 1:
            raise ValueError("momentum beta must be in [0, 1), got %r" % beta)
        self.n, self.min_sep, self.beta, self.error = n, min_sep, beta, error
        self.k = max_participations(n, min_sep, epochs)
        self.norm = self.k + (1 + math.log(n) / math.pi) ** 2

    # error(ct): from the coefficients of C^-1 (BLT) ---------------------------
    def error_from_noise(self, ct, grad=False):
        n = self.n
        m = ct if self.beta is None else scipy.signal.lfilter([1.0], [1.0, -self.beta], ct)
        b = np.cumsum(m)
        e = np.cumsum(b * b)
        E = float(e.mean() if self.error == "mean" else e[-1])
        if not grad:
            return E, e
        if self.error == "mean":
            g_b2 = (n - np.arange(n)) / n
        else:
            g_b2 = np.ones(n)
        g_b = 2 * b * g_b2
        g_m = np.cumsum(g_b[::-1])[::-1]
        if self.beta is None:
            g_ct = g_m
        else:  # adjoint of m_t = ct_t + beta m_{t-1}: a backward filter
            g_ct = scipy.signal.lfilter([1.0], [1.0, -self.beta], g_m[::-1])[::-1]
        return E, e, g_ct

    # error(c): from the coefficients of C (banded Toeplitz) -------------------
    def workload_coefs(self):
        j = np.arange(self.n)
        if self.beta is None:
            return np.ones(self.n)
        return (1 - self.beta ** (j + 1)) / (1 - self.beta)

    def error_from_strategy(self, c, grad=False):
        """C has coefficients c (len <= n, rest zero); b = C^-1 w."""
        w = self.workload_coefs()
        b = scipy.signal.lfilter([1.0], c, w)
        e = np.cumsum(b * b)
        E = float(e.mean() if self.error == "mean" else e[-1])
        if not grad:
            return E, e
        n = self.n
        g_b2 = (n - np.arange(n)) / n if self.error == "mean" else np.ones(n)
        g_b = 2 * b * g_b2
        # b = C^-1 w  =>  dE/dc_j = -sum_t lam_t b_{t-j}, lam = C^-T g_b
        lam = scipy.signal.lfilter([1.0], c, g_b[::-1])[::-1]
        nb = len(c)
        g_c = np.array([-np.dot(lam[j:], b[: n - j]) for j in range(nb)])
        return E, e, g_c

    # sensitivity --------------------------------------------------------------
    def sens_squared(self, c, grad=False):
        """jax_privacy's minsep_sensitivity_squared of coefficients c (len n)."""
        n, B, k = self.n, self.min_sep, self.k
        a = np.abs(c)
        # reverse cumulative max and, for the gradient, where it is attained
        p = np.maximum.accumulate(a[::-1])[::-1]
        rows = -(-n // B)
        P = np.zeros(rows * B)
        P[:n] = p
        vfull = np.cumsum(P.reshape(rows, B), axis=0).reshape(-1)
        v = vfull.copy()
        if B * k < len(v):
            v[B * k:] -= vfull[: len(v) - B * k]
        v = v[:n]
        S = float(v @ v)
        if not grad:
            return S
        g_v = np.zeros(rows * B)
        g_v[:n] = 2 * v
        g_vfull = g_v.copy()
        if B * k < len(g_v):
            g_vfull[: len(g_v) - B * k] -= g_v[B * k:]
        g_P = np.cumsum(g_vfull.reshape(rows, B)[::-1], axis=0)[::-1].reshape(-1)
        g_p = g_P[:n]
        # argmax index of max_{i >= j} a_i (first from the right on ties)
        idx = np.arange(n)
        rev = a[::-1]
        best = np.maximum.accumulate(rev)
        is_new = np.empty(n, dtype=bool)
        is_new[0] = True
        is_new[1:] = rev[1:] > best[:-1]
        src = np.maximum.accumulate(np.where(is_new, idx, 0))
        arg = (n - 1 - src)[::-1]
        g_a = np.bincount(arg, weights=g_p, minlength=n)
        return S, g_a * np.sign(c)


# ---------------------------------------------------------------- BLT algebra


def powers(theta, m):
    """m x d array of theta_i^j, j = 0..m-1, as theta^(qK) * theta^r with
    K = ceil(sqrt(m)) (both by np.power: within ~3 ulp of np.power(theta, j),
    n*d multiplications instead of n*d transcendental calls)."""
    d = len(theta)
    if m <= 0:
        return np.zeros((0, d))
    K = max(1, int(math.ceil(math.sqrt(m))))
    Q = -(-m // K)
    lo = np.power(theta[None, :], np.arange(K)[:, None])  # K x d
    hi = np.power(theta[None, :], (K * np.arange(Q))[:, None])  # Q x d
    return (hi[:, None, :] * lo[None, :, :]).reshape(Q * K, d)[:m]


def blt_coefs(theta, omega, n):
    """c_0 = 1, c_j = sum_i omega_i theta_i^(j-1)."""
    c = np.empty(n)
    c[0] = 1.0
    if n > 1:
        if len(theta):
            c[1:] = powers(theta, n - 1) @ omega
        else:
            c[1:] = 0.0
    return c


def omega_from_pair(theta, theta_hat, jac=False):
    """Output scales of the BLT with decays theta whose inverse has decays
    theta_hat, and (jac) their Jacobians d omega/d theta, d omega/d theta_hat."""
    d = len(theta)
    diff_h = theta[:, None] - theta_hat[None, :]  # th_i - th^_j
    diff = theta[:, None] - theta[None, :]
    np.fill_diagonal(diff, 1.0)
    num = np.prod(diff_h, axis=1)
    den = np.prod(diff, axis=1)
    omega = num / den
    if not jac:
        return omega
    # prod_{l != j} (th_i - th^_l)
    partial = np.empty((d, d))
    for j in range(d):
        partial[:, j] = np.prod(np.delete(diff_h, j, axis=1), axis=1)
    d_hat = -partial / den[:, None]
    inv = 1.0 / diff
    np.fill_diagonal(inv, 0.0)
    d_th = omega[:, None] * inv  # d omega_i / d th_m = omega_i / (th_i - th_m)
    d_th[np.diag_indices(d)] = partial.sum(axis=1) / den - omega * inv.sum(axis=1)
    return omega, d_th, d_hat


def blt_inverse(theta, omega):
    """The BLT of C^-1 from that of C (eigenvalues of diag(th) - w 1^T), as
    jax_privacy's BufferedToeplitz.inverse, sorted by decreasing decay.
    Raises ValueError if the decays are closer than 1e-9 and RuntimeError if
    the closed-form eigenvectors do not reproduce the matrix."""
    d = len(theta)
    if d == 0:
        return theta.copy(), omega.copy()
    if d > 1:
        g = np.abs(theta[:, None] - theta[None, :])
        np.fill_diagonal(g, np.inf)
        if g.min() < 1e-9:
            raise ValueError("buffer decays closer than 1e-9: %s" % theta)
    T2 = np.diag(theta) - np.outer(omega, np.ones(d))
    ev = np.linalg.eigvals(T2).real
    vec = omega[:, None] / (ev[None, :] - theta[:, None])
    vinv = np.linalg.inv(vec)
    if not np.allclose(vec @ np.diag(ev) @ vinv, T2, atol=1e-7):
        raise RuntimeError("inverse BLT: eigenvectors do not reproduce the matrix")
    om3 = (vinv @ -omega) * (vec.T @ np.ones(d))
    order = np.argsort(ev)[::-1]
    return ev[order], om3[order]


def rational_init(d):
    """jax_privacy's from_rational_approx_to_sqrt_x(d, max_buf_decay=1-1e-6,
    max_pillutla_score=1-1e-6): returns (theta, omega) of C."""
    d1 = (d + 1) // 2
    h = 1.6 * np.pi / np.sqrt(2 * (d1 + 1))
    ks = np.arange(-d1 + 1, d - d1 + 1, 1) + (-1)
    c = 1 / (1 + np.exp(2 * h * ks))
    sc = -(c ** 2) * np.exp(3 * h * ks)
    sc /= np.sum(np.exp(h * ks) * c)
    order = np.argsort(c)[::-1]
    theta, omega = blt_inverse(c[order], sc[order])  # C from the BLT of C^-1
    theta = theta * min(1.0, (1 - 1e-6) / theta[0])
    score = np.sum(omega / theta)
    omega = omega * min(1.0, (1 - 1e-6) / score)
    return theta, omega


# ---------------------------------------------------------------- objective


def _mingap(x):
    d = len(x)
    g = np.abs(x[:, None] - x[None, :])
    np.fill_diagonal(g, np.inf)
    i, j = np.unravel_index(np.argmin(g), g.shape)
    return g[i, j], i, j


class BLTObjective:
    """The penalized, normalized loss of jax_privacy's buf_decay_pair
    parameterization, with its gradient, on x = concat(theta, theta_hat)."""

    def __init__(self, prob):
        self.prob = prob
        self.evals = 0

    def loss_parts(self, theta, theta_hat):
        """(loss, error, sens^2, omega, omega_hat) without penalties."""
        n = self.prob.n
        omega = omega_from_pair(theta, theta_hat)
        omega_hat = omega_from_pair(theta_hat, theta)
        c = blt_coefs(theta, omega, n)
        ct = blt_coefs(theta_hat, omega_hat, n)
        E, _ = self.prob.error_from_noise(ct)
        S = self.prob.sens_squared(c)
        return E * S, E, S, omega, omega_hat

    def __call__(self, x):
        self.evals += 1
        with np.errstate(all="ignore"):
            return self._value_grad(x)

    def _value_grad(self, x):
        prob, n = self.prob, self.prob.n
        d = len(x) // 2
        th, thh = x[:d], x[d:]
        om, dth_om, dthh_om = omega_from_pair(th, thh, jac=True)
        omh, dthh_omh, dth_omh = omega_from_pair(thh, th, jac=True)
        # coefficients and their derivatives
        Pw = powers(th, n - 1)
        Ph = powers(thh, n - 1)
        c = np.empty(n)
        ct = np.empty(n)
        c[0] = ct[0] = 1.0
        c[1:] = Pw @ om
        ct[1:] = Ph @ omh
        E, _, g_ct = prob.error_from_noise(ct, grad=True)
        S, g_c = prob.sens_squared(c, grad=True)
        L = E * S / prob.norm
        g_c = g_c * (E / prob.norm)
        g_ct = g_ct * (S / prob.norm)
        jj = np.arange(1, n - 1, dtype=float)

        def back(g, P, th_, om_):
            g_om = P.T @ g[1:]
            if n > 2:
                g_th = om_ * (P[:-1].T @ (g[2:] * jj))
            else:
                g_th = np.zeros_like(th_)
            return g_om, g_th

        g_om, g_th = back(g_c, Pw, th, om)
        g_omh, g_thh = back(g_ct, Ph, thh, omh)
        # penalties (jax_privacy's LossFn.compute_penalties), value and grad
        pen = 0.0
        p_th = np.zeros(d)
        p_thh = np.zeros(d)
        p_om = np.zeros(d)
        p_omh = np.zeros(d)
        pen += -np.log(th).sum() - np.log(1 - th).sum()
        p_th += -1 / th + 1 / (1 - th)
        pen += -np.log(om).sum()
        p_om += -1 / om
        pen += -np.log(thh).sum() - np.log(1 - thh).sum()
        p_thh += -1 / thh + 1 / (1 - thh)
        pen += -np.log(-omh).sum()
        p_omh += -1 / omh
        if d > 1:
            for vec, gvec in ((th, p_th), (thh, p_thh)):
                gap, i, j = _mingap(vec)
                pen += -np.log(gap - MIN_THETA_GAP)
                s = np.sign(vec[i] - vec[j]) / (gap - MIN_THETA_GAP)
                gvec[i] -= s
                gvec[j] += s
        sw = om.sum()
        pen += -np.log(MAX_SECOND_COEF - sw)
        p_om += 1 / (MAX_SECOND_COEF - sw)
        score = np.sum(om / th)
        pen += -np.log(1 - score)
        p_om += 1 / (1 - score) / th
        p_th += 1 / (1 - score) * (-om / th ** 2)
        value = L + PENALTY_STRENGTH * pen
        g_om = g_om + PENALTY_STRENGTH * p_om
        g_omh = g_omh + PENALTY_STRENGTH * p_omh
        g_th = g_th + PENALTY_STRENGTH * p_th
        g_thh = g_thh + PENALTY_STRENGTH * p_thh
        # chain through omega(th, thh), omega_hat(thh, th)
        gx_th = g_th + dth_om.T @ g_om + dth_omh.T @ g_omh
        gx_thh = g_thh + dthh_om.T @ g_om + dthh_omh.T @ g_omh
        if not np.isfinite(value):
            value = math.nan
        return float(value), np.concatenate([gx_th, gx_thh])


# ---------------------------------------------------------------- optimizers


def _cubicmin(a, fa, fpa, b, fb, c, fc):
    a, fa, fpa, b, fb, c, fc = map(np.float64, (a, fa, fpa, b, fb, c, fc))  # IEEE: x/0 is inf or nan
    C = fpa
    db, dc = b - a, c - a
    denom = (db * dc) ** 2 * (db - dc)
    A = (dc ** 2 * (fb - fa - C * db) - db ** 2 * (fc - fa - C * dc)) / denom
    B = (-(dc ** 3) * (fb - fa - C * db) + db ** 3 * (fc - fa - C * dc)) / denom
    return a + (-B + np.sqrt(B * B - 3.0 * A * C)) / (3.0 * A)


def _quadmin(a, fa, fpa, b, fb):
    a, fa, fpa, b, fb = map(np.float64, (a, fa, fpa, b, fb))
    db = b - a
    B = (fb - fa - fpa * db) / db ** 2
    return a - fpa / (2.0 * B)


def zoom_linesearch(f, x, u, value, grad, guess, max_steps=100, max_step=1.0, c1=1e-4, c2=0.5,
                    approx_rtol=1e-6, threshold=1e-20, increase=2.0):
    """optax.scale_by_zoom_linesearch's search (tol = 0): returns
    (stepsize, value, grad) at the accepted point, and the evaluations made."""
    slope0 = float(grad @ u)

    # np.maximum/np.minimum propagate NaN as jnp's do (Python's max does not)
    def dec_err(t, v, s):
        e = np.float64(v - value - c1 * t * slope0)
        a = np.maximum(s - (2 * c1 - 1.0) * slope0, v - value - approx_rtol * abs(value))
        e = np.maximum(np.minimum(a, e), 0.0)
        return math.inf if math.isnan(e) else float(e)

    def curv_err(s):
        e = np.maximum(np.float64(abs(s) - c2 * abs(slope0)), 0.0)
        return math.inf if math.isnan(e) else float(e)

    def at(t):
        v, g = f(x + t * u)
        return v, g, float(g @ u)

    st = dict(t=0.0, v=value, g=grad, s=slope0, low=0.0, vlow=value, slow=slope0, high=0.0, vhigh=value,
              shigh=slope0, cref=0.0, vcref=value, safe=0.0, vsafe=value, gsafe=grad, dec=math.inf, found=False)
    count = 0
    while True:
        if not st["found"]:  # Nocedal-Wright 3.5: search the interval
            prev_t, prev_v, prev_s = st["t"], st["v"], st["s"]
            t = guess if count == 0 else increase * prev_t
            reached = t >= max_step
            t = min(t, max_step)
            v, g, s = at(t)
            de, ce = dec_err(t, v, s), curv_err(s)
            err = max(de, ce)
            if de <= 0:
                st.update(safe=t, vsafe=v, gsafe=g)
            set_high = (de > 0) or (v >= prev_v and count > 0)
            set_low = (s >= 0) and not set_high
            if set_low:
                st.update(low=t, vlow=v, slow=s, high=prev_t, vhigh=prev_v, shigh=prev_s)
            else:
                st.update(low=prev_t, vlow=prev_v, slow=prev_s, high=t, vhigh=v, shigh=s)
            st.update(cref=st["low"], vcref=st["vlow"])
            found = set_high or set_low or err <= 0
            done = err <= 0 or (reached and not found)
            st.update(t=t, v=v, g=g, s=s, dec=de, found=found)
            failed = count + 1 >= max_steps and not done
        else:  # 3.6: zoom
            low, high = st["low"], st["high"]
            delta = abs(high - low)
            left, right = min(high, low), max(high, low)
            with np.errstate(all="ignore"):
                mc = _cubicmin(low, st["vlow"], st["slow"], high, st["vhigh"], st["cref"], st["vcref"])
                mq = _quadmin(low, st["vlow"], st["slow"], high, st["vhigh"])
            if left + 0.2 * delta < mc < right - 0.2 * delta:
                t = mc
            elif left + 0.1 * delta < mq < right - 0.1 * delta:
                t = mq
            else:
                t = (low + high) / 2.0
            v, g, s = at(t)
            de, ce = dec_err(t, v, s), curv_err(s)
            err = max(de, ce)
            if de <= 0 and v < st["vsafe"]:
                st.update(safe=t, vsafe=v, gsafe=g)
            done = err <= 0
            set_high_mid = (de > 0) or (v >= st["vlow"])
            set_high_low = (s * (high - low) >= 0) and not set_high_mid
            old_high, old_vhigh = high, st["vhigh"]
            old_low, old_vlow = low, st["vlow"]
            if set_high_mid:
                st.update(high=t, vhigh=v, shigh=s)
            if set_high_low:
                st.update(high=low, vhigh=st["vlow"], shigh=st["slow"])
            if not set_high_mid:
                st.update(low=t, vlow=v, slow=s)
            if set_high_mid or set_high_low:
                st.update(cref=old_high, vcref=old_vhigh)
            else:
                st.update(cref=old_low, vcref=old_vlow)
            st.update(t=t, v=v, g=g, s=s, dec=de)
            failed = (count + 1 >= max_steps or (delta <= threshold and st["safe"] > 0)) and not done
        count += 1
        if failed:  # optax's _try_safe_step
            if st["safe"] > 0 or math.isinf(st["dec"]):
                return st["safe"], st["vsafe"], st["gsafe"], count
            return st["t"], st["v"], st["g"], count
        if done:
            return st["t"], st["v"], st["g"], count


def lbfgs_zoom(f, x, steps, memory=15, deadline=None):
    """optax.lbfgs(memory_size=memory) + the zoom line search, `steps` steps.
    Returns (x, value, evaluations)."""
    S, Y, R = [], [], []
    v, g = f(x)
    evals = 1
    prev_x = prev_g = None
    lr = 1.0  # the line search's state: the next initial guess ("keep")
    for it in range(steps):
        if deadline is not None and time.perf_counter() > deadline:
            raise TimeUp()
        if prev_x is not None:
            s, y = x - prev_x, g - prev_g
            sy = float(s @ y)
            S.append(s)
            Y.append(y)
            R.append(0.0 if sy == 0 else 1.0 / sy)
            if len(S) > memory:
                S.pop(0), Y.pop(0), R.pop(0)
            yy = float(y @ y)
            gamma = sy / yy if yy > 0 else 1.0
        else:
            gn = float(np.linalg.norm(g))
            gamma = min(1.0, 1.0 / gn) if gn > 0 else 1.0
        q = g.copy()
        alphas = []
        for s, y, r in zip(reversed(S), reversed(Y), reversed(R)):
            a = r * float(s @ q)
            q = q - a * y
            alphas.append(a)
        q = gamma * q
        for (s, y, r), a in zip(zip(S, Y, R), reversed(alphas)):
            b = r * float(y @ q)
            q = q + (a - b) * s
        u = -q
        t, v_new, g_new, n_ev = zoom_linesearch(f, x, u, v, g, lr)
        evals += n_ev
        lr = t
        prev_x, prev_g = x, g
        x = x + t * u
        v, g = v_new, g_new
    return x, v, evals


def lbfgs_backtracking(f, x, steps, deadline=None):
    """optax.lbfgs(memory_size=1, linesearch=scale_by_backtracking_linesearch(
    128)): jax_privacy's default optimizer. f returns (value, grad)."""
    v, g = f(x)
    evals = 1
    prev_x = prev_g = None
    lr_state = 1.0
    for it in range(steps):
        if deadline is not None and time.perf_counter() > deadline:
            raise TimeUp()
        if prev_x is not None:
            s, y = x - prev_x, g - prev_g
            sy = float(s @ y)
            r = 0.0 if sy == 0 else 1.0 / sy
            yy = float(y @ y)
            gamma = sy / yy if yy > 0 else 1.0
            a = r * float(s @ g)
            q = gamma * (g - a * y)
            q = q + (a - r * float(y @ q)) * s
        else:
            gn = float(np.linalg.norm(g))
            q = min(1.0, 1.0 / gn) * g if gn > 0 else g.copy()
        u = -q
        slope = float(u @ g)
        lr = min(1.5 * lr_state, 1.0)
        dec = math.inf
        i = 0
        while not dec <= 0 and i <= 128:
            if i > 0:
                lr *= 0.8
            vn, gn_ = f(x + lr * u)
            evals += 1
            dec = vn - v - lr * 1e-4 * slope
            dec = math.inf if math.isnan(dec) else max(dec, 0.0)
            i += 1
        if math.isinf(dec):
            lr = 0.0
        lr_state = lr
        prev_x, prev_g = x, g
        x = x + lr * u
        if lr == 0.0:
            v, g = f(x)
            evals += 1
        else:
            v, g = vn, gn_
    return x, v, evals


# ---------------------------------------------------------------- drivers


def identity_loss(prob):
    c = np.zeros(prob.n)
    c[0] = 1.0
    E, _ = prob.error_from_noise(c)
    return E * prob.sens_squared(c)


def optimize_blt(prob, max_buffers=10, steps=600, time_limit=None, log=None):
    """jax_privacy's optimize(): increasing buffers while the loss improves by
    1%. Returns a dict (the JSON report's fields)."""
    t0, c0 = time.perf_counter(), time.process_time()
    deadline = None if not time_limit else t0 + time_limit
    best = dict(buffers=0, theta=np.zeros(0), omega=np.zeros(0), loss=identity_loss(prob))
    history = [dict(buffers=0, loss=best["loss"], steps=0, evaluations=0)]
    stop = "max-buffers"
    total_steps = 0
    obj = BLTObjective(prob)
    for d in range(1, max_buffers + 1):
        th0, om0 = rational_init(d)
        thh0, _ = blt_inverse(th0, om0)
        x0 = np.concatenate([th0, thh0])
        ev0 = obj.evals
        try:
            x, _, _ = lbfgs_zoom(obj, x0, steps, deadline=deadline)
            th, thh = x[:d], x[d:]
            om = omega_from_pair(th, thh)
            order = np.argsort(th)[::-1]
            th, om = th[order], om[order]
            ith, iom = blt_inverse(th, om)  # as loss_fn.loss: checks included
            c = blt_coefs(th, om, prob.n)
            ct = blt_coefs(ith, iom, prob.n)
            loss = prob.error_from_noise(ct)[0] * prob.sens_squared(c)
            if not math.isfinite(loss):
                raise RuntimeError("non-finite loss")
        except TimeUp:
            stop = "time"
            break
        except (RuntimeError, ValueError, np.linalg.LinAlgError) as e:
            if log:
                log("buffers %d failed: %s" % (d, e))
            loss, th, om = math.inf, None, None
        total_steps += steps
        history.append(dict(buffers=d, loss=loss, steps=steps, evaluations=obj.evals - ev0))
        if log:
            log("buffers %d: loss %.6g (%.1f s)" % (d, loss, time.perf_counter() - t0))
        if RTOL_BUFFERS * loss < best["loss"]:
            best = dict(buffers=d, theta=th, omega=om, loss=loss)
        else:
            stop = "gain<1%"
            break
    th, om = best["theta"], best["omega"]
    ith, iom = blt_inverse(th, om)
    c = blt_coefs(th, om, prob.n)
    ct = blt_coefs(ith, iom, prob.n)
    E, e = prob.error_from_noise(ct)
    S = prob.sens_squared(c)
    return dict(family="blt", loss=E * S, error=E, sensitivity_squared=S, participations=prob.k,
                mean_step_error=float(e.mean()), max_step_error=float(e[-1]), buffers=best["buffers"],
                buf_decay=th.tolist(), output_scale=om.tolist(),
                inverse=dict(buf_decay=ith.tolist(), output_scale=iom.tolist()),
                steps=total_steps, evaluations=obj.evals, history=history, stop=stop,
                seconds=time.perf_counter() - t0, cpu_seconds=time.process_time() - c0)


def banded_init(b):
    k = np.arange(b, dtype=float)
    r = np.ones(b)
    r[1:] = (2 * k[1:] - 1) / (2 * k[1:])
    return np.cumprod(r)


def optimize_banded(prob, bands, steps=250, time_limit=None):
    """jax_privacy's optimize_banded_toeplitz (single-participation loss,
    default optimizer), scored under the min-separation schema."""
    if not 1 <= bands <= prob.n:
        raise ValueError("--bands must be in [1, n]")
    t0, c0 = time.perf_counter(), time.process_time()
    deadline = None if not time_limit else t0 + time_limit
    single = Problem(prob.n, 1, 1, prob.beta, prob.error)
    evals = [0]

    def f(c):
        evals[0] += 1
        with np.errstate(all="ignore"):
            E, _, gE = single.error_from_strategy(c, grad=True)
            s2 = float(c @ c)
            v = E * s2
            g = gE * s2 + E * 2 * c
        if not math.isfinite(v):
            return math.nan, np.full_like(c, math.nan)
        return v, g

    stop = "max-steps"
    try:
        c, _, _ = lbfgs_backtracking(f, banded_init(bands), steps, deadline=deadline)
    except TimeUp:
        raise SystemExit("time limit reached before the 250 steps ended")
    c = c / np.linalg.norm(c)
    full = np.zeros(prob.n)
    full[:bands] = c
    E, e = prob.error_from_strategy(c)
    S = prob.sens_squared(full)
    # the reference's formula is exact when |c| is non-increasing and either c
    # is non-negative or the bands fit in the separation (disjoint columns)
    mono = bool(np.all(np.diff(np.abs(c)) <= 0) and (np.all(c >= 0) or bands <= prob.min_sep))
    return dict(family="toeplitz", bands=bands, loss=E * S, error=E, sensitivity_squared=S,
                sensitivity_exact=mono, participations=prob.k,
                mean_step_error=float(e.mean()), max_step_error=float(e[-1]), coefs=c.tolist(),
                steps=steps, evaluations=evals[0], stop=stop,
                seconds=time.perf_counter() - t0, cpu_seconds=time.process_time() - c0)


def parse_workload(s):
    if s == "prefix":
        return None
    if s.startswith("momentum:"):
        try:
            beta = float(s[len("momentum:"):])
        except ValueError:
            beta = math.nan
        if not 0 <= beta < 1:
            raise ValueError("momentum beta must be in [0, 1): %r" % s)
        return beta
    raise ValueError("unknown workload %r (want prefix or momentum:BETA)" % s)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--min-sep", type=int, default=1)
    ap.add_argument("--epochs", type=int, default=0, help="at most this many participations (0: no cap)")
    ap.add_argument("--workload", default="prefix")
    ap.add_argument("--error", default="mean", choices=["mean", "max"])
    ap.add_argument("--family", default="blt", choices=["blt", "toeplitz"])
    ap.add_argument("--max-buffers", type=int, default=10)
    ap.add_argument("--bands", type=int, default=0)
    ap.add_argument("--steps", type=int, default=0, help="optimizer steps (default: 600 BLT, 250 banded)")
    ap.add_argument("--time-limit", type=float, default=0, help="seconds (0: none)")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    try:
        if args.n < 2:
            raise ValueError("--n must be >= 2")
        if not 1 <= args.min_sep <= args.n:
            raise ValueError("--min-sep must be in [1, n]")
        if args.epochs < 0:
            raise ValueError("--epochs must be >= 0")
        if not 0 <= args.max_buffers <= 15:
            raise ValueError("--max-buffers must be in [0, 15]")
        beta = parse_workload(args.workload)
        prob = Problem(args.n, args.min_sep, args.epochs, beta, args.error)
        if args.family == "toeplitz" and args.bands < 1:
            raise ValueError("--family toeplitz needs --bands >= 1")
    except ValueError as e:
        ap.error(str(e))
    log = (lambda m: print(m, file=sys.stderr, flush=True)) if args.verbose else None
    warnings.simplefilter("ignore", RuntimeWarning)
    if args.family == "blt":
        r = optimize_blt(prob, args.max_buffers, args.steps or 600, args.time_limit or None, log)
    else:
        try:
            r = optimize_banded(prob, args.bands, args.steps or 250, args.time_limit or None)
        except ValueError as e:
            ap.error(str(e))
    r.update(peer="blt_ref", n=args.n, min_sep=args.min_sep, epochs=args.epochs, workload=args.workload,
             error_kind=args.error)
    print(json.dumps(r))


if __name__ == "__main__":
    main()
