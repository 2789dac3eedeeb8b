#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# sqpoll.sh: the send queue poller (module parameter sq_poll_us,
# kernel/sq_poll.c), which sends what a user QP posts without a doorbell
# system call.  Topology (a), sroce to sroce:
#   1. sq_poll_us=200: rc_verbs' whole suite (data checked byte for byte,
#      every error status, SQD, flushes) passes, and pollers ran
#      (sq_poll_runs grew);
#   2. sq_poll_us=2000000: the same with pollers that keep polling for the
#      rest of each test (unless another task needs their CPU), so QPs are
#      modified to SQD, ERR and RESET and destroyed while a poller runs,
#      which found and sent later posts (sq_poll_kicks grew);
#   3. UC ib_send_bw (64 B and 64 KiB) with the poller completes: no
#      message overtaken and lost (UC has no retransmission);
#   4. ib_write_bw 64 B x 5,000, its write() calls counted (syscw of
#      /proc/PID/io): with the poller the client makes under 25 % as many
#      as it posts messages (the doorbell is skipped), without it one per
#      message at least; a run in which a poller backed off runs once more;
#   4b. the same with the client on CPU 0 and a perl process on CPU 1,
#      where its poller runs: one that wakes every 100 us and sleeps again
#      makes the poller leave now and then but never back off (no
#      sq_poll_backoffs: the next post starts a poller again; under 25 %
#      again; a run with a back-off runs once more; skipped on the debug
#      kernel, whose posts are further apart);
#   4c. a ping-pong (ib_write_lat, client on CPU 0, server on CPU 1): each
#      side's poller runs where the other side's process polls, leaves
#      at once and backs off (sq_poll_backoffs): half of the pollers at
#      least back off, fewer than one per message starts;
#   5. a process opts in by itself (SROCE_SQ_POLL_US=200 in its
#      environment: the provider asks in create_qp) with the module
#      parameter 0: pollers start, under 25 % again; with sq_poll_max_us=0
#      (the administrator's bound) none starts and the same process rings
#      one doorbell per message; a value that is not a number fails
#      create_qp, saying so;
#   6. the kernel log stays clean (no warning, no hung or hogging worker).

. "$(dirname "$0")/lib.sh"

PARAM=/sys/module/sroce/parameters/sq_poll_us
MAXPARAM=/sys/module/sroce/parameters/sq_poll_max_us
MSGS=5000

[[ $SROCE_DRIVER == sroce ]] || skip_all "sroce-specific (module parameter sq_poll_us)"
require_sroce_provider
require_program "$RC_VERBS" rc_verbs.c
command -v ib_write_bw > /dev/null || skip_all "perftest is not installed"
(($(nproc) > 1)) || skip_all "one CPU: the poller needs another CPU than the poster's"

trap 'echo 0 > $PARAM 2>/dev/null; topo_cleanup; sroce_unload' EXIT
dmesg_mark
sroce_load || { not_ok "load the module"; finish; }
[[ -w $PARAM && -w $MAXPARAM ]] || { not_ok "$PARAM and $MAXPARAM exist"; finish; }
# This test sets the parameter itself, and the provider would read
# SROCE_SQ_POLL_US (lib.sh applies it to the module only) in every process.
unset SROCE_SQ_POLL_US
topo_pair 2>/tmp/topo.err || { not_ok "topology (a)"; diag "$(< /tmp/topo.err)"; finish; }
ok "topology (a)"
ga=$(gid_index $DEV_A $IP4_A) gb=$(gid_index $DEV_B $IP4_B)

ctr() { port_attr $DEV_A "hw_counters/$1"; }

# suite US: rc_verbs' whole suite with sq_poll_us=US
suite() {
	local us=$1 runs kicks
	echo "$us" > $PARAM
	runs=$(ctr sq_poll_runs) kicks=$(ctr sq_poll_kicks)
	rc_run "rc_verbs suite with sq_poll_us=$us" $NS_A -d $DEV_A -g "$ga" -D $DEV_B -G "$gb"
	runs=$(($(ctr sq_poll_runs) - runs)) kicks=$(($(ctr sq_poll_kicks) - kicks))
	diag "sq_poll_us=$us: $runs pollers started, $kicks times new WQEs found, $(ctr sq_poll_yields) yields so far"
	check "sq_poll_us=$us: pollers ran ($runs)" test $runs -gt 0
	# with 2 s of polling after each doorbell, later posts are the poller's
	((us < 1000000)) || check "sq_poll_us=$us: pollers found and sent new WQEs ($kicks)" test $kicks -gt 0
	echo 0 > $PARAM
}

suite 200
suite 2000000

