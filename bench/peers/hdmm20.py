#!/usr/bin/python3
"""The 20 HDMM benchmark cases (examples/hdmm: 10 workloads × {pure, gaussian}):
dpsolve's plan (template best, and the marginals template re-scored here)
against hdmm_templates.py's best template over the seeds. CPU seconds of
both (user + system of the child process). Prints a Markdown table.

Usage: hdmm20.py --dpsolve BIN [--cases census-w1,...] [--seeds 0,1,2,3]
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
CASES = ["census-w1", "census-w2", "cps-w1", "cps-w2", "adultsmall-w1", "adultsmall-w2",
         "adultbig-w1", "adultbig-w2", "loans-w1", "loans-w2"]


def run(cmd):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=root).stdout
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return out, (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dpsolve", required=True)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--seeds", default="0,1,2,3")
    ap.add_argument("--privacy", default="pure,gaussian")
    args = ap.parse_args()
    print("| case | privacy | dpsolve (best) | template | CPU s | HDMM OPT_M | CPU s | HDMM OPT_kron | CPU s | ratio to HDMM best |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for case in args.cases.split(","):
        spec = os.path.join("examples", "hdmm", case + ".json")
        for priv in args.privacy.split(","):
            out, ours_cpu = run([args.dpsolve, "plan", "--spec", spec, "--privacy", priv, "--json", "--quiet"])
            ours = json.loads(out)
            if ours.get("marginals_family"):
                with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
                    f.write(out)
                rs, _ = run([sys.executable, os.path.join(here, "hdmm_templates.py"), spec, "--privacy", priv,
                             "--score-marginals", f.name])
                os.unlink(f.name)
                rescored = json.loads(rs.strip().splitlines()[-1])["rescored"]
                if abs(rescored - ours["objective"]) > 1e-8 * ours["objective"]:
                    print("rescore mismatch %s %s: %r vs %r" % (case, priv, rescored, ours["objective"]), file=sys.stderr)
                    return 1
            cmd = [sys.executable, os.path.join(here, "hdmm_templates.py"), spec, "--privacy", priv, "--seeds", args.seeds]
            if priv == "pure":
                cmd.append("--kron")
            pout, _ = run(cmd)
            peer = json.loads(pout.strip().splitlines()[-1])  # scipy's L-BFGS-B may print warnings first
            best = min(peer["opt_m"], peer.get("opt_kron", float("inf")))
            kr = "%.8g | %.2f" % (peer["opt_kron"], peer["opt_kron_cpu_s"]) if "opt_kron" in peer else "— | —"
            print("| %s | %s | %.8g | %s | %.2f | %.8g | %.2f | %s | %.6f |" % (
                case, priv, ours["objective"], ours["template"], ours_cpu, peer["opt_m"], peer["opt_m_cpu_s"], kr,
                ours["objective"] / best), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
