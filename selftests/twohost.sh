#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# twohost.sh: RDMA between two guests, two kernels, one virtual Ethernet link
# (scripts/vm-pair).  The same script runs in both guests; they go through
# the steps below in lock step (lib.sh pair_run: messages through
# SROCE_PAIR_DIR).  Each step runs a program's server in one guest and its
# client in the other; both guests report every step with both exit
# statuses, so both print the same verdicts.
#
#   SROCE_DRIVER_A, SROCE_DRIVER_B   sroce (default) or rxe: the device of
#                                    each guest, on eth0, in its only
#                                    namespace (sroce0 or rxe0)
#   SELFTEST_TWOHOST=quick|default|long   which steps: quick (what make
#                                    check lane runs: each operation once per
#                                    MTU, directions alternating), default
#                                    (every program at both MTUs; the
#                                    latencies at RoCE MTU 1024 only), long
#                                    (every program both ways at both MTUs;
#                                    also SELFTEST_LONG=1)
#   SELFTEST_TWOHOST_CM=0            leave out the UD and rdma_cm steps
#                                    (ibv_ud_pingpong, rping, ib_write_bw -R)
#   SELFTEST_TWOHOST_ONLY=REGEX      only the steps whose name matches
#                                    (extended regex; to iterate on one)
#
# Data is verified byte for byte by ibv_rc_pingpong/ibv_ud_pingpong -c and
# rping -V; perftest checks its completions' status.  RoCE MTU 1024 runs on
# eth0 MTU 1500, RoCE MTU 4096 on eth0 MTU 9000.
#
#   scripts/vm-pair --kernel-a 6.1 --kernel-b 6.12 -- selftests/run twohost
#   SROCE_DRIVER_B=rxe scripts/vm-pair -- selftests/run twohost

. "$(dirname "$0")/lib.sh"

[[ -n $PAIR_PEER && -d ${SROCE_PAIR_DIR:-} ]] ||
	skip_all "needs two guests: scripts/vm-pair -- selftests/run twohost"
side=$PAIR_SIDE peer=$PAIR_PEER
level=${SELFTEST_TWOHOST:-default}
[[ ${SELFTEST_LONG:-0} == 1 ]] && level=long
[[ $level =~ ^(quick|default|long)$ ]] ||
	skip_all "SELFTEST_TWOHOST='$level': want quick, default or long"
cm=${SELFTEST_TWOHOST_CM:-1}

trap pair_cleanup EXIT
dmesg_mark
pair_setup
setup=$?
diag "guest $side: $PAIR_DRIVER on $(uname -r), $PAIR_DEV on $SROCE_PAIR_NETDEV $SROCE_PAIR_IP, ${PAIR_ERR:-gid $PAIR_GID}"
diag "guest $peer: $PAIR_HELLO"
case $setup in
1) not_ok "setup in guest $side"; diag "$PAIR_ERR"; finish ;;
2) skip_all "guest $peer is not ready: $PAIR_HELLO" ;;
esac
ok "setup, $PAIR_DRIVER ($side) and $PAIR_PEER_DRIVER ($peer)"

# xstep KIND SRV_SIDE TIMEOUT NAME PROG ARGS...: one KTAP line for pair_run
xstep() {
	local kind=$1 srv=$2 tmo=$3 name=$4 t0=$EPOCHREALTIME drv=$PAIR_PEER_DRIVER
	shift 4
	[[ $srv == "$side" ]] && drv=$PAIR_DRIVER
	name="$name, server $srv ($drv)"
	if pair_run "$kind" "$srv" "$tmo" "$@"; then
		ok "$name$(_slow "$t0")"
		[[ $PAIR_ROLE == client && $kind == pp ]] && diag "$(grep 'bytes in' <<< "$PAIR_OUT")"
	else
		not_ok "$name$(_slow "$t0")"
		diag "${PAIR_CMD[*]} ($PAIR_ROLE in guest $side, exit $PAIR_RC; 124 = timed out)"
		diag "$(grep -v '^ [A-Z]' <<< "$PAIR_OUT" | tail -n 12)"
		diag "$PAIR_DRIVER counters: $(rdma statistic show link "$PAIR_DEV/1" 2>&1)"
		[[ -n $PAIR_STUCK ]] && diag "$PAIR_STUCK"
		diag "guest $peer: exit $PAIR_PEER_RC"
		diag "$PAIR_PEER_MSG"
	fi
}

other() { [[ $1 == a ]] && echo b || echo a; }

# st LEVELS KIND SRV TMO NAME PROG ARGS...: a step of the sets in LEVELS
# (q: quick, d: default; long runs every step, each also the other way).
# "Server b" means guest a is the client: the requester of writes, reads
# and atomics.
st() {
	local levels=$1
	shift
	[[ -n ${SELFTEST_TWOHOST_ONLY:-} && ! $4 =~ $SELFTEST_TWOHOST_ONLY ]] && return 0
	case $level in
	quick) [[ $levels == *q* ]] && xstep "$@" ;;
	default) [[ $levels == *d* ]] && xstep "$@" ;;
	long) xstep "$@"; xstep "$1" "$(other "$2")" "${@:3}" ;;
	esac
	return 0
}

