#!/usr/bin/python3
"""Writes the ten HDMM benchmark workloads (see README.md) as dpsolve specs.

Run from this directory: /usr/bin/python3 gen.py. Deterministic; no HDMM
code is used, only the workloads' definitions (sizes, blocks, which
products), restated in dpsolve's spec dialect.
"""
import itertools
import json
import math
import os

here = os.path.dirname(os.path.abspath(__file__))


def write(name, domain, workload):
    spec = {"domain": [{"name": n, "size": s} for n, s in domain], "workload": workload}
    tmp = os.path.join(here, name + ".json.tmp")
    with open(tmp, "w") as f:
        json.dump(spec, f, indent=1)
        f.write("\n")
    os.replace(tmp, os.path.join(here, name + ".json"))


def pairs(domain, blocks):
    """Every product of two attributes' blocks, the others summed over."""
    out = []
    for i, j in itertools.combinations(range(len(domain)), 2):
        out.append({"name": domain[i][0] + "_" + domain[j][0],
                    "product": {domain[i][0]: blocks[i], domain[j][0]: blocks[j]}})
    return out


def small(domain, blocks, limit):
    """Every product over an attribute subset whose cells number <= limit."""
    out = []
    for r in range(len(domain) + 1):
        for sub in itertools.combinations(range(len(domain)), r):
            if math.prod(domain[a][1] for a in sub) <= limit:
                out.append({"name": "_".join(domain[a][0] for a in sub) or "total",
                            "product": {domain[a][0]: blocks[a] for a in sub}})
    return out


# census: HDMM's SF1 person workload (33 Kronecker products over sex 2,
# hispanic 2, race 64 (6-bit flags), relationship 17, age 115; relationship
# is summed over in every product). W1 drops relationship from the domain;
# W2 appends state (51) with identity+total to every product.
def csv(name, rows, width):
    with open(os.path.join(here, name), "w") as f:
        f.write("# %s: %d queries over %d values (see gen.py)\n" % (name, len(rows), width))
        for r in rows:
            f.write(",".join("%g" % v for v in r) + "\n")
    return {"matrix": name}

def onehot(width, cols):
    return [1.0 if c in cols else 0.0 for c in range(width)]

# race, one race alone (codes 1, 2, 4, …, 32) and the rest (no race or two or more)
race1 = [onehot(64, {1 << i}) for i in range(6)]
race1.append([1.0 - sum(r[c] for r in race1) for c in range(64)])
# race, every combination (63 rows), then the number of races 1…6, then two or more
race2 = [onehot(64, {i}) for i in range(1, 64)]
for k in range(1, 7):
    race2.append(onehot(64, {i for i in range(1, 64) if bin(i).count("1") == k}))
