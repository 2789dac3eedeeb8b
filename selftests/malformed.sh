#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# malformed.sh: malformed RoCEv2 packets at live RC QPs, on topology (a).
# build/selftests/pktgen (pktgen.cpp), with its raw socket in sroce_b, connects RC QP pairs
# sroce0 <-> sroce1 and forges packets from sroce1's address to sroce0
# through a raw socket: hand-picked cases (bad ICRC, truncated headers,
# unknown and wrong-type opcodes, bad pad, wrong P_Key, unknown QPs, wrong
# source, PSNs far out of the window, RETH past the MR or the MTU, wrong
# rkeys and PDs, misaligned atomics, responses nobody asked for), each
# checked against the exact counters it must move and the QP state the IBA
# requires, then a seeded random storm; afterwards untouched QPs move
# verified data; last, requests past gaps that are never filled, up to the
# per-QP and per-device bounds of what the responder holds.
#
#   PKTGEN_COUNT   random packets (default 3000, 500 on the debug kernel;
#                  SELFTEST_LONG=1: 50000)
#   PKTGEN_SEED    seed of the random packets (default: time; printed)
#   SROCE_FAST_RX  0: the devices take no packet off the netdev before the
#                  IP stack (kernel/rx_hook.c, on by default; fastrx.sh
#                  runs this test again with it off)

. "$(dirname "$0")/lib.sh"

PKTGEN=$TOP/build/selftests/pktgen

[[ $SROCE_DRIVER == sroce ]] || skip_all "sroce-specific (counters)"
require_sroce_provider
require_program "$PKTGEN" pktgen.cpp

count=${PKTGEN_COUNT:-$(debug_size 3000 500)}
[[ ${SELFTEST_LONG:-0} == 1 ]] && count=${PKTGEN_COUNT:-50000}

trap 'topo_cleanup; sroce_unload' EXIT
dmesg_mark
sroce_load || { not_ok "load the module"; finish; }

if ! topo_pair 2>/tmp/topo.err; then
	not_ok "topology (a)"
	diag "$(< /tmp/topo.err)"
	finish
fi
ok "topology (a)"

ga=$(gid_index $DEV_A $IP4_A) gb=$(gid_index $DEV_B $IP4_B)
if [[ -n $ga && -n $gb ]]; then
	args=(-d $DEV_A -g "$ga" -D $DEV_B -G "$gb" -N /run/netns/$NS_B -n "$count")
	[[ -n ${PKTGEN_SEED:-} ]] && args+=(-s "$PKTGEN_SEED")
	rc=0 t0=$EPOCHREALTIME
	out=$(timeout "$(scaled 150)" "$PKTGEN" "${args[@]}" 2>&1) || rc=$?
	diag "$out"
	# -n: pktgen's skips (no raw socket, devices or hw_counters, GIDs
	# not IPv4) are failures here: the devices are this test's own
	sub_verdict -n pktgen $rc "$out" "$t0" "every malformed packet dropped and counted, QPs as required"
else
	not_ok "pktgen: RoCE v2 GIDs of $IP4_A on $DEV_A ('$ga') and $IP4_B on $DEV_B ('$gb')"
	diag "$(gid_table $DEV_A; gid_table $DEV_B)"
fi

# ipv6_ext_header: a datagram from $NS_B to $IP6_A port 4791 whose IPv6
# header is followed by a Destination Options header (PadN, 8 bytes), with
# a plausible BTH: RoCEv2 has no extension headers and its ICRC could not
# cover one, so $DEV_A counts a bad header, not a bad ICRC.  With fast_rx
# the hook leaves it to the IP stack (UNHOOKED counts it for the check
# below that every other packet was hooked).
UNHOOKED=0
ipv6_ext_header() {
	local h0 i0 k0 h i out rc=0
	h0=$(port_attr $DEV_A hw_counters/rx_bad_header) i0=$(port_attr $DEV_A hw_counters/rx_bad_icrc)
	k0=$(port_attr $DEV_A hw_counters/rx_hooked)
	out=$(in_ns $NS_B /usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_DSTOPTS, bytes([0, 0, 1, 4, 0, 0, 0, 0]))
bth = bytes([0x04, 0x40, 0xff, 0xff, 0, 0, 0, 0x11, 0, 0, 0, 0])
s.sendto(bth + bytes(16) + bytes(4), (sys.argv[1], 4791))
' $IP6_A 2>&1) || rc=$?
	if [[ $rc != 0 ]]; then
		not_ok "IPv6 datagram with a Destination Options header sent # exit $rc"
		diag "$out"
		return
	fi
	wait_until 5 eval '[[ $(port_attr $DEV_A hw_counters/rx_bad_header) != "$h0" ]]'
	h=$(port_attr $DEV_A hw_counters/rx_bad_header) i=$(port_attr $DEV_A hw_counters/rx_bad_icrc)
	check_eq "IPv6 extension header: counted in rx_bad_header" 1 $((h - h0))
	check_eq "IPv6 extension header: not counted in rx_bad_icrc" 0 $((i - i0))
	if fast_rx_on; then
		check_eq "IPv6 extension header: left to the IP stack by the receive hook" \
			"$k0" "$(port_attr $DEV_A hw_counters/rx_hooked)"
		UNHOOKED=1
	fi
}
ipv6_ext_header

# The device still works for an unmodified program after the storm.
check "ibv_rc_pingpong after the storm" pingpong_said ibv_rc_pingpong $NS_B $DEV_B $IP4_B $NS_A $DEV_A $IP4_A -n 50 -s 4096 -c
# With the receive hook (the default): make sure the forged packets took
# that path
if fast_rx_on; then
	hooked=$(port_attr $DEV_A hw_counters/rx_hooked) rx=$(port_attr $DEV_A hw_counters/rx_packets)
	check_eq "$DEV_A received every other packet through the receive hook (rx_hooked $hooked)" \
		"$((rx - UNHOOKED))" "$hooked"
fi
diag "rdma statistic: $(rdma statistic show link $DEV_A/1 | tr -s ' ' | cut -c1-600)"
topo_cleanup
check_dmesg_clean "kernel log clean"
finish
