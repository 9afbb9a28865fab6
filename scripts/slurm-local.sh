#!/usr/bin/env bash
# Brings up (start) or tears down (stop) a private single-node Slurm cluster
# for dpsolve's batch tests: munged, slurmctld and slurmd run by hand from one
# state folder, with their own munge key, socket, ports and pid files, so they
# never touch a system Slurm or munge that may already run on the machine.
#
# Usage: scripts/slurm-local.sh start|stop|status
#
# It runs as root (re-running itself with sudo when needed). start installs
# slurmctld, slurmd, slurm-client and munge with apt-get when they are
# missing, is idempotent (daemons already running from the state folder are
# left alone), waits until the node is idle, and prints the one variable
# clients need:
#     export SLURM_CONF=/tmp/dpsolve-slurm/slurm.conf
# stop stops only the daemons whose pid files this script wrote, after
# checking that each pid still runs that daemon; it is idempotent too.
# The state folder is $DPSOLVE_SLURM_DIR (default /tmp/dpsolve-slurm).
# Exit status 3 from start means Slurm could not be installed (no root, no
# package archive); 4 means it is installed but a daemon did not come up (the
# logs' tails are printed).
set -euo pipefail
D=${DPSOLVE_SLURM_DIR:-/tmp/dpsolve-slurm}
CTLD_PORT=${DPSOLVE_SLURM_PORT:-16817}
SLURMD_PORT=$((CTLD_PORT + 1))
log() { echo "slurm-local: $*" >&2; }

# fail MSG: report a daemon that did not come up, with the logs' tails.
fail() {
	log "$1"
	for f in "$D/munge/munged.log" "$D/slurmctld.log" "$D/slurmd.log"; do
		[ -s "$f" ] && { echo "== $f" >&2; tail -n 15 "$f" >&2; }
	done
	exit 4
}

# The daemons run as root (SlurmUser=root, munged --force): re-run as root.
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
		exec sudo -n DPSOLVE_SLURM_DIR="$D" DPSOLVE_SLURM_PORT="$CTLD_PORT" bash "$0" "$@"
	fi
	log "needs root (or password-less sudo) to install and run Slurm"
	[ "${1:-}" = start ] && exit 3
	exit 1
fi
SUDO=""

# alive PIDFILE NAME: the pid in PIDFILE runs a program called NAME.
alive() {
	[ -s "$1" ] || return 1
	local pid
	pid=$(cat "$1")
	[ -r "/proc/$pid/comm" ] && [ "$(cat "/proc/$pid/comm")" = "$2" ]
}

install() {
	local missing=()
	for p in slurmctld slurmd slurm-client munge; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	log "installing ${missing[*]}"
	# The packages' maintainer scripts would start the system services;
	# there is no init system in a container, and we start our own.
	$SUDO apt-get update -qq &&
		DEBIAN_FRONTEND=noninteractive RUNLEVEL=1 $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

write_conf() {
	local host cpus mem
	host=$(hostname -s)
	cpus=$(nproc)
	mem=$(awk '/MemTotal/ {print int($2 / 1024 * 0.8)}' /proc/meminfo)
	cat >"$D/slurm.conf" <<CONF
# Written by scripts/slurm-local.sh: a private single-node cluster for tests.
ClusterName=dpsolve-local
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$D/munge/munge.socket
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/slurmctld.log
SlurmdLogFile=$D/slurmd.log
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
KillWait=5
MinJobAge=300
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
}

start() {
	if ! install; then
		log "cannot install slurm-wlm/munge with apt-get"
		exit 3
	fi
	mkdir -p "$D/state" "$D/spool" "$D/munge"
	chmod 700 "$D/munge"
	if ! alive "$D/munge/munged.pid" munged; then
		[ -s "$D/munge/munge.key" ] || { dd if=/dev/urandom of="$D/munge/munge.key" bs=1024 count=1 status=none && chmod 400 "$D/munge/munge.key"; }
		# --force: munged refuses to run as root or with a key outside
		# /etc/munge without it; this key and socket are private to $D.
		munged --force --key-file="$D/munge/munge.key" --socket="$D/munge/munge.socket" \
			--pid-file="$D/munge/munged.pid" --log-file="$D/munge/munged.log" \
			--seed-file="$D/munge/munged.seed" || fail "munged did not start"
		log "started munged"
	fi
	write_conf
	export SLURM_CONF="$D/slurm.conf"
	if ! alive "$D/slurmctld.pid" slurmctld; then
		slurmctld -f "$D/slurm.conf" || fail "slurmctld did not start"
		log "started slurmctld"
	fi
	if ! alive "$D/slurmd.pid" slurmd; then
		slurmd -f "$D/slurm.conf" || fail "slurmd did not start"
		log "started slurmd"
	fi
	local state=""
	for _ in $(seq 1 60); do
		state=$(sinfo -h -o %t 2>/dev/null | head -1 || true)
		case "$state" in
		idle | mix | alloc) break ;;
		down* | drain*) scontrol update nodename="$(hostname -s)" state=resume >/dev/null 2>&1 || true ;;
		esac
		sleep 0.5
	done
	case "$state" in
	idle | mix | alloc) ;;
	*)
		fail "the node did not become idle (state '$state')"
		;;
	esac
	log "single-node cluster up (node $(hostname -s), state $state)"
	echo "export SLURM_CONF=$D/slurm.conf"
}

stop() {
	local f name pid
	for f in "$D/slurmd.pid:slurmd" "$D/slurmctld.pid:slurmctld" "$D/munge/munged.pid:munged"; do
		name=${f##*:}
		f=${f%:*}
		if alive "$f" "$name"; then
			pid=$(cat "$f")
			kill "$pid"
			for _ in $(seq 1 50); do
				kill -0 "$pid" 2>/dev/null || break
				sleep 0.1
			done
			kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
			log "stopped $name ($pid)"
		fi
		rm -f "$f"
	done
}

case "${1:-}" in
start) start ;;
stop) stop ;;
status)
	for f in "$D/munge/munged.pid:munged" "$D/slurmctld.pid:slurmctld" "$D/slurmd.pid:slurmd"; do
		if alive "${f%:*}" "${f##*:}"; then echo "${f##*:} running ($(cat "${f%:*}"))"; else echo "${f##*:} stopped"; fi
	done
	;;
*)
	echo "usage: $0 start|stop|status" >&2
	exit 2
	;;
esac
