#!/usr/bin/env python3
"""Peer for `dpsolve synth`: MST (McKenna, Miklau & Sheldon 2021) and AIM
(McKenna et al., VLDB 2022) with Private-PGM-style estimation (McKenna,
Sheldon & Miklau, ICML 2019), reimplemented from the papers in numpy (our own
code; nothing copied from the published packages).

What it does, as the published mechanisms do:
  * independent Gaussian noise on every measured marginal table (identity
    queries), accounting in zCDP: a table at scale sigma costs 1/(2 sigma^2),
    the exponential mechanism at epsilon costs epsilon^2/8;
  * MST: rho/3 on every one-way marginal, rare values (noisy count < 3 sigma)
    merged, rho/3 on k-1 exponential-mechanism picks of a maximum spanning tree
    of pairs (score: L1 error of the independent estimate), rho/3 on the pairs;
  * AIM: T = 16 k rounds, the one-ways first at sigma = sqrt(T/(1.8 rho)), then
    per round exponential-mechanism selection (10%) among the workload's
    downward closure under a model-size cap growing with the budget spent,
    measurement (90%), and the annealing rule;
  * estimation: a graphical model on a junction tree of the measured cliques,
    fitted by entropic mirror descent with Armijo backtracking on
    sum_r ||mu_r - y_r||^2 / sigma_r^2, exact belief propagation;
  * records drawn from the model clique by clique (random draws).

Usage: pgm_peer.py --data adult.csv --domain domain.json --evaluate synthetic.csv
       pgm_peer.py --data adult.csv --domain domain.json --mechanism mst|aim
       --epsilon 1 --delta 1e-9 --seed S [--iters N] [--out synthetic.csv]
Prints one JSON line: mechanism, rho, 2-way and 3-way workload errors, CPU s.
"""
import argparse, itertools, json, math, sys, time
import numpy as np


def cdp_delta(rho, eps):
    amin, amax = 1.01, (eps + 1) / (2 * rho) + 2
    for _ in range(200):
        a = (amin + amax) / 2
        if (2 * a - 1) * rho - eps + math.log1p(-1 / a) < 0:
            amin = a
        else:
            amax = a
    return min(1.0, math.exp((a - 1) * (a * rho - eps) + a * math.log1p(-1 / a)) / (a - 1))


def cdp_rho(eps, delta):
    lo, hi = 0.0, eps + 1
    for _ in range(200):
        r = (lo + hi) / 2
        if cdp_delta(r, eps) <= delta:
            lo = r
        else:
            hi = r
    return lo


def marginal(data, sizes, attrs):
    attrs = tuple(attrs)
    idx = np.zeros(data.shape[0], dtype=np.int64)
    for a in attrs:
        idx = idx * sizes[a] + data[:, a]
    n = int(np.prod([sizes[a] for a in attrs])) if attrs else 1
    return np.bincount(idx, minlength=n).astype(float).reshape([sizes[a] for a in attrs])


def exp_mech(rng, q, eps, sens):
    s = eps * np.asarray(q) / (2 * sens)
    return int(np.argmax(s + rng.gumbel(size=len(s))))


# --- junction tree ---------------------------------------------------------
def junction_tree(sizes, sets):
    k = len(sizes)
    adj = [set() for _ in range(k)]
    for s in sets:
        for a in s:
            adj[a] |= set(s) - {a}
    alive, cliques = set(range(k)), []
    while alive:
        v = min(alive, key=lambda v: (np.prod([sizes[u] for u in adj[v] | {v}]), v))
        c = tuple(sorted(adj[v] | {v}))
        cliques.append(c)
        for u in adj[v]:
            adj[u] |= adj[v] - {u}
            adj[u].discard(v)
        alive.remove(v)
    maxi = [c for i, c in enumerate(cliques)
            if not any(set(c) <= set(d) and (len(d) > len(c) or j < i) for j, d in enumerate(cliques) if j != i)]
    n = len(maxi)
    edges = sorted(((len(set(maxi[i]) & set(maxi[j])), i, j) for i in range(n) for j in range(i + 1, n)), reverse=True)
    parent = list(range(n))

    def find(x):
        while parent[x] != x:
            x = parent[x]
        return x
    nbr = [[] for _ in range(n)]
    for w, i, j in edges:
        a, b = find(i), find(j)
        if a != b:
            parent[a] = b
            nbr[i].append(j)
            nbr[j].append(i)
    order, par, seen = [0], {0: -1}, {0}
    for c in order:
        for d in nbr[c]:
            if d not in seen:
                seen.add(d)
                par[d] = c
                order.append(d)
    return maxi, par, order


