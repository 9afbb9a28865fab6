# dpsolve in a container: a Go builder with OpenBLAS and LAPACKE, and a slim
# runtime holding only the shared libraries and the binary.
#
#   docker build -t dpsolve .
#   docker run --rm dpsolve version
#   docker run --rm dpsolve solve --workload prefix --n 1024 --json
#   docker run --rm -v "$PWD/results:/out" dpsolve \
#       bench --workload prefix --n 256,512 --repeat 3 --md /out/report.md --csv /out/runs.csv
#
# Build arguments:
#   VERSION=…      version string stamped into the binary (default 0.1.0-dev)
#   WITH_PEERS=1   also install python3-numpy/python3-scipy in the runtime so
#                  that `dpsolve bench --peers` can run the Python peers
#   OFFLINE=1      build without the Go module proxy: the context must hold
#                  vendor/ (run `go mod vendor` first); modules come from it
#                  (-mod=vendor) and nothing is fetched but Debian packages
#   GO_VERSION=…   the golang:<GO_VERSION>-bookworm builder (default 1.26)
#
# Offline / air-gapped (no module proxy; base images and a Debian mirror
# available locally):
#   go mod vendor && docker build --build-arg OFFLINE=1 -t dpsolve . ; rm -rf vendor
# scripts/docker-check.sh does this with podman in a temporary copy, making
# the base images locally when no registry is reachable, and smoke-tests the
# image; .ci/run calls it.
#
# Debian's OpenBLAS does not recognize every recent CPU and then runs generic
# kernels; pass e.g. `-e OPENBLAS_CORETYPE=SkylakeX` to `docker run` on an
# AVX-512 machine (`dpsolve version` prints the core in use).
#
# The build steps live in scripts/install-deps.sh and scripts/build.sh, which
# .ci/run also calls, so CI proves them without a Docker engine.

ARG GO_VERSION=1.26

FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY scripts/install-deps.sh scripts/install-deps.sh
RUN scripts/install-deps.sh
COPY go.mod go.sum ./
# Online: the modules in their own layer, cached until go.mod/go.sum change.
ARG OFFLINE=0
RUN if [ "$OFFLINE" = 1 ]; then echo "OFFLINE=1: modules come from vendor/"; else go mod download; fi
COPY . .
ARG VERSION=0.1.0-dev
# The build cache is dropped: it would only bloat this stage's layer.
RUN set -eu; \
	if [ "$OFFLINE" = 1 ]; then \
		if [ ! -f vendor/modules.txt ]; then \
			echo "OFFLINE=1 needs vendor/ in the build context: run go mod vendor first" >&2; exit 1; \
		fi; \
		export GOFLAGS=-mod=vendor GOPROXY=off; \
	fi; \
	VERSION="$VERSION" BIN_DIR=/out scripts/build.sh; \
	go clean -cache

FROM debian:bookworm-slim AS runtime
ARG WITH_PEERS=0
# Only the runtime libraries: OpenBLAS (pthread build; it provides libblas.so.3
# and liblapack.so.3) and LAPACKE, without recommends; apt's caches removed
# even on a base that does not clean them itself.
RUN set -eux; \
	apt-get update; \
	apt-get install -y --no-install-recommends libopenblas0-pthread liblapacke; \
	if [ "$WITH_PEERS" = 1 ]; then \
		apt-get install -y --no-install-recommends python3 python3-numpy python3-scipy; \
	fi; \
	apt-get clean; \
	rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/log/apt/* /var/log/dpkg.log; \
	useradd --system --uid 10001 --user-group --create-home --home-dir /home/dpsolve --shell /usr/sbin/nologin dpsolve
COPY --from=build /out/dpsolve /usr/local/bin/dpsolve
# fails the build if a shared library is missing
RUN dpsolve version
USER dpsolve
WORKDIR /home/dpsolve
ENTRYPOINT ["dpsolve"]
CMD ["help"]
