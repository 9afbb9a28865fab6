#!/usr/bin/env bash
# Builds the Docker image offline with podman and smoke-tests it; .ci/run
# calls it on every CI run.
#
#  1. Installs podman and debootstrap with apt-get if missing (skips, exit 0,
#     with a SKIP line only where podman cannot be installed).
#  2. Base images: uses debian:bookworm-slim and golang:<GO_VERSION>-bookworm
#     if present in podman's storage or pullable; otherwise builds local
#     stand-ins under those names — a debootstrap --variant=minbase bookworm
#     from the host's Debian mirror (/etc/apt/sources.list*), trimmed like the
#     official slim image, and that base plus this machine's Go toolchain
#     (go env GOROOT). The debootstrap tarball is cached in $CACHE_DIR.
#  3. Copies the working tree (tracked and untracked, not ignored files) into
#     a temporary build context, runs `go mod vendor` there (vendor/ is never
#     written into the repository) and builds the image with
#     --build-arg OFFLINE=1 (no module proxy needed inside the build).
#  4. Smoke-tests the image's binary as the image's user (uid 10001): with
#     `podman run` where containers can run, else through `podman image
#     mount` + chroot --userspec (with /proc, /dev, a tmpfs /tmp and a host
#     directory at /mnt standing in for `docker run -v DIR:/mnt`):
#       - `dpsolve version` reports the openblas backend and its core;
#       - `dpsolve solve --workload prefix --n 512 --json` is certified
#         (status converged, gap <= 1e-8);
#       - `dpsolve bench --workload prefix --n 128 --repeat 1` runs and writes
#         its Markdown/CSV report into the mounted directory, the files being
#         owned by uid 10001 (the image has no plotting: cmd/dpsolve-plot
#         draws the figures from a --json report outside it);
#     and prints the image size and build time. With WITH_PEERS=1 it then
#     also builds the WITH_PEERS=1 variant ($IMAGE-peers; only the runtime
#     stage is rebuilt) and runs the same tests, the bench with --peers.
#
# Usage: scripts/docker-check.sh        (as root, or with passwordless sudo)
# Environment:
#   WITH_PEERS=1      also build and test the image with the Python peers
#   IMAGE             tag of the image built (default localhost/dpsolve:check)
#   CACHE_DIR         debootstrap cache (default /var/cache/dpsolve-docker)
#   DEBIAN_MIRROR     Debian mirror for debootstrap (default: from apt config)
#   PULL=0            never try to pull the base images (default: try, 30 s)
#   REFRESH_BASE=1    rebuild the local base images even if present
#   ISOLATION         podman build --isolation (default chroot)
# Exit status: 0 passed or skipped, 1 a check failed.
set -Eeuo pipefail
cd "$(dirname "$0")/.."

WITH_PEERS=${WITH_PEERS:-0}
IMAGE=${IMAGE:-localhost/dpsolve:check}
CACHE_DIR=${CACHE_DIR:-/var/cache/dpsolve-docker}
PULL=${PULL:-1}
REFRESH_BASE=${REFRESH_BASE:-0}
ISOLATION=${ISOLATION:-chroot}
SMOKE_TIMEOUT=${SMOKE_TIMEOUT:-600}
# The suite the base images are made from: the Dockerfile's bookworm.
SUITE=bookworm
GO_VERSION=$(sed -n 's/^ARG GO_VERSION=//p' Dockerfile | head -1)
BASE_IMAGE=docker.io/library/debian:$SUITE-slim
BUILDER_IMAGE=docker.io/library/golang:$GO_VERSION-$SUITE
LOCAL_LABEL=org.dpsolve.local-base

t_start=$(date +%s)
log() { echo "docker-check: $*"; }
fail() {
	echo "docker-check: FAIL: $*" >&2
	exit 1
}
skip() {
	echo "docker-check: SKIP: $*" >&2
	exit 0
}
elapsed() { echo $(($(date +%s) - $1)); }
trap 'echo "docker-check: FAIL: unexpected error (status $?) at line $LINENO" >&2' ERR

# Root is needed for podman image mount, chroot and the local bases.
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
		exec sudo -n --preserve-env=WITH_PEERS,IMAGE,CACHE_DIR,DEBIAN_MIRROR,PULL,REFRESH_BASE,ISOLATION,SMOKE_TIMEOUT,PATH "$0" "$@"
	fi
	skip "needs root (or passwordless sudo) for podman image mount and chroot"
fi