class Model:
    def __init__(self, sizes, cliques, par, order, total):
        self.sizes, self.cliques, self.par, self.order, self.total = sizes, cliques, par, order, total
        self.theta = [np.zeros([sizes[a] for a in c]) for c in cliques]
        self.children = {i: [j for j in range(len(cliques)) if par[j] == i] for i in range(len(cliques))}

    def _sep(self, i):
        return tuple(a for a in self.cliques[i] if a in self.cliques[self.par[i]])

    def _expand(self, arr, attrs, to):
        # arr over attrs (subset of to, sorted) -> broadcastable over to
        shape = [self.sizes[a] if a in attrs else 1 for a in to]
        return arr.reshape(shape)

    def _lse(self, arr, attrs, keep):
        ax = tuple(i for i, a in enumerate(attrs) if a not in keep)
        m = arr.max(axis=ax, keepdims=True)
        return (np.log(np.exp(arr - m).sum(axis=ax, keepdims=True)) + m).reshape([self.sizes[a] for a in keep])

    def calibrate(self):
        up, partial = {}, {}
        for i in reversed(self.order):
            p = self.theta[i].copy()
            for c in self.children[i]:
                p = p + self._expand(up[c], self._sep(c), self.cliques[i])
            partial[i] = p
            if self.par[i] >= 0:
                up[i] = self._lse(p, self.cliques[i], self._sep(i))
        bel = {self.order[0]: partial[self.order[0]]}
        for i in self.order[1:]:
            pa, s = self.par[i], self._sep(i)
            down = self._lse(bel[pa] - self._expand(up[i], s, self.cliques[pa]), self.cliques[pa], s)
            bel[i] = partial[i] + self._expand(down, s, self.cliques[i])
        self.logbel = []
        for i in range(len(self.cliques)):
            b = bel[i]
            z = np.log(np.exp(b - b.max()).sum()) + b.max()
            self.logbel.append(b - z)

    def clique_of(self, attrs):
        cs = [i for i, c in enumerate(self.cliques) if set(attrs) <= set(c)]
        return min(cs, key=lambda i: len(self.cliques[i])) if cs else -1

    def project(self, attrs):
        attrs = tuple(attrs)
        i = self.clique_of(attrs)
        if i >= 0:
            p = np.exp(self.logbel[i])
            ax = tuple(j for j, a in enumerate(self.cliques[i]) if a not in attrs)
            return p.sum(axis=ax)
        # Variable elimination by einsum over the junction-tree factorization.
        letters = {a: chr(ord('a') + a) for a in range(len(self.sizes))}
        ops, subs = [], []
        for j, c in enumerate(self.cliques):
            ops.append(np.exp(self.logbel[j]))
            subs.append(''.join(letters[a] for a in c))
            if self.par[j] >= 0:
                s = self._sep(j)
                ps = np.exp(self._lse(self.logbel[j], c, s))
                ops.append(np.where(ps > 0, 1 / np.maximum(ps, 1e-300), 0))
                subs.append(''.join(letters[a] for a in s))
        expr = ','.join(subs) + '->' + ''.join(letters[a] for a in attrs)
        return np.einsum(expr, *ops, optimize='greedy')


def fit(sizes, meas, total, iters, warm=None):
    """meas: list of (attrs, y, sigma). Entropic mirror descent, Armijo."""
    sets = [m[0] for m in meas] + [(a,) for a in range(len(sizes))]
    cl, par, order = junction_tree(sizes, sets)
    model = Model(sizes, cl, par, order, total)
    if warm is not None:
        for i, c in enumerate(cl):
            try:
                p = warm.project(c)
                model.theta[i] = np.log(np.maximum(p, 1e-300))
                if par[i] >= 0:
                    s = model._sep(i)
                    ps = p.sum(axis=tuple(j for j, a in enumerate(c) if a not in s))
                    model.theta[i] = model.theta[i] - model._expand(np.log(np.maximum(ps, 1e-300)), s, c)
            except Exception:
                model.theta[i] = np.zeros_like(model.theta[i])
    model.calibrate()
    terms = [(a, y, s, model.clique_of(a)) for a, y, s in meas]

    def loss_grad():
        l, g = 0.0, [np.zeros_like(t) for t in model.theta]
        for a, y, s, c in terms:
            p = np.exp(model.logbel[c])
            ax = tuple(j for j, b in enumerate(model.cliques[c]) if b not in a)
            mu = total * p.sum(axis=ax)
            r = mu - y
            l += (r * r).sum() / s ** 2
            g[c] = g[c] + model._expand(2 * total * r / s ** 2, a, model.cliques[c])
        return l, g
    alpha = 1.0 / (2 * total ** 2 * sum(1 / s ** 2 for _, _, s in meas))
    loss, grad = loss_grad()
    for it in range(iters):
        theta0 = [t.copy() for t in model.theta]
        mu0 = [np.exp(b) for b in model.logbel]
        for _ in range(30):
            model.theta = [t - alpha * g for t, g in zip(theta0, grad)]
            model.calibrate()
            new, ng = loss_grad()
            pred = sum(float((g * (m0 - np.exp(b))).sum()) for g, m0, b in zip(grad, mu0, model.logbel))
            if loss - new >= 0.5 * pred:
                loss, grad = new, ng
                alpha *= 1.5
                break
            alpha /= 2
        else:
            model.theta = theta0
            model.calibrate()
            break
    return model


