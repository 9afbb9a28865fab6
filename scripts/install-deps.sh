#!/usr/bin/env bash
# Installs the system packages dpsolve needs to build, test and benchmark on
# Debian: OpenBLAS and LAPACKE for the cgo backend, CSDP for the SDP
# cross-check, and numpy/scipy for the optional benchmark peers.
# Used by .ci/run and the Dockerfile's builder stage, so CI proves the steps.
set -euo pipefail
pkgs=(gcc libc6-dev pkg-config libopenblas-dev liblapacke-dev coinor-csdp python3-numpy python3-scipy)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	SUDO=""
	[ "$(id -u)" -ne 0 ] && SUDO=sudo
	echo "install-deps: installing ${missing[*]}" >&2
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