programs() { # programs ROCE_MTU
	local m=$1 lat=d deep=d
	[[ $m == 1024 ]] && lat=qd deep=qd
	st qd pp b 60 "ibv_rc_pingpong RoCE MTU $m, 4 KiB x 300, checked" ibv_rc_pingpong -m $m -c -n 300 -s 4096
	st qd pp a 60 "ibv_rc_pingpong RoCE MTU $m, 64 KiB x 50, checked" ibv_rc_pingpong -m $m -c -n 50 -s 65536
	st d pp b 90 "ibv_rc_pingpong RoCE MTU $m, 1 MiB x 10, checked" ibv_rc_pingpong -m $m -c -n 10 -s 1048576
	st qd pt b 90 "ib_write_bw RoCE MTU $m, 64 KiB x 200" ib_write_bw -m $m -s 65536 -n 200
	# 16 reads of 64 KiB in flight at RoCE MTU 4096 (1 MiB of responses):
	# on the slow TCG link that queue outlasts the 67 ms local ACK timeout
	# and sroce's go-back-N resends pile up until RETRY_EXC_ERR (open
	# issue); the quick set reads 4 at a time there.
	st $deep pt a 90 "ib_read_bw RoCE MTU $m, 64 KiB x 200" ib_read_bw -m $m -s 65536 -n 200
	[[ $m == 4096 ]] &&
		st qd pt a 90 "ib_read_bw RoCE MTU $m, 64 KiB x 200, 4 outstanding" ib_read_bw -m $m -s 65536 -n 200 -o 4
	st qd pt b 90 "ib_send_bw RoCE MTU $m, 64 KiB x 200" ib_send_bw -m $m -s 65536 -n 200
	st qd pt a 90 "ib_atomic_bw RoCE MTU $m, x 500" ib_atomic_bw -m $m -n 500
	st $lat pt b 90 "ib_write_lat RoCE MTU $m, 64 B x 300" ib_write_lat -m $m -s 64 -n 300
	st $lat pt a 90 "ib_read_lat RoCE MTU $m, 64 B x 300" ib_read_lat -m $m -s 64 -n 300
	st d pt b 90 "ib_send_lat RoCE MTU $m, 64 B x 300" ib_send_lat -m $m -s 64 -n 300
	st d pt a 90 "ib_atomic_lat RoCE MTU $m, x 300" ib_atomic_lat -m $m -n 300
	if [[ $cm == 1 ]]; then
		st qd pp b 60 "ibv_ud_pingpong RoCE MTU $m, $m B x 300, checked" ibv_ud_pingpong -c -n 300 -s $m
		st qd rping a 60 "rping RoCE MTU $m, 4 KiB x 100, verified" rping -V -C 100 -S 4096
		st qd ptcm b 90 "ib_write_bw -R RoCE MTU $m, 64 KiB x 200" ib_write_bw -s 65536 -n 200
	else
		skip "UD and rdma_cm steps (ibv_ud_pingpong, rping, ib_write_bw -R) at RoCE MTU $m" \
			"SELFTEST_TWOHOST_CM=0 leaves them out"
	fi
}

diag "steps: $level set$([[ $cm == 1 ]] && echo ', with UD and rdma_cm')"
for mtu in 1500:1024 9000:4096; do
	t0=$EPOCHREALTIME
	got=$(pair_set_mtu ${mtu%:*} ${mtu#*:})
	check_eq "eth0 MTU ${mtu%:*}: RoCE MTU ${mtu#*:} in both guests$(_slow "$t0")" \
		"${mtu#*:} ${mtu#*:}" "$got"
	programs ${mtu#*:}
done

# What recovery cost over all steps (resends, probes, timeouts, duplicates)
diag "$PAIR_DRIVER counters at the end: $(rdma statistic show link "$PAIR_DEV/1" 2>&1)"
# Packets that came through a NIC carry no "never left this host" mark
# (CHECKSUM_PARTIAL, recv.c): sroce checks every one's ICRC.
if [[ $PAIR_DRIVER == sroce ]]; then
	rx=$(port_attr $PAIR_DEV hw_counters/rx_packets)
	trusted=$(port_attr $PAIR_DEV hw_counters/rx_icrc_trusted)
	bad=$(port_attr $PAIR_DEV hw_counters/rx_bad_icrc)
	verdict "every packet received over $SROCE_PAIR_NETDEV had its ICRC checked" \
		"received $rx, ICRC trusted $trusted, bad ICRC $bad" $((rx > 0 && trusted == 0))
else
	skip "ICRC checked over $SROCE_PAIR_NETDEV" "$PAIR_DRIVER in guest $side"
fi
check_dmesg_clean "kernel log clean in guest $side"
finish