def sample(model, n, rng):
    k = len(model.sizes)
    out = np.zeros((n, k), dtype=np.int64)
    done = set()
    for i in model.order:
        c = model.cliques[i]
        p = np.exp(model.logbel[i])
        sep = [a for a in c if a in done]
        free = [a for a in c if a not in done]
        # p as [sep cells, free cells]
        perm = [c.index(a) for a in sep + free]
        pt = np.transpose(p, perm).reshape(int(np.prod([model.sizes[a] for a in sep])) if sep else 1, -1)
        sidx = np.zeros(n, dtype=np.int64)
        for a in sep:
            sidx = sidx * model.sizes[a] + out[:, a]
        cond = pt / np.maximum(pt.sum(axis=1, keepdims=True), 1e-300)
        cum = np.cumsum(cond, axis=1)
        u = rng.random(n)
        f = np.minimum((cum[sidx] < u[:, None]).sum(axis=1), pt.shape[1] - 1)
        for a in reversed(free):
            out[:, a] = f % model.sizes[a]
            f //= model.sizes[a]
        done |= set(free)
    return out


def mst(data, sizes, rho, rng, iters):
    k, n = len(sizes), data.shape[0]
    s1 = math.sqrt(k / (2 * rho / 3))  # each of k tables, rho/3 in all
    one = [marginal(data, sizes, (a,)) + rng.normal(0, s1, sizes[a]) for a in range(k)]
    # Compression: values with noisy count < 3 sigma merged.
    maps, csizes = [], []
    for a in range(k):
        keep = np.where(one[a] >= 3 * s1)[0]
        m = np.full(sizes[a], len(keep))
        m[keep] = np.arange(len(keep))
        if sizes[a] - len(keep) <= 1:
            m = np.arange(sizes[a])
        maps.append(m)
        csizes.append(int(m.max()) + 1)
    cdata = np.stack([maps[a][data[:, a]] for a in range(k)], axis=1)
    cone = [np.bincount(maps[a], weights=one[a], minlength=csizes[a]) for a in range(k)]
    meas = [((a,), cone[a], s1 * math.sqrt(max(1, (maps[a] == csizes[a] - 1).sum() if sizes[a] != csizes[a] else 1))) for a in range(k)]
    est = fit(csizes, meas, max(1.0, float(np.mean([c.sum() for c in cone]))), iters)
    eps = math.sqrt(8 * (rho / 3) / (k - 1))
    score = {}
    for i, j in itertools.combinations(range(k), 2):
        x = marginal(cdata, csizes, (i, j))
        score[(i, j)] = np.abs(x - est.total * est.project((i, j))).sum()
    comp, chosen = list(range(k)), []
    for _ in range(k - 1):
        cand = [e for e in score if comp[e[0]] != comp[e[1]]]
        e = cand[exp_mech(rng, [score[c] for c in cand], eps, 1.0)]
        old = comp[e[1]]
        comp = [comp[e[0]] if c == old else c for c in comp]
        chosen.append(e)
    s3 = math.sqrt((k - 1) / (2 * rho / 3))
    meas += [(e, marginal(cdata, csizes, e) + rng.normal(0, s3, (csizes[e[0]], csizes[e[1]])), s3) for e in chosen]
    model = fit(csizes, meas, est.total, iters)
    syn = sample(model, n, rng)
    # Expand merged values in proportion to the noisy one-ways.
    for a in range(k):
        if csizes[a] != sizes[a]:
            rare = np.where(maps[a] == csizes[a] - 1)[0]
            w = np.maximum(one[a][rare], 0)
            w = w / w.sum() if w.sum() > 0 else np.full(len(rare), 1 / len(rare))
            back = np.zeros(csizes[a], dtype=np.int64)
            for v in range(sizes[a]):
                back[maps[a][v]] = v
            col = back[syn[:, a]]
            r = syn[:, a] == csizes[a] - 1
            col[r] = rng.choice(rare, size=r.sum(), p=w)
            syn[:, a] = col
    return syn