race2.append(onehot(64, {i for i in range(1, 64) if bin(i).count("1") >= 2}))
R1 = csv("race1.csv", race1, 64)
R2 = csv("race2.csv", race2, 64)
WH = csv("white.csv", [onehot(64, {1})], 64)
HIS = csv("hispanic.csv", [[1, 0]], 2)
NOT = csv("not_hispanic.csv", [[0, 1]], 2)
ADULT = {"ranges": [[18, 114]]}
cuts = [0, 5, 10, 15, 18, 20, 21, 22, 25, 30, 35, 40, 45, 50, 55, 60, 62, 65, 67, 70, 75, 80, 85, 115]
AGE1 = {"ranges": [[cuts[i], cuts[i + 1] - 1] for i in range(len(cuts) - 1)]}
AGE3 = {"ranges": [[i, i] for i in range(100)] + [[100, 104], [105, 109], [110, 114]]}
I, IT = "identity", "identitytotal"
# (name, sex, hispanic, race, age); None = total
sf1 = [
    ("P1", None, None, None, None),
    ("P3a", None, None, R1, None), ("P3b", None, None, None, None),
    ("P4a", None, I, None, None), ("P4b", None, None, None, None),
    ("P5a", None, I, R1, None), ("P5b", None, IT, None, None),
    ("P8a", None, None, R2, None), ("P8b", None, None, None, None),
    ("P9a", None, I, None, None), ("P9b", None, NOT, R2, None), ("P9c", None, None, None, None),
    ("P10a", None, None, R2, ADULT), ("P10b", None, None, None, ADULT),
    ("P11a", None, I, None, ADULT), ("P11b", None, NOT, R2, ADULT), ("P11c", None, None, None, ADULT),
    ("P12a", I, None, None, AGE1), ("P12b", IT, None, None, None),
    ("P12_a", I, None, R1, AGE1), ("P12_b", IT, None, R1, None),
    ("P12_c", I, HIS, None, AGE1), ("P12_d", IT, HIS, None, None),
    ("P12_e", I, NOT, WH, AGE1), ("P12_f", IT, NOT, WH, None),
    ("PCT12a", I, None, None, AGE3), ("PCT12b", IT, None, None, None),
    ("PCT12_a", I, None, R1, AGE3), ("PCT12_b", IT, None, R1, None),
    ("PCT12_c", I, HIS, None, AGE3), ("PCT12_d", IT, HIS, None, None),
    ("PCT12_e", I, NOT, R1, AGE3), ("PCT12_f", IT, NOT, R1, None),
]
dom = [("sex", 2), ("hispanic", 2), ("race", 64), ("age", 115)]
w1 = []
for name, *blocks in sf1:
    w1.append({"name": name, "product": {a: b for (a, _), b in zip(dom, blocks) if b is not None}})
write("census-w1", dom, w1)
# sf1: HDMM's SF1_Persons itself, relationship (17) kept in the domain and
# summed over in every product (500,480 cells): the SF1 timing case.
write("sf1", dom[:3] + [("relationship", 17)] + dom[3:], w1)
w2 = [{"name": t["name"], "product": dict(t["product"], state=IT)} for t in w1]
write("census-w2", dom + [("state", 51)], w2)

# cps: income 50, age 100, marital 7, race 4, sex 2.
cps = [("income", 50), ("age", 100), ("marital", 7), ("race", 4), ("sex", 2)]
write("cps-w1", cps, [{"name": "ranges_by_groups", "product": {
    "income": "allrange", "age": "allrange", "marital": "identitytotal", "race": "identitytotal", "sex": "identitytotal"}}])
write("cps-w2", cps, pairs(cps, ["allrange", "allrange", "identity", "identity", "identity"]))

# adult (small): five attributes.
ad = [("a75", 75), ("a16", 16), ("a5", 5), ("a2", 2), ("a20", 20)]
write("adultsmall-w1", ad, [{"name": "identitytotal_all", "product": {n: "identitytotal" for n, _ in ad}}])
write("adultsmall-w2", ad, pairs(ad, ["identity"] * 5))

# adult (big): fourteen attributes.
sizes = (100, 100, 100, 99, 85, 42, 16, 15, 9, 7, 6, 5, 2, 2)
ab = [("a%d" % i, s) for i, s in enumerate(sizes)]
write("adultbig-w1", ab, [{"name": "upto3", "marginals": {"upto": 3}}])
write("adultbig-w2", ab, pairs(ab, ["prefix"] * 5 + ["identity"] * 9))

# loans: twelve attributes; products over every subset with <= 5000 cells.
lo = [("loan_amt", 101), ("int_rate", 101), ("annual_inc", 101), ("installment", 101), ("loan_term", 3),
      ("grade", 8), ("sub_grade", 36), ("home_ownership", 6), ("state", 51), ("settlement", 4),
      ("loan_status", 5), ("purpose", 15)]
write("loans-w1", lo, small(lo, ["identity"] * 12, 5000))
write("loans-w2", lo, small(lo, ["prefix"] * 4 + ["identity"] * 8, 5000))
