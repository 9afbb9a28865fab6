#!/usr/bin/env bash
# scripts/house/move.sh — issue #35's tree reorganisation by layer, as a
# re-runnable move: the lead runs it on main after merging the other
# branches (see scripts/house/README.md). It
#   1. moves the package directories of MOVES with git mv,
#   2. rewrites every import path and every path mention (Go, Markdown,
#      scripts/, Dockerfile, .ci/, examples/, bench/), the package clause and
#      qualified identifiers where a directory's last element changes, and
#      relative paths in Go string literals that a move broke, and domain's
#      error prefix ("workload" -> "domain"),
#   3. renames the types of RENAMES with gopls (type-aware),
#   4. installs the layer test, docs/architecture.md and the README's
#      packages table grouped by layer,
#   5. runs gofmt, go build and go vet (both builds).
# Running it again after it succeeded changes nothing. Packages it does not
# know are left where they are and printed as "not classified".
set -euo pipefail

MODULE=github.com/dpsolve/dpsolve

# Package directories, old → new (applied longest old path first; a path
# under an old directory follows it).
MOVES=(
	"mechanism/distributed/experiment bench/funcpert"
	"mechanism/accounting privacy/accounting"
	"mechanism/calibrate privacy/calibrate"
	"mechanism/ledger privacy/ledger"
	"mechanism/noise privacy/noise"
	"mechanism/workload model/workload"
	"mechanism/domain model/domain"
	"mechanism/kron kron"
	"mechanism/release pipeline/release"
	"mechanism/records pipeline/records"
	"mechanism/tables pipeline/tables"
	"mechanism/publish pipeline/publish"
	"internal/batch cmd/dpsolve/internal/batch"
	"internal/kronwork internal/testkit/kronwork"
	"internal/budgettest internal/testkit/budgettest"
)

# Test files that must move with a package they import (internal packages
# are importable only from beside them): file, new file, old package clause,
# new package clause.
FILEMOVES=(
	"progress/every_test.go cmd/dpsolve/internal/progresstest/every_test.go progress_test progresstest"
)

# Package names that change with the move (new directory, old name, new name).
PKGNAMES=(
	"bench/funcpert experiment funcpert"
)

# Pure type renames, one name per role (directory after the move, old, new).
RENAMES=(
	"mechanism/plan Strategy Plan"            # a plan: a template's measurement strategy
	"pipeline/tables Strategy Measurement"    # what a release measures
	"mechanism/compare Strategy Candidate"    # a row registered for comparison
	"mechanism/strategy Strategy Matrix"      # a baseline's measurement matrix A
	"pipeline/release PostProcess Cleanup"    # clamp/round of one histogram
	"pipeline/tables PostProcess Publishable" # non-negative integer tables
	"mechanism/plan TermError TermUnitError"  # a term's error per unit noise
)

# Every package directory of the tree after the move; anything else is
# reported as not classified (and left alone).
CLASSIFIED=(
	status progress internal/inputerr internal/ctxwait internal/matio internal/resources
	internal/reference internal/expsum internal/symdense native blas cg kron newton
	model/domain model/workload
	privacy/calibrate privacy/noise privacy/ledger privacy/accounting
	mechanism/strategy mechanism/lrm mechanism/plan mechanism/plan/plantest mechanism/plan/planner mechanism/marginals
	mechanism/mf mechanism/functional mechanism/functional/basis mechanism/functional/project
	mechanism/distributed mechanism/compare mechanism/sdp
	pipeline/release pipeline/records pipeline/tables pipeline/publish
	mechanism/synth internal/atomicdir
	bench bench/funcpert cmd/dpsolve cmd/dpsolve/internal/batch cmd/dpsolve/internal/progresstest
	internal/testkit internal/testkit/kronwork internal/testkit/budgettest
	internal/readme internal/vocabulary internal/layers
)

GOPLS_VERSION=v0.21.0 # the newest gopls that builds with Go 1.26

die() { echo "move.sh: $*" >&2; exit 1; }
# gofiles lists the Go files of the work tree (tracked or not, not ignored).
gofiles() { git ls-files --cached --others --exclude-standard '*.go' | while read -r f; do [ -f "$f" ] && echo "$f"; done; }
trap 'echo "move.sh: failed at line $LINENO" >&2' ERR

HERE=$(cd "$(dirname "$0")" && pwd)
cd "$(git -C "$HERE" rev-parse --show-toplevel)"
[ "$(go list -m)" = "$MODULE" ] || die "not the $MODULE module"
command -v python3 >/dev/null || die "python3 is needed for the rewrites"
if ! git diff --quiet || ! git diff --cached --quiet; then
	echo "move.sh: note: the work tree has uncommitted changes (fine on a re-run; they are kept)" >&2
fi

