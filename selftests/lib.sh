# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# selftests/lib.sh: helpers shared by the selftests, scripts/demo and
# scripts/bench.  Source it from bash; it runs inside a guest (scripts/vm).
#
#   KTAP:        ok, not_ok, check, check_fails, check_eq, skip, diag,
#                skip_all, finish
#   module:      sroce_load, sroce_unload (see also selftests/guest-setup),
#                ulp_start, ulp_delete_links, ulp_cleanup, ulp_finish (the
#                kernel ULP tests)
#   topologies:  topo_pair, topo_interop, topo_loopback, topo_initial_pair,
#                topo_cleanup
#   traffic:     gid_index, pingpong
#   sysfs:       ibdev_attr, port_attr, gid_table, mac_to_guid
#   kernel log:  dmesg_mark, dmesg_new_problems
#   programs:    cm_pair, mckey_pair, perftest_cm (rdma_cm), perftest_pair
#   two guests:  pair_post, pair_wait (scripts/vm-pair)
#
# Under TCG every process start costs 50-80 ms: helpers read sysfs with bash
# builtins ($(<file)) and avoid loops of small programs.

ST_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(dirname "$ST_DIR")

# The link type under test.  SROCE_DRIVER=rxe runs the same tests against
# the kernel's rdma_rxe, to check a test against another implementation.
# The tests whose devices live in network namespaces (topo_pair,
# topo_loopback, topo_interop) skip on a kernel whose rdma_rxe cannot
# (_topo_driver_in_ns): Debian's 6.1 and 6.12.
SROCE_DRIVER=${SROCE_DRIVER:-sroce}

# ---------------------------------------------------------------- KTAP ----

_ktap_n=0
_ktap_fail=0
_ktap_skip=0

# diag TEXT...: each line of TEXT as a "# " diagnostic line
diag() {
	local line
	while IFS= read -r line; do
		printf '# %s\n' "$line"
	done <<< "$*"
}

ok() { _ktap_n=$((_ktap_n + 1)); echo "ok $_ktap_n $*"; }

# _slow T0: " # N.Ns" if more than a second passed since T0 ($EPOCHREALTIME)
_slow() {
	local us=$(( (${EPOCHREALTIME/./} - ${1/./}) / 100000 ))
	[[ $us -ge 10 ]] && printf ' # %d.%ds' $((us / 10)) $((us % 10))
}

not_ok() { _ktap_n=$((_ktap_n + 1)); _ktap_fail=$((_ktap_fail + 1)); echo "not ok $_ktap_n $*"; }

# skip NAME REASON
skip() { _ktap_n=$((_ktap_n + 1)); _ktap_skip=$((_ktap_skip + 1)); echo "ok $_ktap_n $1 # SKIP $2"; }

# check NAME CMD...: passes if CMD exits 0; shows CMD's output otherwise
check() {
	local name=$1 out rc=0 t0=$EPOCHREALTIME
	shift
	out=$("$@" 2>&1) || rc=$?
	if [[ $rc == 0 ]]; then
		ok "$name$(_slow "$t0")"
	else
		not_ok "$name$(_slow "$t0")"
		diag "command: $* (exit $rc)"
		[[ -n $out ]] && diag "$out"
	fi
	return $rc
}

# sub_verdict [-n] NAME RC OUTPUT T0 [TEXT]: one line for a program that
# printed KTAP of its own (OUTPUT, its exit code RC, started at T0,
# $EPOCHREALTIME): ok NAME (": TEXT" after it if given); exit 4 a skip
# with the program's own SKIP reason, or, with -n (a program that may not
# skip here, e.g. on a device the test just created), a failure; anything
# else not ok with the number and names of its failed lines.
sub_verdict() {
	local may_skip=1 name rc out t0 text reason failed
	[[ $1 == -n ]] && { may_skip=0; shift; }
	name=$1 rc=$2 out=$3 t0=$4 text=${5:+: $5}
	if [[ $rc == 0 ]]; then
		ok "$name$text$(_slow "$t0")"
		return
	fi
	reason=$(grep -m1 -o '# SKIP.*' <<< "$out" | sed 's/^# SKIP *//')
	if [[ $rc == 4 && $may_skip == 1 ]]; then
		skip "$name" "${reason:-all tests skipped}"
	else
		failed=$(grep '^not ok' <<< "$out" | tr '\n' ';')
		not_ok "$name$(_slow "$t0") # exit $rc: $(grep -c '^not ok' <<< "$out") failed"
		if [[ -n $failed$reason ]]; then
			diag "${failed:+failed: $failed}${reason:+skipped: $reason}"
		fi
	fi
}

# check_fails NAME REGEX CMD...: passes if CMD exits non-zero and its output
# (stdout+stderr) matches the extended REGEX (case-insensitive)
check_fails() {
	local name=$1 re=$2 out rc=0
	shift 2
	out=$("$@" 2>&1) || rc=$?
	if [[ $rc != 0 ]] && shopt -s nocasematch && [[ $out =~ $re ]]; then
		shopt -u nocasematch
		ok "$name"
		diag "$* -> exit $rc: $out"
		return 0
	fi
	shopt -u nocasematch
	not_ok "$name"
	diag "command: $* (exit $rc, expected non-zero and output matching /$re/)"
	[[ -n $out ]] && diag "output: $out"
	return 1
}

# verdict NAME DETAIL PASSED: "NAME (DETAIL)", ok if PASSED is 1
verdict() { if (($3)); then ok "$1 ($2)"; else not_ok "$1 ($2)"; fi; }

# check_ge NAME MIN ACTUAL: ACTUAL is a number of at least MIN
check_ge() {
	if [[ $3 =~ ^[0-9]+$ ]] && (($3 >= $2)); then
		ok "$1"
		diag "$3 >= $2"
		return 0
	fi
	not_ok "$1"
	diag "expected at least $2, got '$3'"
	return 1
}

# check_eq NAME EXPECTED ACTUAL
check_eq() {
	if [[ "$2" == "$3" ]]; then
		ok "$1"
		return 0
	fi
	not_ok "$1"
	diag "expected: '$2'"
	diag "actual:   '$3'"
	return 1
}

# skip_all REASON: the whole test is skipped
skip_all() { echo "1..0 # SKIP $*"; exit 4; }

# finish: print the plan and exit 1 on any failure, 4 if all skipped
finish() {
	echo "1..$_ktap_n"
	if [[ $_ktap_fail -gt 0 ]]; then
		diag "$_ktap_fail of $_ktap_n checks failed"
		exit 1
	fi
	[[ $_ktap_n -gt 0 && $_ktap_skip == "$_ktap_n" ]] && exit 4
	exit 0
}

# wait_until SECONDS CMD...: poll CMD every 0.1 s until it succeeds (SECONDS
# is scaled, see "scaled" below)
wait_until() {
	local deadline=$((SECONDS + $1 * ${SELFTEST_TIMEOUT_SCALE:-1}))
	shift
	while ! "$@" 2>/dev/null; do
		[[ $SECONDS -ge $deadline ]] && return 1
		sleep 0.1
	done
}

# ----------------------------------------------------------- kernel log ----

# dmesg_mark: remember where the kernel log is now: a marker line, and its
# timestamp, for when the marker has scrolled out of the kernel's ring
# buffer (a debug kernel's KASAN reports fill it within a test; the lines
# after the marker must still be checked)
dmesg_mark() {
	local l
	_dmesg_marker="selftest-mark-$RANDOM$RANDOM"
	echo "$_dmesg_marker" > /dev/kmsg
	l=$(dmesg | grep -F "$_dmesg_marker" | tail -n 1)
	[[ $l =~ ^\[\ *([0-9]+\.[0-9]+)\] ]] && _dmesg_since=${BASH_REMATCH[1]} || _dmesg_since=
}

# awk: set seen at the first line stamped after dmesg_mark's marker line
_DMESG_SEEN_AWK='
	!seen && since != "" && match($0, /^\[ *[0-9]+\.[0-9]+\]/) {
		ts = substr($0, RSTART + 1, RLENGTH - 2) + 0
		if (ts > since + 0) seen = 1
	}'