def aim(data, sizes, rho, rng, iters, workload, max_cells=1e7):
    k, n = len(sizes), data.shape[0]
    T = 16 * k
    sigma, eps = math.sqrt(T / (2 * 0.9 * rho)), math.sqrt(8 * 0.1 * rho / T)
    cands = sorted({tuple(c) for s in workload for r in range(1, len(s) + 1) for c in itertools.combinations(s, r)})
    w = {c: sum(len(set(c) & set(s)) for s in workload) for c in cands}
    sens = max(w.values())
    meas = [((a,), marginal(data, sizes, (a,)) + rng.normal(0, sigma, sizes[a]), sigma) for a in range(k)]
    used = k / (2 * sigma ** 2)
    total = max(1.0, float(np.mean([m[1].sum() for m in meas])))
    model = fit(sizes, meas, total, iters)
    true = {c: marginal(data, sizes, c) for c in cands}
    while used < rho * (1 - 1e-12):
        rem = rho - used
        final = rem < 2 * (1 / (2 * sigma ** 2) + eps ** 2 / 8)
        if final:
            sigma, eps = math.sqrt(1 / (2 * 0.9 * rem)), math.sqrt(8 * 0.1 * rem)
        limit = max_cells * (used + 1 / (2 * sigma ** 2) + eps ** 2 / 8) / rho
        ok, q = [], []
        for c in cands:
            cl, _, _ = junction_tree(sizes, [m[0] for m in meas] + [c])
            if sum(np.prod([sizes[a] for a in x]) for x in cl) > limit:
                continue
            est = model.total * model.project(c)
            ok.append(c)
            q.append(w[c] * (np.abs(true[c] - est).sum() - math.sqrt(2 / math.pi) * sigma * true[c].size))
        c = ok[exp_mech(rng, q, eps, sens)]
        y = true[c] + rng.normal(0, sigma, true[c].shape)
        meas.append((c, y, sigma))
        used += 1 / (2 * sigma ** 2) + eps ** 2 / 8
        before = model.project(c)
        model = fit(sizes, meas, total, iters, warm=model)
        if not final and model.total * np.abs(model.project(c) - before).sum() <= math.sqrt(2 / math.pi) * sigma * y.size:
            sigma, eps = sigma / 2, eps * 2
        if final:
            break
    return sample(model, n, rng)


def workload_error(x, y, sizes, k):
    errs = []
    for s in itertools.combinations(range(len(sizes)), k):
        a, b = marginal(x, sizes, s), marginal(y, sizes, s)
        errs.append(0.5 * np.abs(a / a.sum() - b / b.sum()).sum())
    return float(np.mean(errs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--data', required=True)
    ap.add_argument('--domain', required=True)
    ap.add_argument('--mechanism', choices=['mst', 'aim'], default='mst')
    ap.add_argument('--epsilon', type=float, default=1.0)
    ap.add_argument('--delta', type=float, default=1e-9)
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--iters', type=int, default=1000)
    ap.add_argument('--out')
    ap.add_argument('--evaluate', help='only print the workload errors of this synthetic CSV (e.g. dpsolve synth\'s)')
    a = ap.parse_args()
    dom = json.load(open(a.domain))['domain']
    names, sizes = [d['name'] for d in dom], [d['size'] for d in dom]
    import csv
    with open(a.data) as f:
        r = csv.reader(f)
        head = next(r)
        cols = [head.index(nm) for nm in names]
        data = np.array([[int(row[c]) for c in cols] for row in r if row], dtype=np.int64)
    if a.evaluate:
        with open(a.evaluate) as f:
            r = csv.reader(f)
            head = next(r)
            cols = [head.index(nm) for nm in names]
            syn = np.array([[int(row[c]) for c in cols] for row in r if row], dtype=np.int64)
        print(json.dumps({'evaluate': a.evaluate, 'records': len(syn),
                          'err2': workload_error(data, syn, sizes, 2), 'err3': workload_error(data, syn, sizes, 3)}))
        return
    rho = cdp_rho(a.epsilon, a.delta)
    rng = np.random.default_rng(a.seed)
    t0 = time.process_time()
    if a.mechanism == 'mst':
        syn = mst(data, sizes, rho, rng, a.iters)
    else:
        syn = aim(data, sizes, rho, rng, a.iters, list(itertools.combinations(range(len(sizes)), 2)))
    cpu = time.process_time() - t0
    if a.out:
        np.savetxt(a.out, syn, fmt='%d', delimiter=',', header=','.join(names), comments='')
    print(json.dumps({'mechanism': a.mechanism, 'rho': rho, 'seed': a.seed, 'cpu_s': cpu,
                      'err2': workload_error(data, syn, sizes, 2), 'err3': workload_error(data, syn, sizes, 3)}))


if __name__ == '__main__':
    main()
