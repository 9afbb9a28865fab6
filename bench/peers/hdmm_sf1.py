#!/usr/bin/python3
"""SF1 pure-ε planning time: dpsolve against HDMM's own OPT_kron.

dpsolve `plan --template kron --privacy pure` and `plan --privacy pure`
(template best) on examples/hdmm/sf1.json, against HDMM's KronPIdentity
(p = max(1, n // 16)) run by hdmm_own.py from a user-supplied HDMM checkout:
one seed (one optimization), and mechanism.HDMM's default of 25 restarts.
Each configuration --runs times (HDMM: seeds 0, 1, …). CPU seconds: user +
system; dpsolve's the whole process, HDMM's only its optimization (not the
import or the workload's construction). Prints a Markdown table.

Usage: hdmm_sf1.py --dpsolve BIN --hdmm-src DIR [--runs 3] [--restarts 25]
"""
import argparse
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from hdmm20 import run  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dpsolve", required=True)
    ap.add_argument("--hdmm-src", required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--restarts", type=int, default=25)
    args = ap.parse_args()
    spec = os.path.join("examples", "hdmm", "sf1.json")
    print("| planner | objective (each run) | CPU s (each run) |")
    print("|---|---|---|")
    for label, extra in (("dpsolve `plan --template kron --privacy pure`", ["--template", "kron"]),
                         ("dpsolve `plan --privacy pure` (best)", [])):
        objs, cpus = [], []
        for _ in range(args.runs):
            out, c = run([args.dpsolve, "plan", "--spec", spec, "--privacy", "pure", "--json", "--quiet",
                          "--threads", "1"] + extra)
            js = json.loads(out)
            objs.append("%.8g (%s)" % (js["objective"], js["template"]))
            cpus.append("%.2f" % c)
        print("| %s | %s | %s |" % (label, ", ".join(objs), ", ".join(cpus)), flush=True)
    for restarts in (1, args.restarts):
        objs, cpus = [], []
        for seed in range(args.runs):
            out, _ = run([sys.executable, os.path.join(here, "hdmm_own.py"), "sf1", "--hdmm-src",
                          os.path.abspath(args.hdmm_src), "--privacy", "pure", "--seeds", str(seed),
                          "--templates", "opt_kron", "--restarts", str(restarts)])
            cell = json.loads([ln for ln in out.strip().splitlines() if ln.startswith("{")][-1])["opt_kron"]
            objs.append("%.8g" % cell["best"])
            cpus.append("%.2f" % cell["cpu_s"])
        print("| HDMM KronPIdentity, %d restart%s (seeds 0–%d) | %s | %s |" % (
            restarts, "" if restarts == 1 else "s", args.runs - 1, ", ".join(objs), ", ".join(cpus)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
