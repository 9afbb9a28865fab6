# syntax=docker/dockerfile:1
#
# dpsolve in a container: a Go builder with OpenBLAS and LAPACKE, and a slim
# runtime holding only the shared libraries and the binary.
#
#   docker build -t dpsolve .
#   docker run --rm dpsolve version
#   docker run --rm dpsolve solve --workload prefix --n 1024 --json
#   docker run --rm dpsolve bench --workload prefix --n 256,512 --repeat 3
#
# Build arguments:
#   VERSION=…      version string stamped into the binary (default 0.1.0-dev)
#   WITH_PEERS=1   also install python3-numpy/python3-scipy in the runtime so
#                  that `dpsolve bench --peers` can run the Python peers
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
RUN go mod download
COPY . .
ARG VERSION=0.1.0-dev
RUN VERSION="$VERSION" BIN_DIR=/out scripts/build.sh

FROM debian:bookworm-slim AS runtime
ARG WITH_PEERS=0
RUN set -eux; \
	apt-get update; \
	apt-get install -y --no-install-recommends libopenblas0-pthread liblapacke; \
	if [ "$WITH_PEERS" = 1 ]; then \
		apt-get install -y --no-install-recommends python3 python3-numpy python3-scipy; \
	fi; \
	rm -rf /var/lib/apt/lists/*; \
	useradd --system --uid 10001 --user-group --create-home --home-dir /home/dpsolve --shell /usr/sbin/nologin dpsolve
COPY --from=build /out/dpsolve /usr/local/bin/dpsolve
# fails the build if a shared library is missing
RUN dpsolve version
USER dpsolve
WORKDIR /home/dpsolve
ENTRYPOINT ["dpsolve"]
CMD ["help"]
