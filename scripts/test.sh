#!/usr/bin/env bash
# Runs dpsolve's whole test suite the way CI does: installs the system
# packages it needs (scripts/install-deps.sh), then vets and tests both
# builds — the default cgo build on OpenBLAS/LAPACKE and the pure-Go build
# (tag purego) — and checks that the module also builds with CGO_ENABLED=0.
# Fuzz targets run on their checked-in seed corpora as ordinary tests.
#
# Usage: scripts/test.sh [-short]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
short=()
[ "${1:-}" = "-short" ] && short=(-short)

echo "== go vet (cgo, purego)"
go vet ./...
go vet -tags purego ./...
echo "== go test (cgo: OpenBLAS/LAPACKE)"
go test -count=1 -timeout 20m "${short[@]}" ./...
echo "== go test (purego: gonum)"
go test -count=1 -timeout 20m -tags purego "${short[@]}" ./...
echo "== build with CGO_ENABLED=0"
CGO_ENABLED=0 go build ./...
echo "== all passed"