# UC has no retransmission: a message overtaken by a later one is lost, and
# perftest's server then waits for it until its timeout.  Passes of the
# poller and of the poster must not reorder a QP's packets (the requester
# keeps a QP on one CPU while its packets may be in flight).
echo 200 > $PARAM
A=($NS_B $DEV_B $IP4_B $NS_A $DEV_A $IP4_A)
perftest_pair "UC ib_send_bw 64 KiB with sq_poll_us=200" "${A[@]}" ib_send_bw -c UC -s 65536 -n 300
perftest_pair "UC ib_send_bw 64 B with sq_poll_us=200" "${A[@]}" ib_send_bw -c UC -s 64 -n 5000
echo 0 > $PARAM

# The client's write() calls are counted by the kernel's per-task I/O
# accounting (syscw in /proc/PID/io, CONFIG_TASK_IO_ACCOUNTING): a shell
# runs the client and reads its own counts once it has reaped it, which
# include the child's.  Not perf on the syscall tracepoint: every perf
# session that starts or ends counting per task patches __schedule()
# while the other vCPU runs it, and Debian's 6.12 under multi-threaded TCG
# dies of that now and then ("Oops: int3", Documentation/testing.rst).
COUNT=1
grep -q '^syscw:' /proc/self/io 2> /dev/null || COUNT=0
NOCOUNT="no syscw in /proc/PID/io to count write() with (CONFIG_TASK_IO_ACCOUNTING)"
# The wrapper makes no write() of its own: dash forks the grep and
# redirects its output there.
COUNTER=(sh -c '"$@"; rc=$?; grep "^syscw:" /proc/$$/io > /tmp/sqp.io; exit $rc' count-writes)

# writes US [VAR=VALUE...]: ib_write_bw 64 B x MSGS with sq_poll_us=US and
# the client's environment VAR=VALUE... (on CPU $CLIENT_CPU if set); sets
# R to the number of pollers started, Y to the times a poller left its CPU
# to another task, B to the times that made the doorbells run the
# requester for a while, and W to the number of the client's write()
# calls (strace would stop it at each call, and its own process would
# compete with the poller for a CPU)
writes() {
	local us=$1 runs yields backoffs rc=0
	shift
	echo "$us" > $PARAM
	runs=$(ctr sq_poll_runs) yields=$(ctr sq_poll_yields) backoffs=$(ctr sq_poll_backoffs)
	rm -f /tmp/sqp.io
	PT_CLIENT_WRAP=(${CLIENT_CPU:+taskset -c $CLIENT_CPU} env "$@")
	[[ $COUNT == 1 ]] && PT_CLIENT_WRAP+=("${COUNTER[@]}")
	perftest_pair "ib_write_bw 64 B x $MSGS with sq_poll_us=$us${*:+ $*}" "${A[@]}" \
		ib_write_bw -s 64 -n $MSGS || rc=1
	PT_CLIENT_WRAP=()
	echo 0 > $PARAM
	W=$(awk '$1 == "syscw:" { print $2 }' /tmp/sqp.io 2>/dev/null)
	R=$(($(ctr sq_poll_runs) - runs)) Y=$(($(ctr sq_poll_yields) - yields))
	B=$(($(ctr sq_poll_backoffs) - backoffs))
	diag "sq_poll_us=$us${*:+ $*}: $(awk '/#bytes/ { getline; print }' /tmp/pt.cli); write() calls: ${W:-not counted}; pollers started: $R, left their CPU: $Y, backed off: $B"
	[[ $rc == 0 ]] || return 1	# perftest_pair said why
	[[ $COUNT == 0 || $W =~ ^[0-9]+$ ]] || { not_ok "the client's write() calls were counted"; diag "$(cat /tmp/sqp.io 2>&1)"; return 1; }
}

# fewer WHAT: under 25 % of the posts made a write(); doorbells WHAT: one
# write() per post at least
fewer() {
	if [[ $COUNT == 1 ]]; then
		check "$1: $W write() calls for $MSGS posts (under 25 %)" test $((W * 4)) -lt $MSGS
	else
		skip "$1: write() calls under 25 % of the posts" "$NOCOUNT"
	fi
}
doorbells() {
	if [[ $COUNT == 1 ]]; then
		check "$1: $W write() calls for $MSGS posts (one each at least)" test "$W" -ge $MSGS
	else
		skip "$1: one write() call per post" "$NOCOUNT"
	fi
}

# polled WHAT US [VAR=VALUE...]: writes US VAR=VALUE..., once more if a
# poller backed off (it left its CPU to another task having found no
# post): then, by design, the posts of the next 20 ms rang the doorbell
# themselves (kernel/sq_poll.c), and the run measured that back-off, not
# the poller.  Non-zero, and the checks of WHAT reported, if neither run
# measured the poller: a failure, but a skip on the debug kernel, whose
# posts are far enough apart for a poller to meet another task first.
polled() {
	local what=$1 try
	shift
	for try in 1 2; do
		writes "$@" || return 1
		[[ $B == 0 ]] && return 0
		[[ $try == 1 ]] && diag "a poller backed off $B time(s): once more"
	done
	if [[ $SELFTEST_DEBUG_KERNEL == 1 ]]; then
		skip "$what" "a poller backed off in both runs ($B times in the second): the debug kernel posts too slowly"
	else
		not_ok "$what: a poller backed off in both runs ($B times in the second)"
	fi
	return 1
}