# What the kernel logs that indicates a kernel bug (dmesg_new_problems).
# Lockdep, RCU, debug-objects and KASAN/UBSAN reports come from the debug
# kernel (scripts/debug-kernel); the rest from any kernel.
DMESG_PROBLEM_RE='WARNING:|BUG:|Oops|general protection|Call Trace|UBSAN|KASAN|kmemleak|refcount_t|leak|hung_task|blocked for more than|unregister_netdevice: waiting|list_(add|del) corruption|double free|use-after-free|stack-protector|possible (circular|recursive) locking|inconsistent lock state|suspicious RCU|lock held when returning|ODEBUG|detected stalls?|self-detected stall|Kernel panic'
# What lockdep prints when it turns itself off without a report of its own:
# a taint that makes lock state unreliable, or a table overflow.
DMESG_LOCKDEP_OFF_RE='Disabling lock debugging|turning off the locking correctness validator'
DMESG_PROBLEM_RE+="|$DMESG_LOCKDEP_OFF_RE"
# kmemleak's own status lines (its suspects are read from debugfs instead)
# and the debug kernel's boot banner of a checker.
DMESG_BENIGN_RE='kmemleak: (Kernel memory leak detector initialized|Automatic memory scanning thread|[0-9]+ new suspected memory leaks)|RCU callback double-/use-after-free debug is enabled'
# Warnings of other kernel code, not sroce's, that a test provokes on
# purpose: the WARNING line and its report up to "---[ end trace" are not
# problems; the test that provokes one reports it (dmesg_known_warnings).
# - ib_srpt with use_srq=1 (srp.sh): srpt_release_channel_work() puts the
#   receive buffer cache a channel on an SRQ never got, NULL, and
#   srpt_cache_put() warns once that it has no such cache (Debian's 6.1 and
#   6.12, any RDMA device).
DMESG_KNOWN_RE='WARNING: .* at drivers/infiniband/ulp/srpt/ib_srpt[.]c:[0-9]+ srpt_cache_put[+]'
# Lockdep cycles of other kernel code, not sroce's, that are known upstream:
# a "possible circular locking dependency" report naming every lock of one
# "&"-joined group (groups separated by ";") is not a problem; the test runner
# reports it (dmesg_known_lockdep) and debug-checks accepts the lockdep-off
# that follows it (lockdep stops after its first report, so tests that meet
# one run last: nvme.sh).
# - nvmet (nvme.sh): nvmet-rdma runs an I/O queue's CONNECT capsule that
#   arrived before RDMA_CM_EVENT_ESTABLISHED from rdma_cm's event handler,
#   under the connection's handler_mutex, and nvmet_find_get_subsys() takes
#   nvmet_config_sem; removing a port holds nvmet_config_sem and destroys
#   the listening ID (another ID's handler_mutex, same lockdep class).  Seen
#   with sroce's receive hook, which lets the capsule overtake the RTU's
#   trip through ib_cm's work queue; blktests meets the same cycle with
#   nvme-tcp.
DMESG_KNOWN_LOCKDEP='nvmet_config_sem&handler_mutex'
# The reports since dmesg_mark, one at a time: a report starts at a line
# matching DMESG_PROBLEM_RE and runs up to 150 lines, to an end marker, or,
# for a lockdep cycle, to the end of its backtrace (</TASK>).  mode=problems
# prints the reports that are not known (up to 400 lines) and exits 0 if
# there were any; mode=known prints one line per known lockdep cycle.
_dmesg_reports() {
	dmesg | awk -v mode="$1" -v m="$_dmesg_marker" -v since="${_dmesg_since:-}" \
		-v re="$DMESG_PROBLEM_RE" -v ok="$DMESG_BENIGN_RE" -v known="$DMESG_KNOWN_RE" \
		-v cycles="$DMESG_KNOWN_LOCKDEP" "$_DMESG_SEEN_AWK"'
	function known_cycle(b,   n, i, groups, k, j, names, all) {
		if (b !~ /possible circular locking dependency/) return ""
		n = split(cycles, groups, ";")
		for (i = 1; i <= n; i++) {
			k = split(groups[i], names, "&")
			all = k > 0
			for (j = 1; j <= k; j++) if (!index(b, names[j])) all = 0
			if (all) return groups[i]
		}
		return ""
	}
	function flush(   c) {
		if (buf == "") return
		c = known_cycle(buf)
		if (c != "") {
			gsub(/&/, " and ", c)
			if (mode == "known") print "possible circular locking dependency between " c
		} else {
			found = 1
			if (mode == "problems" && printed < 400) { printf "%s", buf; printed += nb }
		}
		buf = ""; nb = 0
	}
	$0 ~ ok { next }
	seen && $0 ~ known { skip = 150 }
	skip > 0 { skip--; if ($0 ~ /---\[ end trace/) skip = 0; next }
	seen && ctx <= 0 && $0 ~ re { flush(); ctx = 150 }
	seen && ctx > 0 {
		buf = buf $0 "\n"; nb++; ctx--
		if ($0 ~ /---\[ end trace|====================/) ctx = 0
		if ($0 ~ /<\/TASK>/ && buf ~ /possible circular locking dependency/) ctx = 0
	}
	index($0, m) { seen = 1 }
	END { flush(); if (mode == "problems") exit !found }'
}

# dmesg_new_problems: print kernel messages since dmesg_mark that indicate a
# kernel bug, each with the report that follows it (a KASAN, lockdep, UBSAN
# or WARN report with its stacks); exit 0 if there are some.
dmesg_new_problems() { _dmesg_reports problems; }

# dmesg_known_lockdep: one line per known upstream lockdep cycle
# (DMESG_KNOWN_LOCKDEP) reported since dmesg_mark
dmesg_known_lockdep() { _dmesg_reports known; }

# dmesg_known_warnings: print the WARNING lines since dmesg_mark that
# DMESG_KNOWN_RE matches
dmesg_known_warnings() {
	dmesg | awk -v m="$_dmesg_marker" -v since="${_dmesg_since:-}" -v known="$DMESG_KNOWN_RE" \
		"$_DMESG_SEEN_AWK"'
	seen && $0 ~ known { print }
	index($0, m) { seen = 1 }'
}

# ---------------------------------------------------------- debug kernel ----
#
# The debug kernel (scripts/debug-kernel; scripts/vm --kernel debug) has
# KASAN, lockdep, kmemleak, UBSAN and debug objects, and runs everything 5 to
# 15 times slower.  Tests shrink their sizes when SELFTEST_DEBUG_KERNEL=1 (set
# here from the kernel's name unless the caller set it).

if [[ -z ${SELFTEST_DEBUG_KERNEL:-} ]]; then
	SELFTEST_DEBUG_KERNEL=0
	[[ $(uname -r) == *-sroce-debug ]] && SELFTEST_DEBUG_KERNEL=1
fi
export SELFTEST_DEBUG_KERNEL

# debug_kernel: true on the debug kernel
debug_kernel() { [[ $SELFTEST_DEBUG_KERNEL == 1 ]]; }

# debug_size NORMAL DEBUG: NORMAL, or DEBUG on the debug kernel
debug_size() { if debug_kernel; then echo "$2"; else echo "$1"; fi; }

# Time limits inside the tests (wait_until, pingpong, a test's own
# `timeout N`) are multiplied by SELFTEST_TIMEOUT_SCALE, which selftests/run
# exports (8 on the debug kernel, 1 elsewhere); build/selftests/pktgen reads
# it too.  A test run on its own gets the same default.
if [[ -z ${SELFTEST_TIMEOUT_SCALE:-} ]]; then
	SELFTEST_TIMEOUT_SCALE=$(debug_size 1 8)
fi
export SELFTEST_TIMEOUT_SCALE

# scaled SECONDS: SECONDS times SELFTEST_TIMEOUT_SCALE
scaled() { echo $(($1 * SELFTEST_TIMEOUT_SCALE)); }

KMEMLEAK=/sys/kernel/debug/kmemleak

# kmemleak_on: kmemleak is built in and enabled (reading fails with EBUSY
# once it has disabled itself)
kmemleak_on() { [[ -r $KMEMLEAK ]] && { : < "$KMEMLEAK"; } 2>/dev/null; }

# kmemleak_leaks [SINCE]: scan twice (an object must be unreferenced in two
# scans in a row, its contents unchanged, and older than 5 s to be
# reported), print the new suspects allocated at or after jiffies SINCE
# (default 0: all; see kernel_jiffies) with their allocation stacks, then
# forget every suspect so that the next call reports only newer ones.
# Exit 0 if some were printed.  SINCE lets a run ignore what the kernel
# leaked while booting without a scan of its own (a scan of the debug
# kernel's memory costs 30 s to 2 min under TCG).
kmemleak_leaks() {
	local out since=${1:-0}
	echo scan > "$KMEMLEAK" || return 1
	sleep 5
	echo scan > "$KMEMLEAK" || return 1
	out=$(< "$KMEMLEAK")
	echo clear > "$KMEMLEAK"
	# '  comm "x", pid N, jiffies N' follows each "unreferenced object"
	out=$(awk -v since="$since" '
	function flush() { if (obj != "" && keep) print obj; obj = "" }
	/^unreferenced object/ { flush(); obj = $0; keep = 1; next }
	obj == "" { next }
	{ obj = obj "\n" $0 }
	/^  comm .*, jiffies [0-9]+/ { if ($NF + 0 < since + 0) keep = 0 }
	END { flush() }' <<< "$out")
	[[ -n $out ]] || return 1
	printf '%s\n' "$out" | head -n 300
}

# kernel_jiffies: the kernel's jiffies now (from /proc/timer_list); exit 1
# if the kernel does not say
kernel_jiffies() {
	local l
	while IFS= read -r l; do
		[[ $l =~ ^jiffies:\ ([0-9]+)$ ]] && { echo "${BASH_REMATCH[1]}"; return 0; }
	done < /proc/timer_list 2>/dev/null
	return 1
}

# lockdep_off_reason: print why lockdep no longer checks anything (it turns
# itself off after its first report, when a table overflows, or when the
# kernel is tainted in a way that makes lock state unreliable: an oops, a
# bad page, a forced module load); exit 0 if it is off on a kernel that
# has it
lockdep_off_reason() {
	local l
	[[ -r /proc/lockdep_stats ]] || return 1
	while IFS= read -r l; do
		if [[ $l =~ debug_locks:\ +0$ ]]; then
			echo "lockdep is off (debug_locks 0): an earlier report, an overflow or a taint disabled it; kernel taint $(< /proc/sys/kernel/tainted)"
			dmesg | grep -E -B2 "$DMESG_LOCKDEP_OFF_RE|Tainted: |taint" | head -n 20
			return 0
		fi
	done < /proc/lockdep_stats
	return 1
}

# check_dmesg_clean NAME: the kernel logged no problems since dmesg_mark
check_dmesg_clean() {
	local bad
	if bad=$(dmesg_new_problems); then
		not_ok "$1"
		diag "$bad"
		return 1
	fi
	ok "$1"
}

# --------------------------------------------------------------- module ----

# sroce_ko: path of the module built for the running kernel
sroce_ko() {
	local k=$TOP/build/kmod/$(uname -r) f
	for f in "$k/sroce.ko" "$k/kernel/sroce.ko"; do
		[[ -f $f ]] && { echo "$f"; return 0; }
	done
	return 1
}

# provider_lib: RDMAV_DRIVERS value for the provider in the build tree
provider_lib() {
	[[ -f $TOP/build/provider/libsroce-rdmav34.so ]] || return 1
	echo "$TOP/build/provider/libsroce"
}

# require_sroce_provider: skip the test unless sroce.ko and the provider
# are built for this kernel; sets lib (provider_lib) and exports
# RDMAV_DRIVERS, so that libibverbs loads the provider from the build tree
require_sroce_provider() {
	sroce_ko > /dev/null || skip_all "no sroce.ko for $(uname -r) under build/kmod (make module)"
	lib=$(provider_lib) || skip_all "no provider under build/provider (make provider)"
	export RDMAV_DRIVERS=$lib
}

# build_program PROGRAM SOURCE: the selftest program PROGRAM (under
# build/selftests/) is built and newer than selftests/SOURCE, or is built
# now (make -C selftests PROGRAM).  Returns 0 if so; 2 if this system
# cannot build it (no make, no compiler, no libibverbs headers, no
# kselftest_harness.h), 1 if the build failed; BUILD_ERR says why.
build_program() {
	local prog=$1 src=$ST_DIR/$2 cc out
	BUILD_ERR=
	[[ -x $prog && $prog -nt $src ]] && return 0
	case $2 in *.cpp) cc=${CXX:-g++} ;; *) cc=${CC:-cc} ;; esac
	if ! command -v make > /dev/null; then
		BUILD_ERR="cannot build $prog: no make"
		return 2
	fi
	if ! command -v "$cc" > /dev/null; then
		BUILD_ERR="cannot build $prog: no compiler $cc"
		return 2
	fi
	if grep -qs 'infiniband/verbs[.]h\|verbs_test[.]h' "$src" &&
	   ! echo '#include <infiniband/verbs.h>' | "$cc" -E -x c - > /dev/null 2>&1; then
		BUILD_ERR="cannot build $prog: no libibverbs headers (libibverbs-dev)"
		return 2
	fi
	# the Makefile builds every C program but lat_verbs with the harness
	if [[ $2 == *.c && $2 != lat_verbs.c && -z ${KSFT:-} ]] &&
	   ! compgen -G '/usr/src/linux-source-*/tools/testing/selftests/kselftest_harness.h' > /dev/null; then
		BUILD_ERR="cannot build $prog: no kselftest_harness.h (linux-source)"
		return 2
	fi
	# The one program: another one failing to build is not this test's
	# business.  OUT: the directory PROGRAM names, so the target matches.
	if ! out=$(make -s -C "$ST_DIR" OUT="${prog%/*}" "$prog" 2>&1); then
		BUILD_ERR="make -C selftests $prog failed: $out"
		return 1
	fi
	if [[ ! -x $prog ]]; then
		BUILD_ERR="make -C selftests $prog left no program: $out"
		return 1
	fi
}

# require_program PROGRAM SOURCE: build_program; skip the test (saying why)
# if this system cannot build PROGRAM, fail it if the build fails
require_program() {
	local rc=0
	build_program "$1" "$2" || rc=$?
	case $rc in
	0) ;;
	2) skip_all "$BUILD_ERR" ;;
	*)
		not_ok "build $1"
		diag "$BUILD_ERR"
		finish ;;
	esac
}