# --- 1. moves -----------------------------------------------------------
echo "== moving package directories"
for m in "${MOVES[@]}"; do
	set -- $m
	old=$1 new=$2
	if [ -d "$old" ] && ls "$old"/*.go >/dev/null 2>&1; then
		if ls "$new"/*.go >/dev/null 2>&1; then
			die "both $old and $new hold Go files: resolve by hand"
		fi
		mkdir -p "$(dirname "$new")"
		git mv "$old" "$new"
		rmdir -p "$(dirname "$old")" 2>/dev/null || true
		echo "   $old -> $new"
	elif ls "$new"/*.go >/dev/null 2>&1; then
		echo "   $new (already moved)"
	else
		die "neither $old nor $new holds Go files"
	fi
done

for m in "${FILEMOVES[@]}"; do
	set -- $m
	if [ -f "$1" ]; then
		mkdir -p "$(dirname "$2")"
		git mv "$1" "$2"
		sed -i "s/^package $3\$/package $4/" "$2"
		echo "   $1 -> $2"
	elif [ -f "$2" ]; then
		echo "   $2 (already moved)"
	else
		die "neither $1 nor $2 exists"
	fi
done
mkdir -p cmd/dpsolve/internal/progresstest
cp "$HERE/files/progresstest_doc.go.txt" cmd/dpsolve/internal/progresstest/doc.go

# --- 2. rewrites --------------------------------------------------------
echo "== rewriting import paths, path mentions and package names"
printf '%s\n' "${MOVES[@]}" >"${TMPDIR:-/tmp}/house-moves.$$"
printf '%s\n' "${PKGNAMES[@]}" >"${TMPDIR:-/tmp}/house-pkgnames.$$"
python3 - "$MODULE" "${TMPDIR:-/tmp}/house-moves.$$" "${TMPDIR:-/tmp}/house-pkgnames.$$" <<'PY'
import os, re, subprocess, sys
module, movesf, namesf = sys.argv[1:4]
moves = [l.split() for l in open(movesf) if l.strip()]
moves.sort(key=lambda m: -len(m[0]))  # longest first
names = [l.split() for l in open(namesf) if l.strip()]
files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                       capture_output=True, text=True, check=True).stdout.split("\n")
def wanted(f):
    if not f or not os.path.isfile(f) or f.startswith("scripts/house/"):
        return False
    return (f.endswith(".go") or f.endswith(".md") or f.startswith(("scripts/", ".ci/", "examples/", "bench/"))
            or f == "Dockerfile")
mod_rules = [(re.compile(re.escape(module + "/" + o) + r"(?![\w.-])"), module + "/" + n) for o, n in moves]
# a plain mention: not inside a longer path (so cmd/dpsolve/internal/batch is
# not internal/batch again), optionally after ./ or ../ prefixes.
txt_rules = [(re.compile(r"(?<![\w./-])((?:\.\./)+|\./)?" + re.escape(o) + r"(?![\w-])"), n) for o, n in moves]
def old_of(d):  # the directory d had before the moves (d itself if unmoved)
    for o, n in moves:
        if d == n or d.startswith(n + "/"):
            return o + d[len(n):]
    return d
def new_of(p):
    for o, n in moves:
        if p == o or p.startswith(o + "/"):
            return n + p[len(o):]
    return p
changed = 0
for f in filter(wanted, files):
    try:
        s = open(f, encoding="utf-8").read()
    except UnicodeDecodeError:
        continue
    t = s
    for rx, n in mod_rules:
        t = rx.sub(n, t)
    for rx, n in txt_rules:
        t = rx.sub(lambda m: (m.group(1) or "") + n, t)
    if f.endswith(".go"):
        d = os.path.dirname(f)
        for nd, on, nn in names:
            if d == nd:  # the package clause of the renamed package
                t = re.sub(r"(?m)^package " + on + r"(_test)?$", lambda m: "package " + nn + (m.group(1) or ""), t)
            if re.search(r'(?m)^\s*(import\s+)?"' + re.escape(module + "/" + nd) + '"', t):
                t = re.sub(r"(?<![\w.])" + on + r"\.(?=[A-Z])", nn + ".", t)  # qualified identifiers
        # relative paths in string literals that pointed at a moved directory
        def fix(m):
            rel = m.group(1)
            if os.path.exists(os.path.normpath(os.path.join(d, rel))):
                return m.group(0)
            target = new_of(os.path.normpath(os.path.join(old_of(d), rel)))
            if not os.path.exists(target):
                return m.group(0)
            return '"' + os.path.relpath(target, d) + '"'
        t = re.sub(r'"((?:\.\./)+[\w./-]*)"', fix, t)
    if t != s:
        open(f, "w", encoding="utf-8").write(t)
        changed += 1
print("   %d files rewritten" % changed)
PY
rm -f "${TMPDIR:-/tmp}/house-moves.$$" "${TMPDIR:-/tmp}/house-pkgnames.$$"
# domain's bad-input errors name their package ("domain: invalid input: …",
# they said "workload"); spec.go's stripPkg then strips either prefix from
# a nested message, so messages still read once.
echo "== domain's error prefix"
for f in model/domain/*.go; do
	case $f in *_test.go) continue ;; esac
	sed -i 's/inputerr\.Errorf("workload",/inputerr.Errorf("domain",/' "$f"
done
sed -i 's/\[\]string{"workload: invalid input: ", "workload: "}/[]string{"domain: invalid input: ", "domain: ", "workload: invalid input: ", "workload: "}/' model/domain/spec.go
sed -i 's|^// stripPkg removes a leading "workload: invalid input: " so nested messages$|// stripPkg removes a leading "domain: invalid input: " (or workload'"'"'s) so nested messages|' model/domain/spec.go
sed -i 's|^// Errors about bad input wrap ErrInput and read "workload: invalid input:$|// Errors about bad input wrap ErrInput and read "domain: invalid input:|' model/domain/doc.go
echo "   $(grep -c 'Errorf("domain"' model/domain/*.go | awk -F: '{s+=$2} END {print s}') messages say domain, $(grep -c 'Errorf("workload"' model/domain/*.go | awk -F: '{s+=$2} END {print s}') workload"
gofmt -l -w $(gofiles) >/dev/null
go build ./... || die "the build fails after the moves (before the renames)"

# --- 3. type renames ----------------------------------------------------
echo "== renaming types (gopls rename)"
if command -v gopls >/dev/null; then GOPLS=(gopls); else GOPLS=(go run "golang.org/x/tools/gopls@$GOPLS_VERSION"); fi
for r in "${RENAMES[@]}"; do
	set -- $r
	dir=$1 old=$2 new=$3
	decl=$(grep -n "^type $old\b" "$dir"/*.go 2>/dev/null | grep -v '_test.go:' | head -1 || true)
	if [ -z "$decl" ]; then
		if grep -q "^type $new\b" "$dir"/*.go 2>/dev/null; then
			echo "   $dir.$new (already renamed)"
			continue
		fi
		die "$dir declares neither $old nor $new"
	fi
	file=${decl%%:*}
	line=$(echo "$decl" | cut -d: -f2)
	"${GOPLS[@]}" rename -w "$file:$line:6" "$new" >/dev/null
	echo "   $dir: $old -> $new"
done

# The same renames where gopls does not look: qualified mentions
# (pkg.Old) in Markdown and in Go comments.
printf '%s\n' "${RENAMES[@]}" | sed 's/ *#.*//' >"${TMPDIR:-/tmp}/house-renames.$$"
python3 - "${TMPDIR:-/tmp}/house-renames.$$" <<'PY'
import os, re, subprocess, sys
rules = []
for l in open(sys.argv[1]):
    if l.strip():
        d, o, n = l.split()
        rules.append((re.compile(r"(?<![\w.])" + os.path.basename(d) + r"\." + o + r"\b"), os.path.basename(d) + "." + n))