polled "sq_poll_us=200: write() calls under 25 % of the posts" 200 &&
	fewer "sq_poll_us=200"
writes 0 && doorbells "sq_poll_us=0"

# beside PERL US: writes US with the client on CPU 0 and, on CPU 1 (where
# the client's doorbells start its poller: the next CPU after the
# poster's, kernel/sq_poll.c), a perl process running PERL
beside() {
	local bg rc=0
	taskset -c 1 perl -e "$1" & bg=$!
	CLIENT_CPU=0 writes "$2" || rc=1
	kill $bg
	wait $bg 2> /dev/null
	return $rc
}
# A task that is woken often and runs briefly (as kworkers and timers do)
# may make a poller leave, and the next post starts one again.  A back-off
# in one run is a post that came late, after the waker's next wake-up (a
# TCG guest stalls now and then: 1 back-off in 5000 posts in one CI run of
# 6.12, session 45); in two runs in a row it is the poller's rule at
# fault, as polled() judges it.
waker_ok=0
for try in 1 2; do
	beside 'select(undef, undef, undef, 0.0001) while 1' 200 || break
	waker_ok=1
	[[ $B == 0 ]] && break
	[[ $try == 1 ]] && diag "beside the waker a poller backed off $B time(s): once more"
done
if [[ $waker_ok == 1 ]]; then
	if [[ $SELFTEST_DEBUG_KERNEL == 1 ]]; then
		# its posts are further apart than the waker's wake-ups: a
		# poller meets the waker before it finds a post, and backs
		# off by design
		skip "a task waking every 100 us on the poller's CPU: no back-off ($B here)" \
			"the debug kernel posts less often than every 100 us"
	else
		check "a task waking every 100 us on the poller's CPU: no back-off ($Y times a poller left, $B back-offs)" test "$B" = 0
	fi
	fewer "sq_poll_us=200 beside a task waking every 100 us"
fi

# A ping-pong: both processes poll, each on its own CPU, where the other
# side's poller runs.  A poller sends the post whose doorbell started it,
# finds no other (the poster waits for the reply) and leaves for the
# process: it backs off (kernel/sq_poll.c), not one poller per message.
echo 200 > $PARAM
runs=$(ctr sq_poll_runs) backoffs=$(ctr sq_poll_backoffs)
PT_CLIENT_WRAP=(taskset -c 0) PT_SERVER_WRAP=(taskset -c 1)
if perftest_pair "ib_write_lat 64 B x 1000 with sq_poll_us=200" "${A[@]}" ib_write_lat -s 64 -n 1000; then
	R=$(($(ctr sq_poll_runs) - runs)) B=$(($(ctr sq_poll_backoffs) - backoffs))
	diag "$(awk '/#bytes/ { getline; print }' /tmp/pt.cli)"
	# one poller per back-off (20 ms), however long the round trip
	check "ping-pong with sq_poll_us=200: of $R pollers for 1000 messages, $B backed off (half at least)" \
		test "$B" -gt 0 -a $((2 * B)) -ge "$R" -a "$R" -lt 1000
fi
PT_CLIENT_WRAP=() PT_SERVER_WRAP=()
echo 0 > $PARAM

# A process asks for itself: the provider's create_qp carries
# SROCE_SQ_POLL_US, the kernel bounds it by sq_poll_max_us.
if polled "SROCE_SQ_POLL_US=200 (sq_poll_us=0): pollers started, write() calls under 25 %" \
	0 SROCE_SQ_POLL_US=200; then
	check "SROCE_SQ_POLL_US=200 (sq_poll_us=0): pollers started ($R)" test "$R" -gt 0
	fewer "SROCE_SQ_POLL_US=200 (sq_poll_us=0)"
fi
max=$(< $MAXPARAM)
echo 0 > $MAXPARAM
if writes 0 SROCE_SQ_POLL_US=200; then
	check "SROCE_SQ_POLL_US=200 with sq_poll_max_us=0: no poller started ($R)" test "$R" = 0
	doorbells "SROCE_SQ_POLL_US=200 with sq_poll_max_us=0"
fi
echo "$max" > $MAXPARAM
rc=0
out=$(in_ns $NS_A env SROCE_SQ_POLL_US=200us timeout 20 ibv_rc_pingpong -d $DEV_A -g "$ga" 2>&1) || rc=$?
diag "$out"
said=no
[[ $out == *"SROCE_SQ_POLL_US='200us' is not a number of microseconds"* ]] && said=yes
check "SROCE_SQ_POLL_US=200us: create_qp fails (exit $rc) and says why ($said)" \
	test "$rc" != 0 -a "$said" = yes

topo_cleanup
check_dmesg_clean "kernel log clean"
finish
