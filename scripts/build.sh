#!/usr/bin/env bash
# Builds the dpsolve command into bin/ (or $BIN_DIR):
#   bin/dpsolve         the default build: cgo, kernels from OpenBLAS/LAPACKE
#                       (needs libopenblas-dev and liblapacke-dev; see
#                       scripts/install-deps.sh)
#   bin/dpsolve-purego  with --purego (or PUREGO=1): pure Go, CGO_ENABLED=0,
#                       static, gonum's BLAS/LAPACK; runs anywhere
# and smoke-tests each binary with `dpsolve version`. The Dockerfile's builder
# stage and .ci/run both call this script, so CI proves the image's build steps.
#
# Usage: scripts/build.sh [--purego] [--no-cgo]
#   --purego  also build bin/dpsolve-purego
#   --no-cgo  skip the cgo build (only with --purego)
# Environment: BIN_DIR (default bin), VERSION (default: git describe, else 0.1.0-dev),
#   GOFLAGS and the usual Go variables are honoured.
set -euo pipefail
cd "$(dirname "$0")/.."

purego=${PUREGO:-0}
cgo=1
for arg in "$@"; do
	case "$arg" in
	--purego) purego=1 ;;
	--no-cgo) cgo=0 ;;
	-h | --help)
		sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "build.sh: unknown argument $arg (want --purego, --no-cgo)" >&2
		exit 2
		;;
	esac
done
if [ "$cgo" = 0 ] && [ "$purego" = 0 ]; then
	echo "build.sh: --no-cgo without --purego builds nothing" >&2
	exit 2
fi

bin=${BIN_DIR:-bin}
version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo 0.1.0-dev)}
ldflags="-s -w -X main.version=$version"
mkdir -p "$bin"

if [ "$cgo" = 1 ]; then
	echo "building $bin/dpsolve (cgo, OpenBLAS/LAPACKE), version $version" >&2
	CGO_ENABLED=1 go build -trimpath -ldflags "$ldflags" -o "$bin/dpsolve" ./cmd/dpsolve
	"$bin/dpsolve" version
fi
if [ "$purego" = 1 ]; then
	echo "building $bin/dpsolve-purego (pure Go, static), version $version" >&2
	CGO_ENABLED=0 go build -trimpath -tags purego -ldflags "$ldflags" -o "$bin/dpsolve-purego" ./cmd/dpsolve
	"$bin/dpsolve-purego" version
fi