# require_modules MOD...: skip the test unless the kernel has every MOD
require_modules() {
	local m
	for m; do
		modinfo "$m" > /dev/null 2>&1 || skip_all "kernel has no $m module"
	done
}

# tracing_prepare: tracefs mounted at $TRACING (a guest boots without it),
# the trace buffer emptied and the record-cmd option off, before a test
# enables sroce's trace events; non-zero if they are not there.  With
# record-cmd on (the default) the first event enabled registers a probe on
# sched_switch to record task names, which patches __schedule() while the
# other vCPU runs it: the patch Debian's 6.12 under multi-threaded TCG now
# and then sees half done ("Oops: int3", Documentation/testing.rst).  The
# trace then names tasks <...>; no test reads those names.
TRACING=/sys/kernel/tracing
tracing_prepare() {
	[[ -d $TRACING/events ]] || mount -t tracefs nodev $TRACING 2>/dev/null
	[[ -d $TRACING/events/sroce ]] || return 1
	echo > $TRACING/trace
	[[ -w $TRACING/options/record-cmd ]] && echo 0 > $TRACING/options/record-cmd
	return 0
}

# SROCE_FAST_RX=0|1: set sroce's fast_rx parameter (kernel/rx_hook.c, on
# by default) for the devices the test creates; SROCE_SQ_POLL_US=N: its sq_poll_us parameter
# (kernel/sq_poll.c), the SQ poller of user QPs.  The provider also reads
# SROCE_SQ_POLL_US in every verbs process the test starts and asks for the
# poller itself (bounded by sq_poll_max_us); a test that sets the parameter
# on its own unsets it (sqpoll.sh).
_sroce_params() {
	[[ -z ${SROCE_FAST_RX:-} ]] || echo "$SROCE_FAST_RX" > /sys/module/sroce/parameters/fast_rx
	[[ -z ${SROCE_SQ_POLL_US:-} ]] || echo "$SROCE_SQ_POLL_US" > /sys/module/sroce/parameters/sq_poll_us
	[[ -z ${SROCE_TX_BATCH:-} ]] || echo "$SROCE_TX_BATCH" > /sys/module/sroce/parameters/tx_batch
}

# fast_rx_on: sroce's devices created now take their packets through the
# receive hook (module parameter fast_rx)
fast_rx_on() {
	[[ $SROCE_DRIVER == sroce && $(cat /sys/module/sroce/parameters/fast_rx 2>/dev/null) == Y ]]
}

