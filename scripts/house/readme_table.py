#!/usr/bin/env python3
"""Rewrites README.md's packages table (section "## Library") as one table
per layer, in the order of layers.txt; re-runnable. Each row keeps the text
the README already has for the package; packages the README lists but
layers.txt does not are kept in a last group and reported."""
import re, sys

readme, layersf = sys.argv[1:3]
md = open(readme, encoding="utf-8").read()
START_OLD = "Packages, one job each:\n"
START = "Packages, one job each, by layer from the bottom up"
END = "\nEvery package has runnable examples"
i = md.find(START)
if i < 0:
    i = md.find(START_OLD)
j = md.find(END, i)
if i < 0 or j < 0:
    sys.exit("readme_table.py: packages table not found in " + readme)
block = md[i:j]
rows = {}
for l in block.split("\n"):
    m = re.match(r"^\| *`([^`|]+)` *\| *(.*?) *\|$", l)
    if m:
        rows[m.group(1)] = m.group(2)

layers, placed = [], set()
for l in open(layersf, encoding="utf-8"):
    l = l.rstrip("\n")
    if not l or l.startswith("#"):
        continue
    if l.startswith("== "):
        title, intro = [x.strip() for x in l[3:].split("|", 1)]
        layers.append((title, intro, []))
        continue
    path, _, text = [x.strip() for x in l.partition("|")]
    placed.add(path)
    desc = rows.get(path) or text
    if not desc:
        print("readme_table.py: no description for %s" % path, file=sys.stderr)
        desc = "(to be described)"
    layers[-1][2].append((path, desc))
rest = [(p, d) for p, d in rows.items() if p not in placed]
if rest:
    layers.append(("Not yet placed in a layer", "listed by the README but not by scripts/house/files/layers.txt", rest))
    for p, _ in rest:
        print("readme_table.py: not classified: %s (kept in the last group)" % p, file=sys.stderr)

out = [START + " (a package imports only from its own layer and the ones above it here; "
       "[docs/architecture.md](docs/architecture.md) describes the layers, the data flow and a reading order):", ""]
for title, intro, pk in layers:
    out += ["**%s** — %s." % (title, intro), "", "| package | what it does |", "|---|---|"]
    out += ["| `%s` | %s |" % (p, d) for p, d in pk]
    out.append("")
md = md[:i] + "\n".join(out) + md[j:]

doc = "- [Architecture: the layers, what each package owns, data flow, reading order](docs/architecture.md)\n"
if "](docs/architecture.md)" not in md.split("\n## Documentation\n", 1)[1].split("\n## ", 1)[0]:
    k = md.index("## Documentation\n")
    k = md.index("\n- ", k) + 1
    md = md[:k] + doc + md[k:]
open(readme, "w", encoding="utf-8").write(md)