apt_install() {
	command -v apt-get >/dev/null || return 1
	log "installing $*"
	{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@"; } >/dev/null
}

# --- 1. podman --------------------------------------------------------------
if ! command -v podman >/dev/null; then
	apt_install podman uidmap fuse-overlayfs ||
		skip "podman is not installed and could not be installed with apt-get here; the image was not built"
	command -v podman >/dev/null || skip "podman could not be installed; the image was not built"
fi
log "$(podman --version), build isolation $ISOLATION"

# --- 2. base images -----------------------------------------------------------
image_exists() { podman image exists "$1"; }
is_local() { [ "$(podman image inspect --format "{{index .Labels \"$LOCAL_LABEL\"}}" "$1" 2>/dev/null)" = 1 ]; }
try_pull() {
	[ "$PULL" = 1 ] || return 1
	timeout 30 podman pull -q "$1" >/dev/null 2>&1
}

# The Debian mirror apt uses here (one-line or deb822 sources), not the
# security archive; deb.debian.org if none is configured.
debian_mirror() {
	if [ -n "${DEBIAN_MIRROR:-}" ]; then
		echo "$DEBIAN_MIRROR"
		return
	fi
	local m
	m=$({
		cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
			awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^https?:\/\//) { print $i; break } }'
		cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
			awk 'BEGIN { RS = "" } /(^|\n)Types:[^\n]*deb([ \n]|$)/ && /(^|\n)Suites:/ {
				n = split($0, l, "\n"); for (i = 1; i <= n; i++) if (l[i] ~ /^URIs:/) { split(l[i], u, " "); print u[2] } }'
	} | grep -v -e security -e '^$' | grep -i -e debian | head -1) || true
	echo "${m:-http://deb.debian.org/debian}"
}

security_mirror() {
	local m
	m=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
		grep -v '^[[:space:]]*#' | grep -o 'https\?://[^ ]*debian-security[^ ]*' | head -1) || true
	echo "${m:-http://deb.debian.org/debian-security}"
}

# Makes the debootstrap tarball (cached for 30 days) and imports it as
# debian:bookworm-slim. Trimmed the way the official slim image is: no
# documentation, man pages or locales, no apt caches, and apt configured to
# keep none.
make_local_base() {
	local mirror tarball rootfs t
	t=$(date +%s)
	mirror=$(debian_mirror)
	tarball=""
	if mkdir -p "$CACHE_DIR" 2>/dev/null && [ -w "$CACHE_DIR" ]; then
		tarball=$CACHE_DIR/debian-$SUITE-minbase.tar
	fi
	if [ -n "$tarball" ] && [ -s "$tarball" ] && [ "$REFRESH_BASE" != 1 ] &&
		[ -n "$(find "$tarball" -mtime -30)" ]; then
		log "local base: cached debootstrap $tarball"
	else
		command -v debootstrap >/dev/null || apt_install debootstrap || fail "debootstrap is missing and could not be installed"
		rootfs=$(mktemp -d /tmp/dpsolve-rootfs.XXXXXX)
		log "local base: debootstrap --variant=minbase $SUITE from $mirror (a few minutes)"
		debootstrap --variant=minbase "$SUITE" "$rootfs" "$mirror" >"$rootfs.log" 2>&1 ||
			{
				tail -20 "$rootfs.log" >&2
				rm -rf "$rootfs" "$rootfs.log"
				fail "debootstrap failed"
			}
		rm -f "$rootfs.log"
		rm -f "$rootfs/etc/apt/sources.list"
		cat >"$rootfs/etc/apt/sources.list.d/debian.sources" <<-EOF
			Types: deb
			URIs: $mirror
			Suites: $SUITE $SUITE-updates
			Components: main
			Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

			Types: deb
			URIs: $(security_mirror)
			Suites: $SUITE-security
			Components: main
			Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
		EOF
		cat >"$rootfs/etc/dpkg/dpkg.cfg.d/docker" <<-'EOF'
			# slim image: no documentation, man pages or translations
			path-exclude /usr/share/doc/*
			path-include /usr/share/doc/*/copyright
			path-exclude /usr/share/man/*
			path-exclude /usr/share/groff/*
			path-exclude /usr/share/info/*
			path-exclude /usr/share/lintian/*
			path-exclude /usr/share/linda/*
			path-exclude /usr/share/locale/*
		EOF
		cat >"$rootfs/etc/apt/apt.conf.d/docker-clean" <<-'EOF'
			DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
			APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
			Dir::Cache::pkgcache ""; Dir::Cache::srcpkgcache "";
		EOF
		echo 'Acquire::Languages "none";' >"$rootfs/etc/apt/apt.conf.d/docker-no-languages"
		find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
		find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete
		rm -rf "$rootfs"/usr/share/{man,groff,info,lintian,linda,locale}/* \
			"$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/cache/apt/*.bin \
			"$rootfs"/var/lib/apt/lists/* "$rootfs"/var/log/*.log "$rootfs"/var/log/apt/*
		if [ -z "$tarball" ]; then tarball=$(mktemp /tmp/dpsolve-base.XXXXXX.tar); fi
		tar --numeric-owner -C "$rootfs" -cf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
		rm -rf "$rootfs"
	fi
	podman import -q --change 'CMD ["bash"]' --change "LABEL $LOCAL_LABEL=1" \
		--message "local stand-in for $BASE_IMAGE: debootstrap --variant=minbase $SUITE" \
		"$tarball" "$BASE_IMAGE" >/dev/null || fail "podman import of the local base failed"
	case "$tarball" in "$CACHE_DIR"/*) ;; *) rm -f "$tarball" ;; esac
	log "local base: $BASE_IMAGE ready in $(elapsed "$t") s"
}

# The local builder: the base plus what the official golang image adds
# (gcc, libc6-dev, make, pkg-config, ca-certificates, git) and this
# machine's Go toolchain, whose GOROOT is the build context.
make_local_builder() {
	local goroot cf t
	t=$(date +%s)
	command -v go >/dev/null || fail "no Go toolchain here to make the local $BUILDER_IMAGE"
	goroot=$(go env GOROOT)
	case "$(go env GOVERSION)" in
	go"$GO_VERSION" | go"$GO_VERSION".*) ;;
	*) fail "local Go is $(go env GOVERSION), the Dockerfile wants $GO_VERSION" ;;
	esac
	cf=$(mktemp /tmp/dpsolve-builder.XXXXXX.Containerfile)
	cat >"$cf" <<-EOF
		FROM $BASE_IMAGE
		RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \\
		        ca-certificates gcc git libc6-dev make pkg-config && rm -rf /var/lib/apt/lists/*
		COPY . /usr/local/go
		ENV GOLANG_VERSION=$(go env GOVERSION | sed 's/^go//') GOTOOLCHAIN=local GOPATH=/go \\
		    PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
		RUN mkdir -p /go/src /go/bin && chmod -R 1777 /go && go version
		WORKDIR /go
		LABEL $LOCAL_LABEL=1
	EOF
	log "local builder: $BASE_IMAGE + apt build tools + Go from $goroot"
	podman build -q --isolation="$ISOLATION" --pull=never -f "$cf" -t "$BUILDER_IMAGE" "$goroot" >/dev/null ||
		{
			rm -f "$cf"
			fail "building the local $BUILDER_IMAGE failed"
		}
	rm -f "$cf"
	log "local builder: $BUILDER_IMAGE ready in $(elapsed "$t") s"
}

for img in "$BASE_IMAGE" "$BUILDER_IMAGE"; do
	if [ "$REFRESH_BASE" = 1 ] && image_exists "$img" && is_local "$img"; then
		podman rmi -f "$img" >/dev/null || true
	fi
	if image_exists "$img"; then
		if is_local "$img"; then log "base: $img (local stand-in, present)"; else log "base: $img (present)"; fi
	elif try_pull "$img"; then
		log "base: $img (pulled)"
	elif [ "$img" = "$BASE_IMAGE" ]; then
		log "base: $img not available (no registry reachable?): making it locally"
		make_local_base
	else
		log "base: $img not available (no registry reachable?): making it locally"
		make_local_builder
	fi
done

# --- 3. vendored context -----------------------------------------------------
ctx=$(mktemp -d /tmp/dpsolve-docker-ctx.XXXXXX)
out=$(mktemp -d /tmp/dpsolve-docker-out.XXXXXX)
mnt_image=""
mounted=()
unmount_all() {
	local i
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		umount "${mounted[i]}" 2>/dev/null || umount -l "${mounted[i]}" 2>/dev/null || true
	done
	mounted=()
	if [ -n "$mnt_image" ]; then podman image unmount "$mnt_image" >/dev/null 2>&1 || true; fi
	mnt_image=""
}
cleanup() {
	unmount_all
	rm -rf "$ctx" "$out"
}
trap cleanup EXIT

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
		tar --null -T - -cf - | tar -C "$ctx" -xf -
else
	tar --exclude=./.git -cf - . | tar -C "$ctx" -xf -
fi
rm -rf "$ctx/vendor"
(cd "$ctx" && go mod vendor) || fail "go mod vendor failed (modules not in the cache and no proxy?)"
log "context: $(du -sh "$ctx" | cut -f1) with vendor/ ($(grep -c '^# ' "$ctx/vendor/modules.txt") modules)"
version=$(git describe --tags --always --dirty 2>/dev/null || echo 0.1.0-dev)

# --- 4. offline build ------------------------------------------------------------
# build_image TAG PEERS: podman build --build-arg OFFLINE=1; sets size, build_s.
build_image() {
	local tag=$1 peers=$2 old_id new_id cached steps t
	local args=(--build-arg OFFLINE=1 --build-arg VERSION="$version" --build-arg WITH_PEERS="$peers")
	old_id=$(podman image inspect --format '{{.Id}}' "$tag" 2>/dev/null || true)
	log "building $tag: podman build --isolation=$ISOLATION --pull=never ${args[*]}"
	t=$(date +%s)
	podman build --isolation="$ISOLATION" --pull=never "${args[@]}" -t "$tag" -f "$ctx/Dockerfile" "$ctx" >"$out/build.log" 2>&1 ||
		{
			tail -40 "$out/build.log" >&2
			fail "podman build of $tag failed"
		}
	build_s=$(elapsed "$t")
	cached=$(grep -c -- '--> Using cache' "$out/build.log" || true)
	steps=$(grep -c 'STEP [0-9]*/[0-9]*: ' "$out/build.log" || true)
	new_id=$(podman image inspect --format '{{.Id}}' "$tag")
	# Bounded storage across runs: the previous image of this tag goes, and
	# so does the previous builder stage, tagged $IMAGE-build for that; podman
	# rmi also removes their layers no other image uses, keeping the cache of
	# the unchanged steps (base, apt installs).
	if [ -n "$old_id" ] && [ "$old_id" != "$new_id" ]; then podman rmi "$old_id" >/dev/null 2>&1 || true; fi
	old_id=$(podman image inspect --format '{{.Id}}' "$IMAGE-build" 2>/dev/null || true)
	new_id=$(awk '/^\[2\/2\] STEP /{print id; exit} /^--> [0-9a-f]+$/{id=$2}' "$out/build.log")
	if [ -n "$new_id" ] && podman tag "$new_id" "$IMAGE-build" 2>/dev/null; then
		new_id=$(podman image inspect --format '{{.Id}}' "$IMAGE-build")
		if [ -n "$old_id" ] && [ "$old_id" != "$new_id" ]; then podman rmi "$old_id" >/dev/null 2>&1 || true; fi
	fi
	size=$(podman image inspect --format '{{.Size}}' "$tag")
	log "BUILD OK: $tag in $build_s s ($cached of $steps steps from the layer cache), image size $((size / 1000000)) MB ($size bytes)"
}

# --- 5. smoke tests ----------------------------------------------------------------
# Containers cannot run on every machine (crun refuses setrlimit under some
# sandboxes): then the image's binary runs in its mounted root file system
# with the image's user, environment and working directory.
mode=""
# prepare_run TAG: defines run_image ARGS… (dpsolve ARGS… in the image, the
# host directory $report at /mnt) and sets uid.
prepare_run() {
	local tag=$1 user entry
	# uid, gid, home, workdir, mnt, img_env: global, run_image reads them later
	user=$(podman image inspect --format '{{.Config.User}}' "$tag")
	[ -n "$user" ] || fail "$tag sets no USER: it would run as root"
	workdir=$(podman image inspect --format '{{.Config.WorkingDir}}' "$tag")
	if [ -z "$mode" ]; then
		mode=chroot
		if timeout 60 podman run --rm --network=none "$tag" version >/dev/null 2>&1; then mode=run; fi
	fi
	if [ "$mode" = run ]; then
		log "smoke tests of $tag: podman run (containers run here)"
		uid=$(timeout 60 podman run --rm --network=none --entrypoint id "$tag" -u)
		run_tag=$tag
		run_image() { timeout "$SMOKE_TIMEOUT" podman run --rm --network=none -v "$report:/mnt" "$run_tag" "$@"; }
		return
	fi
	log "smoke tests of $tag: podman image mount + chroot (podman run cannot start containers here)"
	mapfile -t img_env < <(podman image inspect --format '{{range .Config.Env}}{{println .}}{{end}}' "$tag" | grep -v '^$')
	mnt=$(podman image mount "$tag")
	mnt_image=$tag
	# leftovers of an interrupted run
	{ findmnt -rn -o TARGET | grep -F "$mnt/" || true; } | sort -r | while read -r m; do umount -l "$m" || true; done
	entry=$(grep "^$user:" "$mnt/etc/passwd" || true)
	[ -n "$entry" ] || fail "the USER $user of $tag is not in its /etc/passwd"
	uid=$(echo "$entry" | cut -d: -f3)
	gid=$(echo "$entry" | cut -d: -f4)
	home=$(echo "$entry" | cut -d: -f6)
	mount -t proc proc "$mnt/proc" && mounted+=("$mnt/proc")
	mount --bind /dev "$mnt/dev" && mounted+=("$mnt/dev")
	mount -t tmpfs -o mode=1777,size=512m tmpfs "$mnt/tmp" && mounted+=("$mnt/tmp")
	mount --bind "$report" "$mnt/mnt" && mounted+=("$mnt/mnt")
	# shellcheck disable=SC2016 # the inner shell expands $0 and $@
	run_image() {
		timeout "$SMOKE_TIMEOUT" env -i "${img_env[@]}" HOME="$home" \
			"$(command -v chroot)" --userspec="$uid:$gid" "$mnt" \
			/bin/sh -c 'cd "$0" && exec /usr/local/bin/dpsolve "$@"' "${workdir:-/}" "$@"
	}
}

# smoke_test TAG PEERS
smoke_test() {
	local tag=$1 peers=$2 t verdict owner m f
	report=$out/report-$peers
	mkdir -m 0777 "$report"
	chmod 0755 "$out"
	prepare_run "$tag"
	[ "$uid" = 10001 ] || fail "the user of $tag has uid $uid, want 10001"
	log "PASS user: $tag runs as uid $uid, not root (working directory ${workdir:-/})"

	t=$(date +%s)
	run_image version >"$out/version.txt" 2>&1 || {
		cat "$out/version.txt" >&2
		fail "dpsolve version"
	}
	grep -q '^backend openblas (core ' "$out/version.txt" || {
		cat "$out/version.txt" >&2
		fail "dpsolve version does not report the openblas backend"
	}
	log "PASS version: $(head -1 "$out/version.txt"); $(grep '^backend' "$out/version.txt")"

	run_image solve --workload prefix --n 512 --json --quiet >"$out/solve.json" 2>"$out/solve.err" || {
		cat "$out/solve.err" >&2
		fail "dpsolve solve --workload prefix --n 512"
	}
	verdict=$(python3 - "$out/solve.json" <<-'EOF'
		import json, sys
		r = json.load(open(sys.argv[1]))
		ok = r["status"] == "converged" and 0 <= r["gap"] <= 1e-8
		print(("ok " if ok else "bad ") + "status %s, certified gap %.2e, objective %.10g, %d iterations, %.2f s, backend %s (core %s)"
		      % (r["status"], r["gap"], r["objective"], r["iterations"], r["seconds"], r["backend"], r["core"]))
	EOF
	) || fail "cannot parse the solve's --json output"
	case "$verdict" in ok*) ;; *) fail "prefix n = 512 is not certified: ${verdict#bad }" ;; esac
	log "PASS solve prefix n=512: ${verdict#ok }"

	local args=(bench --workload prefix --n 128 --repeat 1 --md /mnt/report.md --csv /mnt/runs.csv)
	local methods=(newton yuan2016)
	if [ "$peers" = 1 ]; then
		args+=(--peers)
		methods+=(fixedpoint lbfgs)
	fi
	run_image "${args[@]}" >"$out/bench.txt" 2>&1 || {
		tail -30 "$out/bench.txt" >&2
		fail "dpsolve ${args[*]}"
	}
	for f in report.md runs.csv; do
		[ -s "$report/$f" ] || fail "dpsolve bench wrote no $f into the mounted directory"
		owner=$(stat -c %u "$report/$f")
		[ "$owner" = 10001 ] || fail "$f is owned by uid $owner: the bench did not run as uid 10001"
	done
	for m in "${methods[@]}"; do
		grep -q "| prefix | 128 | $m |" "$report/report.md" || {
			cat "$report/report.md" >&2
			fail "the bench report has no $m row"
		}
	done
	log "PASS bench prefix n=128 (${methods[*]}): report.md, runs.csv written to the mounted directory by uid $owner"
	grep "| prefix | 128 |" "$report/report.md" | sed 's/^/docker-check:   /'
	log "smoke tests of $tag: $(elapsed "$t") s"
	unmount_all
}

# The default image; with WITH_PEERS=1 also the variant with the Python
# peers (only its runtime stage is rebuilt).
variants=(0)
[ "$WITH_PEERS" = 1 ] && variants+=(1)
summary=()
for peers in "${variants[@]}"; do
	tag=$IMAGE
	[ "$peers" = 1 ] && tag=$IMAGE-peers
	build_image "$tag" "$peers"
	smoke_test "$tag" "$peers"
	summary+=("$tag $((size / 1000000)) MB, build $build_s s")
done
log "ALL PASSED: $(printf '%s; ' "${summary[@]}")total $(elapsed "$t_start") s"