files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                       capture_output=True, text=True, check=True).stdout.split("\n")
changed = 0
for f in files:
    if not os.path.isfile(f) or f.startswith("scripts/house/") or not (f.endswith(".md") or f.endswith(".go")):
        continue
    s = open(f, encoding="utf-8").read()
    if f.endswith(".md"):
        t = s
        for rx, n in rules:
            t = rx.sub(n, t)
    else:  # only the comment part of each line
        out = []
        for line in s.split("\n"):
            k = line.find("//")
            if k >= 0:
                c = line[k:]
                for rx, n in rules:
                    c = rx.sub(n, c)
                line = line[:k] + c
            out.append(line)
        t = "\n".join(out)
    if t != s:
        open(f, "w", encoding="utf-8").write(t)
        changed += 1
print("   %d files' docs and comments follow the renames" % changed)
PY
rm -f "${TMPDIR:-/tmp}/house-renames.$$"

# --- 4. layer test, architecture page, README table ---------------------
echo "== installing the layer test, docs/architecture.md and the README's packages table"
mkdir -p internal/layers
cp "$HERE/files/layers_doc.go.txt" internal/layers/doc.go
cp "$HERE/files/layers_test.go.txt" internal/layers/layers_test.go
cp "$HERE/files/architecture.md" docs/architecture.md
python3 "$HERE/readme_table.py" README.md "$HERE/files/layers.txt"

# --- 5. format, build, vet ----------------------------------------------
echo "== gofmt, build, vet (default and purego)"
bad=$(gofmt -l $(gofiles))
[ -z "$bad" ] || die "gofmt: $bad"
go build ./... && go vet ./...
go build -tags purego ./... && go vet -tags purego ./...

echo "== packages"
for p in $(go list -f '{{.Dir}}' ./... | sed "s|^$PWD/||"); do
	known=
	for c in "${CLASSIFIED[@]}"; do [ "$p" = "$c" ] && known=1 && break; done
	[ -n "$known" ] || echo "   not classified: $p (left where it is; place it in internal/layers and docs/architecture.md)"
done
echo "move.sh: done. Check: scripts/house/README.md"