# sroce_load [PARAM=VALUE...]: load the module under test (and, for rxe,
# rdma_rxe), with sroce.ko module parameters if given (and SROCE_FAST_RX,
# SROCE_SQ_POLL_US, SROCE_TX_BATCH)
sroce_load() {
	local ko deps
	modprobe -a veth ib_uverbs 2>/dev/null
	if [[ $SROCE_DRIVER == rxe ]]; then
		modprobe rdma_rxe
		return
	fi
	grep -qw '^sroce' /proc/modules && { _sroce_params; return; }
	ko=$(sroce_ko) || { echo "no sroce.ko for $(uname -r) under build/kmod" >&2; return 1; }
	deps=$(modinfo -F depends "$ko") || return 1
	[[ -n $deps ]] && modprobe -a ${deps//,/ }
	# "$@": module parameters (max_qp=N ...), applied only by this load
	insmod "$ko" "$@" && _sroce_params
}

sroce_unload() {
	if [[ $SROCE_DRIVER == rxe ]]; then
		rmmod rdma_rxe 2>/dev/null
	else
		rmmod sroce 2>/dev/null
	fi
	return 0
}

# ----------------------------------------------------------------- sysfs ----

IB=/sys/class/infiniband

ibdev_attr() { local v; v=$(< "$IB/$1/$2") || return 1; echo "$v"; }
port_attr() { local v; v=$(< "$IB/$1/ports/1/$2") || return 1; echo "$v"; }
# tx_batches DEV: the transmit batches DEV sent (transmit.c); tx_batch_on:
# 1 if the module sends batches (parameter tx_batch), else 0
tx_batches() { port_attr "$1" hw_counters/tx_batches; }
tx_batch_on() { [[ $(< /sys/module/sroce/parameters/tx_batch) == Y ]] && echo 1 || echo 0; }
ibdev_exists() { [[ -d $IB/$1 ]]; }
ibdev_gone() { [[ ! -e $IB/$1 ]]; }
# rmmod_sroce: one try at unloading sroce; true once it is not loaded (for
# wait_until: the last context's module reference may still be dropping)
rmmod_sroce() { rmmod sroce 2>/dev/null || ! grep -qw '^sroce' /proc/modules; }

# port_state DEV: ACTIVE, DOWN, ... (sysfs says "4: ACTIVE")
port_state() { local s; s=$(port_attr "$1" state) || return 1; echo "${s#*: }"; }
# port_mtu DEV: active MTU in bytes.  sysfs has no active_mtu, so this asks
# ibv_devinfo (needs the provider: RDMAV_DRIVERS for the build tree).
port_mtu() {
	local out
	out=$(ibv_devinfo -d "$1" 2>/dev/null) || return 1
	[[ $out =~ active_mtu:[[:space:]]+([0-9]+) ]] || return 1
	echo "${BASH_REMATCH[1]}"
}

# gid_table DEV: "INDEX GID TYPE NETDEV" for each valid GID (TYPE with "_"
# for spaces, e.g. RoCE_v2).  One grep reads all entries: no per-file process.
gid_table() {
	(cd "$IB/$1/ports/1" && grep -s . gids/* gid_attrs/types/* gid_attrs/ndevs/*) | awk '
	{
		i = index($0, ":"); f = substr($0, 1, i - 1); v = substr($0, i + 1)
		n = f; sub(/.*\//, "", n)
		if (f ~ /^gids\//) gid[n] = v
		else if (f ~ /types/) { gsub(/ /, "_", v); type[n] = v }
		else ndev[n] = v
	}
	END {
		for (n in gid)
			if (gid[n] != "0000:0000:0000:0000:0000:0000:0000:0000")
				print n, gid[n], type[n], ndev[n]
	}' | sort -n
}

# mac_to_guid MAC: EUI-64 from a MAC as sysfs prints a GUID (xxxx:xxxx:xxxx:xxxx)
mac_to_guid() {
	local IFS=: b
	read -ra b <<< "$1"
	printf '%02x%s:%sff:fe%s:%s%s\n' $((0x${b[0]} ^ 2)) "${b[1]}" "${b[2]}" "${b[3]}" "${b[4]}" "${b[5]}"
}

# ipv4_gid A.B.C.D: the IPv4-mapped GID as sysfs prints it
ipv4_gid() {
	local IFS=. o
	read -ra o <<< "$1"
	printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x\n' "${o[@]}"
}

# ipv6_gid ADDR: full sysfs form of an IPv6 address (handles one "::")
ipv6_gid() {
	local a=$1 h=() t=() out=() n w
	if [[ $a == *::* ]]; then
		IFS=: read -ra h <<< "${a%%::*}"
		IFS=: read -ra t <<< "${a#*::}"
		out=("${h[@]}")
		for ((n = ${#h[@]} + ${#t[@]}; n < 8; n++)); do out+=(0); done
		out+=("${t[@]}")
	else
		IFS=: read -ra out <<< "$a"
	fi
	local hex=()
	for w in "${out[@]}"; do hex+=($((16#${w:-0}))); done
	printf '%04x:%04x:%04x:%04x:%04x:%04x:%04x:%04x\n' "${hex[@]}"
}

# gid_index DEV IP: index of the RoCE v2 GID of IP (IPv4 or IPv6) on DEV
gid_index() {
	local g
	if [[ $2 == *:* ]]; then g=$(ipv6_gid "$2"); else g=$(ipv4_gid "$2"); fi
	gid_table "$1" | awk -v g="$g" '$2 == g && $3 == "RoCE_v2" { print $1; exit }'
}

# has_roce_gid DEV GID: DEV's GID table has GID as a RoCE v2 entry
has_roce_gid() { gid_table "$1" | grep -q " $2 RoCE_v2 "; }

# pingpong PROG SRV_NS SRV_DEV SRV_IP CLI_NS CLI_DEV CLI_IP [ARGS...]
# Runs a perftest/libibverbs-examples style ping-pong (ibv_rc_pingpong,
# ibv_ud_pingpong, ...): server PROG on SRV_DEV in SRV_NS, client on CLI_DEV in
# CLI_NS connecting to SRV_IP, each using the GID of its IP.  Both outputs end
# up in $PP_OUT.  Succeeds if both exit 0, the client reports its rate and
# neither side says "invalid data": with -c the examples check the first
# byte of every page they receive, report a wrong one as "invalid data in
# page N" and still exit 0.
# The programs' TCP handshake listens on IPv4 only: with IPv6 GIDs, set
# PP_CONNECT to the server's IPv4 address.
pingpong() {
	local prog=$1 sns=$2 sdev=$3 sip=$4 cns=$5 cdev=$6 cip=$7 sgi cgi spid src=0 crc=0
	local port=$((20000 + RANDOM % 10000))
	shift 7
	sgi=$(gid_index "$sdev" "$sip")
	cgi=$(gid_index "$cdev" "$cip")
	if [[ -z $sgi || -z $cgi ]]; then
		PP_OUT="no RoCE v2 GID for $sip on $sdev ('$sgi') or $cip on $cdev ('$cgi')"
		return 1
	fi
	in_ns "$sns" timeout "$(scaled 60)" "$prog" -d "$sdev" -g "$sgi" -p $port "$@" > /tmp/pp.srv 2>&1 &
	spid=$!
	_pp_listening() { [[ -n $(in_ns "$sns" ss -Hltn "sport = :$port" 2>/dev/null) ]] || ! kill -0 $spid 2>/dev/null; }
	wait_until 15 _pp_listening
	in_ns "$cns" timeout "$(scaled 60)" "$prog" -d "$cdev" -g "$cgi" -p $port "$@" "${PP_CONNECT:-$sip}" \
		> /tmp/pp.cli 2>&1 || crc=$?
	wait $spid || src=$?
	PP_OUT="$prog $*
server $sdev gid $sgi, exit $src: $(< /tmp/pp.srv)
client $cdev gid $cgi -> ${PP_CONNECT:-$sip}, exit $crc: $(< /tmp/pp.cli)"
	if grep -q 'invalid data' /tmp/pp.srv /tmp/pp.cli; then
		PP_OUT+=$'\n'"(\"invalid data\": a receiver found wrong bytes in a page, above)"
		return 1
	fi
	[[ $src == 0 && $crc == 0 ]] && grep -q 'bytes in' /tmp/pp.cli && return 0
	[[ $src == 124 || $crc == 124 ]] && PP_OUT+=$'\n'"(exit 124: killed after $(scaled 60) s)"
	return 1
}

# rc_run NAME NS ARGS...: build/selftests/rc_verbs ARGS (-d DEV -g GIDX
# [-D DEV2 -G GIDX2] ...: requester on DEV, responder on DEV2 or on DEV
# itself; its whole suite, or the tests of -t) in namespace NS ("" for the
# initial one): one KTAP line NAME, rc_verbs' own KTAP (one line per test,
# expected and got status names on failure) as diagnostics.  No skip: the
# caller made the devices.  rc_verbs opens both devices in one process,
# which sees them from any namespace (rdma's shared namespace mode).  The
# test calls require_program "$RC_VERBS" rc_verbs.c first.  Every runner
# of rc_verbs (rc.sh, traffic.sh, vlan.sh, sqpoll.sh, fastrx.sh) goes
# through here.
RC_VERBS=$TOP/build/selftests/rc_verbs
rc_run() {
	local name=$1 ns=$2 out rc=0 t0=$EPOCHREALTIME i
	shift 2
	local -a a=("$@")
	for ((i = 0; i < ${#a[@]}; i++)); do
		if [[ ${a[i]} == -[gG] && -z ${a[i + 1]:-} ]]; then
			not_ok "$name: no RoCE v2 GID index for ${a[i]}"
			diag "rc_verbs $*"
			return 1
		fi
	done
	out=$(in_ns "$ns" timeout "$(scaled 240)" "$RC_VERBS" "$@" 2>&1) || rc=$?
	diag "$out"
	sub_verdict -n "$name" $rc "$out" "$t0"
	[[ $rc == 0 ]]
}

# The data tests: SENDs, WRITEs and READs of 1 B to 1 MiB, every byte
# checked.  Scripts that want more add to this list.
RC_DATA_TESTS=send_sizes_1B_to_1MiB,write_sizes_1B_to_1MiB,read_sizes

# rc_data NAME NS ARGS...: rc_run, by default of the data tests
# RC_DATA_TESTS (-t in ARGS picks others)
rc_data() {
	local name=$1 ns=$2 arg
	shift 2
	for arg; do
		[[ $arg == -t ]] && { rc_run "$name" "$ns" "$@"; return; }
	done
	rc_run "$name" "$ns" "$@" -t "$RC_DATA_TESTS"
}

# pingpong_said ARGS...: pingpong, printing $PP_OUT (both sides' output)
# when it fails, for `check`, which runs its command in a subshell and
# shows what it printed
pingpong_said() {
	pingpong "$@" && return 0
	printf '%s\n' "$PP_OUT"
	return 1
}

# netdev_of DEV: the netdev an RDMA device is bound to (from `rdma link`)
netdev_of() {
	local line
	line=$(rdma link show "$1/1" 2>/dev/null) || return 1
	line=${line##*netdev }
	echo "${line%% *}"
}

# ------------------------------------------------------------ topologies ----
#
# Every topology uses the same names, so tests, scripts/demo and
# scripts/bench agree:
#
# (a) topo_pair: sroce to sroce.  Namespaces NS_A and NS_B joined by a veth
#     pair VETH_A <-> VETH_B; device DEV_A on VETH_A, DEV_B on VETH_B.
# (b) topo_interop: rdma_rxe in the initial namespace on VETH_A (device
#     RXE_DEV), sroce in NS_B on VETH_B (DEV_B).  rdma_rxe binds UDP 4791 only
#     in the initial namespace, hence this split.
# (c) topo_loopback: one device DEV_A on VETH_A in NS_A (peer VETH_B also in
#     NS_A, up, so the carrier is on); QPs connect to the device itself.
#
# Addresses: IP4_A/IP4_B (/24) and IP6_A/IP6_B (/64, no DAD) on VETH_A/VETH_B.
# MTU: $TOPO_MTU (default 1500).  All of it is removed by topo_cleanup.

NS_A=sroce_a
NS_B=sroce_b
VETH_A=sveth_a
VETH_B=sveth_b
DEV_A=sroce0
DEV_B=sroce1
RXE_DEV=rxe0
IP4_A=192.168.77.1
IP4_B=192.168.77.2
IP6_A=fd77::1
IP6_B=fd77::2

# in_ns NS CMD...: run CMD in namespace NS ("" = initial namespace)
in_ns() {
	local ns=$1
	shift
	if [[ -n $ns ]]; then ip netns exec "$ns" "$@"; else "$@"; fi
}

# _topo_end NS IFACE IP4 IP6: configure one veth end
_topo_end() {
	local ns=$1 dev=$2 ip4=$3 ip6=$4
	in_ns "$ns" ip -b - <<EOF || return 1
link set lo up
link set $dev mtu ${TOPO_MTU:-1500}
addr add $ip4/24 dev $dev
addr add $ip6/64 dev $dev nodad
link set $dev up
EOF
}

# _topo_link NS NAME TYPE NETDEV
_topo_link() { in_ns "$1" rdma link add "$2" type "$3" netdev "$4"; }

_topo_wait_active() {
	wait_until 10 [ "$(port_state "$1")" = ACTIVE ] || {
		echo "$1: port did not become ACTIVE (state $(port_state "$1"))" >&2
		return 1
	}
}

# _topo_driver_in_ns: can $SROCE_DRIVER carry traffic from a device in a
# network namespace?  sroce can; an rdma_rxe without per-namespace sockets
# (rxe_ns.c, newer kernels; Debian's 6.1 and 6.12 route and bind in
# init_net only) cannot, so in these topologies its sends fail
# (IBV_WC_LOC_QP_OP_ERR: no route in init_net) or time out.
# Skips the whole script if no test line was printed yet; otherwise says
# why on stderr and fails, so the topology's own check reports it.
_topo_driver_in_ns() {
	local why
	[[ $SROCE_DRIVER == rxe ]] || return 0
	grep -qw rxe_ns_pernet_sk4 /proc/kallsyms && return 0
	why="rdma_rxe of $(uname -r) sends and receives only in the initial network namespace; this topology puts its devices in namespaces"
	[[ $_ktap_n -eq 0 ]] && skip_all "$why"
	echo "$why" >&2
	return 1
}

topo_pair() {
	_topo_driver_in_ns || return 1
	topo_cleanup
	ip netns add $NS_A && ip netns add $NS_B &&
	ip link add $VETH_A netns $NS_A type veth peer name $VETH_B netns $NS_B &&
	_topo_end $NS_A $VETH_A $IP4_A $IP6_A &&
	_topo_end $NS_B $VETH_B $IP4_B $IP6_B &&
	_topo_link $NS_A $DEV_A "$SROCE_DRIVER" $VETH_A &&
	_topo_link $NS_B $DEV_B "$SROCE_DRIVER" $VETH_B &&
	_topo_wait_active $DEV_A && _topo_wait_active $DEV_B
}

topo_interop() {
	_topo_driver_in_ns || return 1
	topo_cleanup
	modprobe rdma_rxe || return 1
	ip netns add $NS_B &&
	ip link add $VETH_A type veth peer name $VETH_B netns $NS_B &&
	_topo_end "" $VETH_A $IP4_A $IP6_A &&
	_topo_end $NS_B $VETH_B $IP4_B $IP6_B &&
	_topo_link "" $RXE_DEV rxe $VETH_A &&
	_topo_link $NS_B $DEV_B "$SROCE_DRIVER" $VETH_B &&
	_topo_wait_active $RXE_DEV && _topo_wait_active $DEV_B
}

topo_loopback() {
	_topo_driver_in_ns || return 1
	topo_cleanup
	ip netns add $NS_A &&
	ip -n $NS_A link add $VETH_A type veth peer name $VETH_B &&
	_topo_end $NS_A $VETH_A $IP4_A $IP6_A &&
	ip -n $NS_A link set $VETH_B up &&
	_topo_link $NS_A $DEV_A "$SROCE_DRIVER" $VETH_A &&
	_topo_wait_active $DEV_A
}

# ulp_start: the start of a kernel ULP test (nvme.sh, nfs.sh, rds.sh),
# whose rdma_cm IDs live in the initial namespace, where rdma_rxe would own
# UDP 4791: unload an idle rdma_rxe (skip if it is busy), mark the kernel
# log, load sroce (or fail the test), and note the module's reference count
# in ULP_REFCNT0 (the test checks it is back after rmmod of the ULPs).
ulp_start() {
	if grep -qw '^rdma_rxe' /proc/modules; then
		rmmod rdma_rxe 2>/dev/null || skip_all "rdma_rxe is loaded and busy (it owns UDP 4791 in init_net)"
	fi
	dmesg_mark
	sroce_load || { not_ok "load the module"; finish; }
	ULP_REFCNT0=$(< /sys/module/sroce/refcnt)
}

# ulp_cleanup MODS...: what every ULP test's exit trap undoes last: the
# devices, the veth pair, the ULP modules MODS, sroce.
ulp_cleanup() {
	local d
	for d in $DEV_A $DEV_B; do
		[[ -e $IB/$d ]] && rdma link delete "$d" 2>/dev/null
	done
	ip link del $VETH_A 2>/dev/null
	rmmod "$@" 2>/dev/null
	sroce_unload
}

# ulp_lossy_on LABEL LOSS: netem drops LOSS of the packets leaving either
# end of topo_initial_pair's veth pair, and sroce's recovery counters are
# noted for ulp_lossy_off; if netem cannot be set up, a skip of LABEL with
# the reason, and non-zero.
ulp_lossy_on() {
	local c err
	if ! err=$({ modprobe sch_netem &&
	       tc qdisc add dev $VETH_A root netem loss "$2" &&
	       tc qdisc add dev $VETH_B root netem loss "$2"; } 2>&1); then
		tc qdisc del dev $VETH_A root 2> /dev/null
		skip "$1" "no netem (sch_netem): $err"
		return 1
	fi
	_lossy_label=$1
	ulp_recovery_mark
}
# what ulp_lossy_off reports of the lossy step, both devices together
_LOSSY_SHOWN="req_retransmits req_probes req_timeouts req_empty_resends comp_naks_seq comp_naks_fatal comp_out_of_order comp_rnr_naks comp_ghosts resp_duplicates resp_fatal_naks resp_dropped"

_ulp_ctr_sum() {
	echo $(($(port_attr $DEV_A "hw_counters/$1") + $(port_attr $DEV_B "hw_counters/$1")))
}

# ulp_recovery_mark: note sroce's recovery counters (_LOSSY_SHOWN and
# req_retry_exceeded, both devices together) for ulp_recovery_moved
ulp_recovery_mark() {
	local c
	declare -gA _lossy0=()
	for c in $_LOSSY_SHOWN req_retry_exceeded; do _lossy0[$c]=$(_ulp_ctr_sum $c); done
}

# ulp_recovery_moved LABEL: one diagnostic line, how far each recovery
# counter moved since ulp_recovery_mark; the moves are left in the
# associative array _lossy_d
ulp_recovery_moved() {
	local c line=''
	declare -gA _lossy_d=()
	for c in $_LOSSY_SHOWN req_retry_exceeded; do
		_lossy_d[$c]=$(($(_ulp_ctr_sum $c) - _lossy0[$c]))
	done
	for c in $_LOSSY_SHOWN; do line+=" $c +${_lossy_d[$c]}"; done
	diag "$1:$line"
}

# ulp_lossy_off: the netem qdiscs removed; the losses were met and
# repaired: sroce retransmitted, and no QP ran out of retries (which would
# have put it in the error state and left the ULP to reconnect).  Two checks,
# named after ulp_lossy_on's LABEL.
ulp_lossy_off() {
	local label=$_lossy_label
	tc qdisc del dev $VETH_A root
	tc qdisc del dev $VETH_B root
	ulp_recovery_moved "$label"
	check "$label: sroce retransmitted (${_lossy_d[req_retransmits]} packets)" \
		test ${_lossy_d[req_retransmits]} -gt 0
	check_eq "$label: no QP ran out of retries" 0 ${_lossy_d[req_retry_exceeded]}
}

# ulp_delete_links WHAT SECS DEV...: delete the devices DEV while the ULP is
# in the state WHAT ("with RDS connected"), each gone within SECS; one
# check; then the veth pair goes.
ulp_delete_links() {
	local what=$1 secs=$2 t0=$EPOCHREALTIME d res=0
	shift 2
	for d; do rdma link delete "$d" || { res=1; break; }; done
	for d; do
		((res == 0)) || break
		wait_until "$secs" ibdev_gone "$d" || res=1
	done
	if ((res == 0)); then
		ok "rdma link delete $* $what$(_slow "$t0")"
	else
		not_ok "rdma link delete $* $what"
	fi
	ip link del $VETH_A 2>/dev/null
}

# ulp_storage_start: ulp_start, configfs mounted, and both devices in the
# initial namespace over a veth of MTU 9000 (RoCE MTU 4096): the start of
# the block-storage ULP tests, whose targets are configured in configfs
# and listen in the initial namespace.  One check.
ulp_storage_start() {
	ulp_start
	modprobe configfs 2>/dev/null
	mount | grep -q " /sys/kernel/config " || mount -t configfs none /sys/kernel/config ||
		{ not_ok "mount configfs"; finish; }
	if ! TOPO_MTU=9000 topo_initial_pair 2> /tmp/topo.err; then
		not_ok "two sroce devices in the initial namespace"
		diag "$(< /tmp/topo.err)"
		finish
	fi
	ok "two sroce devices in the initial namespace, veth MTU 9000"
}

# rc_qps DEV: number of RC QPs of DEV in state RTS
rc_qps() {
	rdma resource show qp link "$1/1" 2>/dev/null | grep -c 'type RC state RTS'
}

# fio_verify NAME BDEV MIB [verify]: fio writes MIB MiB to block device BDEV
# with crc32c verification headers through O_DIRECT, then reads every
# block back and verifies it; with "verify", only reads and verifies the
# first MIB MiB of what an earlier write left.  One check.
fio_verify() {
	local name=$1 bdev=$2 size=$3 rc=0 t0=$EPOCHREALTIME
	local args=(--name=sroce --filename="$bdev" --direct=1 --ioengine=libaio
		--iodepth=16 --bs=128k "--size=${size}M" --rw=write --verify=crc32c
		--verify_fatal=1 --do_verify=1 --verify_state_save=0 --randrepeat=0
		--output=/tmp/fio.out)
	[[ ${4:-} == verify ]] && args+=(--verify_only=1)
	fio "${args[@]}" > /tmp/fio.err 2>&1 || rc=$?
	if [[ $rc == 0 ]] && grep -q 'err= 0' /tmp/fio.out; then
		ok "$name$(_slow "$t0")"
		diag "$(grep -E '^ *(READ|WRITE):' /tmp/fio.out)"
		return 0
	fi
	not_ok "$name$(_slow "$t0")"
	diag "fio exit $rc"
	diag "$(tail -20 /tmp/fio.out /tmp/fio.err)"
	return 1
}

# cut_under_io LABEL BDEV OFFSET_MIB SIZE_MIB GONE CMD...: run CMD (a
# logout, an `rdma link delete`) 3 s into fio writing to SIZE_MIB MiB of
# block device BDEV from OFFSET_MIB on (what blktests does to rdma_rxe):
# CMD succeeds, the shell condition GONE (the disk and what held it are
# gone) holds within 20 s, fio ends (with the I/O errors expected) within
# 30 s; nothing may hang.  Three checks.
cut_under_io() {
	local label=$1 bdev=$2 off=$3 size=$4 gone=$5 pid t0
	shift 5
	fio --name=cut --filename="$bdev" --direct=1 --ioengine=libaio --iodepth=16 \
		--bs=64k --rw=randwrite "--offset=${off}M" "--size=${size}M" \
		--time_based --runtime=60 --output=/tmp/fio-cut.out > /dev/null 2>&1 &
	pid=$!
	sleep 3
	t0=$EPOCHREALTIME
	check "$label while fio writes: $*$(_slow "$t0")" "$@"
	check "$label: the disk is gone$(_slow "$t0")" wait_until 20 eval "$gone"
	if wait_until 30 eval "! kill -0 $pid 2> /dev/null"; then
		ok "$label: fio ended$(_slow "$t0")"
		diag "$(grep -E 'err=' /tmp/fio-cut.out | head -2)"
	else
		not_ok "$label: fio still running 30 s after it"
		kill -9 $pid 2> /dev/null
	fi
	wait $pid 2> /dev/null
}

# ulp_finish MODS...: the end of a ULP test, devices already deleted: the
# ULP modules MODS unload (a leaked reference makes rmmod fail), sroce's
# reference count is back to ULP_REFCNT0, sroce unloads, the log is clean.
ulp_finish() {
	check "rmmod $* (no reference left)" rmmod "$@"
	check_eq "sroce module reference count back to $ULP_REFCNT0" "$ULP_REFCNT0" "$(< /sys/module/sroce/refcnt)"
	check "rmmod sroce" rmmod sroce
	check_dmesg_clean "kernel log clean"
	finish
}

# topo_initial_pair: both veth ends and both devices (DEV_A on VETH_A with
# IP4_A, DEV_B on VETH_B with IP4_B) in the initial namespace, for the
# kernel ULPs whose rdma_cm IDs live there (nvme-rdma, RDS).  A connection
# from IP4_A resolves IP4_B out of VETH_A: the ARP request arrives on
# VETH_B from an address of this host, which the IP stack answers only
# with accept_local (and no reverse-path filter).  TOPO_MTU as for
# _topo_end.  topo_cleanup does not remove it (the ULP tests do).
topo_initial_pair() {
	local i
	ip link add $VETH_A type veth peer name $VETH_B || return 1
	for i in all $VETH_A $VETH_B; do
		sysctl -qw net.ipv4.conf.$i.accept_local=1 net.ipv4.conf.$i.rp_filter=0 || return 1
	done
	_topo_end "" $VETH_A $IP4_A $IP6_A &&
	_topo_end "" $VETH_B $IP4_B $IP6_B &&
	_topo_link "" $DEV_A "$SROCE_DRIVER" $VETH_A &&
	_topo_link "" $DEV_B "$SROCE_DRIVER" $VETH_B &&
	_topo_wait_active $DEV_A && _topo_wait_active $DEV_B
}

# topo_cleanup: remove every device and namespace the topologies create
topo_cleanup() {
	local d
	for d in $DEV_A $DEV_B $RXE_DEV; do
		[[ -e $IB/$d ]] && rdma link delete "$d" 2>/dev/null
	done
	ip link del $VETH_A 2>/dev/null
	ip netns del $NS_A 2>/dev/null
	ip netns del $NS_B 2>/dev/null
	return 0
}

# ------------------------------------------------------- rdma_cm programs ----
#
# librdmacm's example programs and perftest (-R: over rdma_cm) between two
# namespaces ("" is the initial one); each records a KTAP line.

# _descends PID ANCESTOR: PID is ANCESTOR or one of its descendants
_descends() {
	local p=$1
	while [[ -n $p ]] && ((p > 1)); do
		[[ $p == "$2" ]] && return 0
		p=$(awk '/^PPid:/ { print $2 }' "/proc/$p/status" 2>/dev/null)
	done
	return 1
}

# _cm_listening PID [PORT]: a process under PID (the server, started
# through in_ns and timeout) has an rdma_cm ID listening (on PORT, if
# given), or PID is gone.  Only the server's own: a listener left by an
# earlier case (rcopy's did, once) would have the client start too early.
_cm_listening() {
	local re=LISTEN p
	[[ -n ${2:-} ]] && re="LISTEN.*:$2( |\$)"
	for p in $(rdma resource show cm_id 2>/dev/null | grep -E "$re" |
		   grep -oE 'pid [0-9]+' | cut -d' ' -f2); do
		_descends "$p" "$1" && return 0
	done
	! kill -0 "$1" 2>/dev/null
}

# cm_pair NAME SRV_NS SRV_CMD CLI_NS CLI_CMD: run a librdmacm server and client
# (commands as single strings); both must exit 0 and neither may report a
# failed event.  The client is retried while the server is not listening
# yet (its connect is rejected).
cm_pair() {
	local name=$1 sns=$2 scmd=$3 cns=$4 ccmd=$5 spid src=0 crc=0 try t0=$EPOCHREALTIME
	in_ns "$sns" timeout 90 $scmd > /tmp/cm.srv 2>&1 &
	spid=$!
	wait_until 20 _cm_listening $spid
	for try in 1 2 3 4 5 6; do
		crc=0
		in_ns "$cns" timeout 90 $ccmd > /tmp/cm.cli 2>&1 || crc=$?
		grep -q REJECTED /tmp/cm.cli && kill -0 $spid 2>/dev/null || break
		sleep 1
	done
	wait $spid || src=$?
	if [[ $src == 0 && $crc == 0 ]] &&
	   ! grep -qiE 'error|fail|unreachable|rejected' /tmp/cm.srv /tmp/cm.cli; then
		ok "$name$(_slow "$t0")"
		return 0
	fi
	not_ok "$name$(_slow "$t0")"
	diag "server ($sns): $scmd -> exit $src"
	diag "$(tail -15 /tmp/cm.srv)"
	diag "client ($cns): $ccmd -> exit $crc (attempt $try)"
	diag "$(tail -15 /tmp/cm.cli)"
	return 1
}

_mckey_gone() { ! kill -0 "$1"; }

# _mckey_run NS_RECV BIND_RECV NS_SEND BIND_SEND GROUP: an mckey receiver
# joins GROUP, then a sender sends it 10 messages; true when both exit 0
# and report no error (outputs in /tmp/mc.rcv and /tmp/mc.snd)
_mckey_run() {
	local rns=$1 rip=$2 sns=$3 sip=$4 grp=$5 rpid rrc=0 src=0
	# Line-buffered: mckey's stdout is a file here, and the wait below
	# needs to see "receiving data" (the QP attached) when it is printed;
	# fully buffered, the wait always ran out, which on the debug kernel
	# (waits x8) outlasted the receiver's own limit.
	in_ns "$rns" timeout "$(scaled 60)" stdbuf -oL mckey -m "$grp" -b "$rip" -C 10 \
		> /tmp/mc.rcv 2>&1 &
	rpid=$!
	wait_until 15 grep -q 'receiving data' /tmp/mc.rcv
	sleep 1
	in_ns "$sns" timeout "$(scaled 60)" stdbuf -oL mckey -m "$grp" -b "$sip" -s -C 10 \
		> /tmp/mc.snd 2>&1 || src=$?
	# the sender is done: what the receiver has not got in 15 s is lost
	wait_until 15 _mckey_gone $rpid || pkill -f "^mckey -m $grp -b $rip -C"
	wait $rpid || rrc=$?
	MCKEY_RC="receiver exit $rrc, sender exit $src"
	[[ $rrc == 0 && $src == 0 ]] && ! grep -qiE 'error|fail' /tmp/mc.rcv /tmp/mc.snd
}

# _mckey_diag NS_RECV BIND_RECV NS_SEND BIND_SEND: why _mckey_run failed
_mckey_diag() {
	diag "$MCKEY_RC"
	diag "receiver ($1, $2): $(tail -8 /tmp/mc.rcv)"
	diag "sender ($3, $4): $(tail -8 /tmp/mc.snd)"
}

# mckey_pair NAME NS_RECV BIND_RECV NS_SEND BIND_SEND GROUP: mckey receiver, then a
# sender, 10 messages to the multicast GROUP; both must exit 0
mckey_pair() {
	local name=$1 t0=$EPOCHREALTIME
	shift
	if _mckey_run "$@"; then
		ok "$name$(_slow "$t0")"
		return 0
	fi
	not_ok "$name$(_slow "$t0")"
	_mckey_diag "$@"
	return 1
}

# _perftest_verdict NAME T0 CLIENT_EXIT SERVER_EXIT COMMAND: the KTAP line
# of a perftest run whose output is in /tmp/pt.srv and /tmp/pt.cli
_perftest_verdict() {
	if [[ $3 == 0 && $4 == 0 ]]; then
		ok "$1$(_slow "$2")"
		return 0
	fi
	not_ok "$1$(_slow "$2")"
	diag "$5 (client exit $3, server exit $4; 124 = timed out)"
	[[ -f /tmp/pt.stuck ]] && diag "$(< /tmp/pt.stuck)" && rm -f /tmp/pt.stuck
	diag "server: $(grep -v '^ [A-Z]' /tmp/pt.srv | tail -n 15)"
	diag "client: $(grep -v '^ [A-Z]' /tmp/pt.cli | tail -n 15)"
	return 1
}

# perftest_cm NAME SRV_NS SRV_DEV CLI_NS CLI_DEV SRV_IP PROG ARGS...: perftest over
# rdma_cm (-R: no TCP side channel) completes
perftest_cm() {
	local name=$1 sns=$2 sdev=$3 cns=$4 cdev=$5 sip=$6 prog=$7 spid src=0 crc=0 t0=$EPOCHREALTIME
	local port=$((20000 + RANDOM % 10000))
	shift 7
	in_ns "$sns" timeout 90 "$prog" -d "$sdev" -R -F -p $port "$@" > /tmp/pt.srv 2>&1 &
	spid=$!
	# this server's port: another program's listening ID is no sign
	# (a client too early is rejected, and perftest may crash on that)
	wait_until 20 _cm_listening $spid $port
	in_ns "$cns" timeout 90 "$prog" -d "$cdev" -R -F -p $port "$@" "$sip" > /tmp/pt.cli 2>&1 || crc=$?
	wait $spid || src=$?
	_perftest_verdict "$name" "$t0" $crc $src "$prog -R $*"
}

_pt_listening() { [[ -n $(in_ns "$1" ss -Hltn "sport = :$2" 2>/dev/null) ]] || ! kill -0 "$3" 2>/dev/null; }

# perftest_pair NAME SRV_NS SRV_DEV SRV_IP CLI_NS CLI_DEV CLI_IP PROG ARGS...:
# a perftest program (it checks its own completions' status) completes,
# with the GIDs of SRV_IP and CLI_IP; the client reaches the server's TCP
# side channel at SRV_IP, or at PT_CONNECT (IPv6 GIDs, IPv4 side channel).
# The client runs under the command in the array PT_CLIENT_WRAP if set
# (e.g. PT_CLIENT_WRAP=(env VAR=VALUE perf stat -o FILE --)), the server
# under PT_SERVER_WRAP.  The outputs stay in /tmp/pt.srv and /tmp/pt.cli.
perftest_pair() {
	local name=$1 sns=$2 sdev=$3 sip=$4 cns=$5 cdev=$6 cip=$7 prog=$8 sgi cgi spid wpid
	local port=$((20000 + RANDOM % 10000)) src=0 crc=0 t0=$EPOCHREALTIME
	shift 8
	sgi=$(gid_index "$sdev" "$sip")
	cgi=$(gid_index "$cdev" "$cip")
	rm -f /tmp/pt.stuck
	in_ns "$sns" timeout 90 "${PT_SERVER_WRAP[@]}" "$prog" -d "$sdev" -x "$sgi" -F -p $port "$@" \
		> /tmp/pt.srv 2>&1 &
	spid=$!
	wait_until 15 _pt_listening "$sns" $port $spid
	_pt_watchdog 85 "$prog" "$sdev" "$cdev" &
	wpid=$!
	in_ns "$cns" timeout 90 "${PT_CLIENT_WRAP[@]}" "$prog" -d "$cdev" -x "$cgi" -F -p $port "$@" \
		"${PT_CONNECT:-$sip}" > /tmp/pt.cli 2>&1 || crc=$?
	wait $spid || src=$?
	pkill -P $wpid 2>/dev/null
	kill $wpid 2>/dev/null
	wait $wpid 2>/dev/null
	_perftest_verdict "$name" "$t0" $crc $src "$prog $*"
}

# _pt_qp_brief: of restrack's QP lines (rdma -dd resource show qp), the
# fields that say where a QP stopped
_pt_qp_brief() {
	awk '{
		out = $2 " qpn " $4
		for (i = 5; i < NF; i += 2)
			if ($i ~ /^(state|drv_(next|max|unacked|expected)_psn|drv_unacked|drv_window|drv_sq_inflight|drv_retries_left|drv_rnr_wait|drv_rnr_retries_left|drv_read_resp_held|drv_held|drv_backlog|drv_read_in_progress|drv_seq_nak_sent|drv_rq_posted)$/)
				out = out " " $i "=" $(i + 1)
		print out
	}'
}

# qp_snapshot DEV [COMM]: DEV's QPs as restrack shows them (_pt_qp_brief;
# only those of process COMM, if given) and its non-zero counters, for
# the diagnostics of a hang or a stall
qp_snapshot() {
	rdma -dd resource show qp link "$1/1" | grep "comm ${2:-}" | _pt_qp_brief
	echo "$1 counters: $(rdma statistic show link "$1/1" | tr ' ' '\n' |
		paste - - | awk 'NR > 1 && $2 ~ /^[1-9]/ { printf "%s=%s ", $1, $2 }')"
}

# _pt_watchdog SECS PROG DEV...: if PROG still runs after SECS seconds
# (timeout(1) stops it at 90), save what a hang leaves behind for the
# verdict (/tmp/pt.stuck): the devices' QPs as restrack shows them (PSNs,
# RNR wait, retries left, held packets), their non-zero counters, and
# PROG's kernel stacks.  A CI log shows little more than the failure's
# diagnostics, so they must say where it stopped.
_pt_watchdog() {
	local secs=$1 prog=$2 d p pids
	shift 2
	sleep "$secs"
	pids=$(pgrep -x "$prog") || return 0
	{
		echo "$prog still running after $secs s; then:"
		for p in $pids; do
			echo "$prog pid $p kernel stack: $(awk '{ printf "%s ", $2 }' "/proc/$p/stack")"
		done
		for d in "$@"; do qp_snapshot "$d" "$prog"; done
	} > /tmp/pt.stuck.tmp 2>&1
	mv /tmp/pt.stuck.tmp /tmp/pt.stuck
}

# ------------------------------------------------------------ two guests ----
#
# In the two guests of scripts/vm-pair (SROCE_PAIR_SIDE is a or b), the
# sides talk through files in SROCE_PAIR_DIR, a directory of the host that
# both mount: "SIDE.NAME" is message NAME from SIDE.  scripts/vm-pair writes
# "SIDE.exit" when a guest has ended, so the other stops waiting for it.

PAIR_SIDE=${SROCE_PAIR_SIDE:-}
case $PAIR_SIDE in a) PAIR_PEER=b ;; b) PAIR_PEER=a ;; *) PAIR_PEER= ;; esac

# pair_post NAME [TEXT]: publish message NAME (atomically: write, then rename)
pair_post() {
	local f=$SROCE_PAIR_DIR/$PAIR_SIDE.$1
	printf '%s\n' "${2:-}" > "$f.tmp" && mv -f "$f.tmp" "$f"
}

# pair_wait NAME SECS: wait for the peer's message NAME and print it.
# Exit 1 after SECS seconds, 2 at once if the peer's guest has ended.
pair_wait() {
	local f=$SROCE_PAIR_DIR/$PAIR_PEER.$1 deadline=$((SECONDS + $2))
	until [[ -e $f ]]; do
		[[ -e $SROCE_PAIR_DIR/$PAIR_PEER.exit ]] && return 2
		[[ $SECONDS -ge $deadline ]] && return 1
		sleep 0.1
	done
	echo "$(< "$f")"
}

# pair_setup: this guest's device on the link: SROCE_DRIVER_A/SROCE_DRIVER_B
# (sroce or rxe, default sroce) for this side, named sroce0 or rxe0, on
# SROCE_PAIR_NETDEV in the only namespace; then both sides exchange a
# "hello" (driver, kernel, GID index).  Sets PAIR_DRIVER, PAIR_PEER_DRIVER,
# PAIR_DEV, PAIR_GID, PAIR_HELLO (the peer's), PAIR_ERR (why this side
# failed, empty if it did not).  Returns 0 if both sides are ready, 1 if
# this side failed, 2 if the peer failed or did not answer.  Exports
# RDMAV_DRIVERS for sroce.  pair_cleanup undoes it.
pair_setup() {
	local v=SROCE_DRIVER_${PAIR_SIDE^^} err lib
	PAIR_DRIVER=${!v:-sroce}
	v=SROCE_DRIVER_${PAIR_PEER^^}
	PAIR_PEER_DRIVER=${!v:-sroce}
	PAIR_ERR= PAIR_GID= PAIR_HELLO=
	SROCE_DRIVER=$PAIR_DRIVER
	case $PAIR_DRIVER in
	sroce) PAIR_DEV=sroce0 ;;
	rxe) PAIR_DEV=rxe0 ;;
	*) PAIR_DEV=; PAIR_ERR="SROCE_DRIVER_${PAIR_SIDE^^}='$PAIR_DRIVER': want sroce or rxe" ;;
	esac
	if [[ -z $PAIR_ERR && $PAIR_DRIVER == sroce ]]; then
		sroce_ko > /dev/null || PAIR_ERR="no sroce.ko for $(uname -r) under build/kmod (make module)"
		lib=$(provider_lib) || PAIR_ERR="no provider under build/provider (make provider)"
		export RDMAV_DRIVERS=$lib
	fi
	[[ -z $PAIR_ERR ]] && ! command -v ib_send_bw > /dev/null && PAIR_ERR="perftest is not installed"
	if [[ -z $PAIR_ERR ]]; then
		if ! sroce_load; then
			PAIR_ERR="cannot load $PAIR_DRIVER"
		elif ! err=$(rdma link add $PAIR_DEV type "$PAIR_DRIVER" netdev "$SROCE_PAIR_NETDEV" 2>&1); then
			PAIR_ERR="rdma link add $PAIR_DEV type $PAIR_DRIVER netdev $SROCE_PAIR_NETDEV: $err"
		elif ! err=$(_topo_wait_active $PAIR_DEV 2>&1); then
			PAIR_ERR=$err
		else
			PAIR_GID=$(gid_index $PAIR_DEV "$SROCE_PAIR_IP")
			[[ -z $PAIR_GID ]] && PAIR_ERR="no RoCE v2 GID for $SROCE_PAIR_IP on $PAIR_DEV"
		fi
	fi
	pair_post hello "${PAIR_ERR:+FAIL }$PAIR_DRIVER $(uname -r) ${PAIR_ERR:-gid $PAIR_GID}"
	PAIR_HELLO=$(pair_wait hello 300)
	case $? in
	1) PAIR_HELLO="FAIL no hello from guest $PAIR_PEER within 300 s" ;;
	2) PAIR_HELLO="FAIL guest $PAIR_PEER ended before saying hello" ;;
	esac
	[[ -n $PAIR_ERR ]] && return 1
	[[ $PAIR_HELLO == FAIL* ]] && return 2
	return 0
}

pair_cleanup() {
	[[ -n ${PAIR_DEV:-} ]] && rdma link delete "$PAIR_DEV" 2>/dev/null
	sroce_unload
	rmmod rdma_rxe 2>/dev/null
	return 0
}

PAIR_STEP=0
PAIR_GONE=0

# _pair_start TMO CMD...: CMD in the background (output in /tmp/pair.out),
# PID in PAIR_PID, and a watchdog that after TMO seconds saves the device's
# QPs and CQs as the stuck program left them (/tmp/pair.stuck: a CI log
# must say which side stopped and in which state) and then kills CMD.
_pair_start() {
	local tmo=$1
	shift
	rm -f /tmp/pair.stuck
	"$@" > /tmp/pair.out 2>&1 &
	PAIR_PID=$!
	(
		sleep "$tmo"
		kill -0 "$PAIR_PID" 2>/dev/null || exit 0
		{
			echo "$1 still running after $tmo s; $PAIR_DRIVER QPs and CQs then:"
			rdma -dd resource show qp link "$PAIR_DEV"
			rdma -dd resource show cq dev "$PAIR_DEV"
		} > /tmp/pair.stuck.tmp 2>&1
		mv /tmp/pair.stuck.tmp /tmp/pair.stuck
		kill -TERM "$PAIR_PID" 2>/dev/null
		sleep 5
		kill -KILL "$PAIR_PID" 2>/dev/null
	) < /dev/null > /dev/null 2>&1 &
	PAIR_WATCHDOG=$!
}

# _pair_finish: wait for _pair_start's CMD; its exit status, 124 if the
# watchdog stopped it (as timeout(1) says).  PAIR_STUCK: the watchdog's dump.
_pair_finish() {
	local rc=0

	wait "$PAIR_PID" || rc=$?
	pkill -P "$PAIR_WATCHDOG" 2>/dev/null
	kill "$PAIR_WATCHDOG" 2>/dev/null
	wait "$PAIR_WATCHDOG" 2>/dev/null
	PAIR_STUCK=
	if [[ -f /tmp/pair.stuck ]]; then
		PAIR_STUCK=$(< /tmp/pair.stuck)
		rc=124
	fi
	return $rc
}

# _pair_tcp_listening PORT PID: something listens on TCP PORT, or PID ended
_pair_tcp_listening() { [[ -n $(ss -Hltn "sport = :$1" 2>/dev/null) ]] || ! kill -0 "$2" 2>/dev/null; }

# pair_run KIND SRV_SIDE TIMEOUT PROG ARGS...: PROG's server in guest
# SRV_SIDE (a or b), its client in the other, on the devices of pair_setup.
# Both guests call it with the same arguments, in the same order.  KIND:
#   pp     libibverbs examples (ibv_rc_pingpong, ...): -d DEV -g GID -p PORT;
#          the client must also print its "bytes in" line
#   pt     perftest: -d DEV -x GID -F -p PORT
#   ptcm   perftest over rdma_cm: -d DEV -F -R -p PORT
#   rping  rping -s/-c -a ADDR -p PORT
# The server listens before the client starts (a "N.ready" message); then
# each side posts its exit status, output tail and device counters
# ("N.rc") and reads the peer's.  Sets PAIR_ROLE (server or client),
# PAIR_CMD, PAIR_RC, PAIR_OUT (this side's output), PAIR_PEER_RC,
# PAIR_PEER_MSG (the peer's output tail and counters), PAIR_STUCK (if
# this side's program ran out of time: the device's QPs and CQs as it left
# them; also sent to the peer).  Returns 0 if both
# sides exited 0.  Once the peer's guest has ended (PAIR_GONE=1), fails at
# once.
pair_run() {
	local kind=$1 srv=$2 tmo=$3 prog=$4 port pid msg out
	shift 4
	PAIR_STEP=$((PAIR_STEP + 1))
	port=$((18000 + PAIR_STEP))
	PAIR_ROLE=client PAIR_RC=0 PAIR_OUT= PAIR_PEER_RC= PAIR_PEER_MSG= PAIR_STUCK=
	[[ $PAIR_SIDE == "$srv" ]] && PAIR_ROLE=server
	case $kind in
	pp) PAIR_CMD=("$prog" -d "$PAIR_DEV" -g "$PAIR_GID" -p $port "$@") ;;
	pt) PAIR_CMD=("$prog" -d "$PAIR_DEV" -x "$PAIR_GID" -F -p $port "$@") ;;
	ptcm) PAIR_CMD=("$prog" -d "$PAIR_DEV" -F -R -p $port "$@") ;;
	rping) PAIR_CMD=(rping -p $port "$@") ;;
	*) echo "pair_run: unknown kind '$kind'" >&2; return 2 ;;
	esac
	if [[ $PAIR_GONE == 1 ]]; then
		PAIR_RC=not-run PAIR_PEER_RC=gone PAIR_PEER_MSG="guest $PAIR_PEER has ended"
		return 1
	fi
	if [[ $PAIR_ROLE == server ]]; then
		[[ $kind == rping ]] && PAIR_CMD+=(-s -a "$SROCE_PAIR_IP")
		_pair_start "$tmo" "${PAIR_CMD[@]}"
		pid=$PAIR_PID
		if [[ $kind == rping || $kind == ptcm ]]; then
			wait_until 20 _cm_listening $pid $port
		else
			wait_until 20 _pair_tcp_listening $port $pid
		fi
		pair_post $PAIR_STEP.ready
		_pair_finish || PAIR_RC=$?
	else
		if [[ $kind == rping ]]; then PAIR_CMD+=(-c -a "$SROCE_PAIR_PEER_IP"); else PAIR_CMD+=("$SROCE_PAIR_PEER_IP"); fi
		if pair_wait $PAIR_STEP.ready 60 > /dev/null; then
			_pair_start "$tmo" "${PAIR_CMD[@]}"
			_pair_finish || PAIR_RC=$?
			# the libibverbs examples exit 0 after some failed exchanges
			[[ $PAIR_RC == 0 && $kind == pp ]] && ! grep -q 'bytes in' /tmp/pair.out &&
				PAIR_RC=no-result
		else
			PAIR_RC=no-server
			echo "guest $PAIR_PEER did not start its server" > /tmp/pair.out
		fi
	fi
	# and after a -c check found wrong bytes ("invalid data in page N")
	[[ $PAIR_RC == 0 && $kind == pp ]] && grep -q 'invalid data' /tmp/pair.out &&
		PAIR_RC=invalid-data
	PAIR_OUT=$(< /tmp/pair.out)
	out=$(grep -v '^ [A-Z]' /tmp/pair.out | tail -n 12)
	# the device's counters so far: retransmits, timeouts, drops
	out+=$'\n'"$PAIR_DRIVER counters: $(rdma statistic show link "$PAIR_DEV/1" 2>&1)"
	[[ -n $PAIR_STUCK ]] && out+=$'\n'"$PAIR_STUCK"
	pair_post $PAIR_STEP.rc "$PAIR_RC
$out"
	msg=$(pair_wait $PAIR_STEP.rc $((tmo + 60)))
	case $? in
	0) PAIR_PEER_RC=${msg%%$'\n'*} PAIR_PEER_MSG=${msg#*$'\n'} ;;
	1) PAIR_PEER_RC=timeout PAIR_PEER_MSG="guest $PAIR_PEER did not report within $((tmo + 60)) s" ;;
	*) PAIR_PEER_RC=gone PAIR_PEER_MSG="guest $PAIR_PEER has ended"; PAIR_GONE=1 ;;
	esac
	[[ $PAIR_RC == 0 && $PAIR_PEER_RC == 0 ]]
}

# pair_set_mtu MTU ROCE_MTU: eth0 MTU on this side; wait (10 s at most)
# until the device's active MTU is ROCE_MTU; exchange it with the peer.
# Prints "MINE PEERS" (what both devices report).
pair_set_mtu() {
	local m msg
	ip link set "$SROCE_PAIR_NETDEV" mtu "$1"
	wait_until 10 eval '[[ $(port_mtu $PAIR_DEV) == '"$2"' ]]'
	m=$(port_mtu "$PAIR_DEV")
	pair_post mtu$1 "$m"
	msg=$(pair_wait mtu$1 60) || { PAIR_GONE=1; msg=none; }
	echo "$m $msg"
}
