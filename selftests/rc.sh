#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# rc.sh: every RC operation and every RC error completion, with
# build/selftests/rc_verbs (data checked byte for byte, exact statuses on
# both sides):
#   (c) loopback: requester and responder QPs on one device
#   (a) pair: requester on sroce0, responder on sroce1 across the veth pair
#   The data tests again at path MTU 256 (loopback) and 512 (pair), the
#   smallest IB MTUs: many more packets per message (a 1 MiB READ at MTU
#   256 is 4096 responses), same data checks, with the tests' short
#   retry_cnt 2 x 16.8 ms ACK timeout.
#   (a) again, the R_Key errors with the responder's NAK dropped on the
#   wire: the requester runs out of retries (rc_verbs -N); and an SRQ
#   WQE taken for a SEND whose last packet is dropped, at RESET (-L).
#   (b) interop: requester on sroce1, responder on rdma_rxe, which
#   acknowledges only when asked: a local operation behind an unsignaled
#   SEND, and the SEND and WRITE data tests; ATOMIC WRITE both ways where
#   rdma_rxe has it (6.2 on; it skips before); sroce's ODP MRs both ways
#   against rdma_rxe's pinned ones (sroce's requester faulting its own
#   pages in; rdma_rxe's requester meeting sroce's RNR NAKs for WRITE,
#   READ and atomics while sroce faults).
# Each rc_verbs run is one KTAP line here; its own KTAP (one line per test,
# with expected/got status names on failure) is passed through as
# diagnostics.

. "$(dirname "$0")/lib.sh"

if [[ $SROCE_DRIVER == sroce ]]; then
	require_sroce_provider
fi
require_program "$RC_VERBS" rc_verbs.c

# The data tests, for the runs at the small path MTUs: lib.sh's and the
# multi-SGE, pipelined, PSN wrap and SQD cases.
DATA_TESTS=$RC_DATA_TESTS,send_multi_sge,read_multi_sge_and_pipelined,psn_wraparound,sqd_drain_event_and_resume

trap 'topo_cleanup; sroce_unload; rmmod rdma_rxe 2>/dev/null' EXIT
dmesg_mark
sroce_load || { not_ok "load the module"; finish; }

# rc_suite LABEL NS ARGS...: rc_verbs in NS (lib.sh's rc_run)
rc_suite() {
	local label=$1
	shift
	rc_run "rc_verbs $label" "$@"
}

# naks_lost_suite GA GB (GID indices on DEV_A, DEV_B): the R_Key errors
# again with every remote access NAK $DEV_B sends dropped on its veth
# (rc_verbs -N): the requester runs out of retries.  A u32 filter drops
# the RoCEv2 packets (UDP 4791) whose BTH opcode is RC Acknowledge (0x11)
# and whose AETH syndrome is NAK remote access error (0x62): sroce's IPv4
# header has no options, so the BTH starts at byte 28 and the syndrome is
# byte 40.  Exactly one NAK per test is dropped: a responder QP in the
# error state answers no resend.
naks_lost_suite() {
	local ga=$1 gb=$2 err dropped
	if ! err=$(in_ns $NS_B tc qdisc add dev $VETH_B clsact 2>&1 &&
		   in_ns $NS_B tc filter add dev $VETH_B egress protocol ip u32 \
			match ip protocol 17 0xff match u16 4791 0xffff at 22 \
			match u8 0x11 0xff at 28 match u8 0x62 0xff at 40 action drop 2>&1); then
		skip "rc_verbs $DEV_A -> $DEV_B, remote access NAKs dropped" "no u32 filter with a drop action: $err"
		in_ns $NS_B tc qdisc del dev $VETH_B clsact 2> /dev/null
		return
	fi
	rc_suite "$DEV_A -> $DEV_B, remote access NAKs dropped" $NS_A -d $DEV_A -g "$ga" -D $DEV_B -G "$gb" \
		-t write_bad_rkey_nak_lost,read_bad_rkey_nak_lost -N
	dropped=$(in_ns $NS_B tc -s filter show dev $VETH_B egress | grep -o 'dropped [0-9]*' | head -1)
	check_eq "remote access NAKs the filter dropped (one per test)" 2 "${dropped#dropped }"
	in_ns $NS_B tc qdisc del dev $VETH_B clsact
}

# send_last_lost_suite GA GB: an SRQ WQE held by a QP whose message never
# completes, at RESET (rc_verbs -L).  A u32 filter on $DEV_A's veth drops
# the RoCEv2 packets whose BTH opcode is RC SEND LAST (0x02), byte 28 as
# above; transmit batches are off meanwhile, or a message's packets would
# pass the filter as one skb headed by its SEND FIRST.
send_last_lost_suite() {
	local ga=$1 gb=$2 err dropped batch
	if ! err=$(in_ns $NS_A tc qdisc add dev $VETH_A clsact 2>&1 &&
		   in_ns $NS_A tc filter add dev $VETH_A egress protocol ip u32 \
			match ip protocol 17 0xff match u16 4791 0xffff at 22 \
			match u8 0x02 0xff at 28 action drop 2>&1); then
		skip "rc_verbs $DEV_A -> $DEV_B, SEND LAST packets dropped" "no u32 filter with a drop action: $err"
		in_ns $NS_A tc qdisc del dev $VETH_A clsact 2> /dev/null
		return
	fi
	batch=$(< /sys/module/sroce/parameters/tx_batch)
	echo N > /sys/module/sroce/parameters/tx_batch
	rc_suite "$DEV_A -> $DEV_B, SEND LAST packets dropped" $NS_A -d $DEV_A -g "$ga" -D $DEV_B -G "$gb" \
		-t srq_wqe_held_mid_message_flushed_at_reset -L
	echo "$batch" > /sys/module/sroce/parameters/tx_batch
	dropped=$(in_ns $NS_A tc -s filter show dev $VETH_A egress | grep -o 'dropped [0-9]*' | head -1)
	check_ge "SEND LAST packets the filter dropped" 1 "${dropped#dropped }"
	in_ns $NS_A tc qdisc del dev $VETH_A clsact
}

# (c) loopback: two QPs of one device
if topo_loopback 2>/tmp/topo.err; then
	ok "topology (c) loopback"
	gi=$(gid_index $DEV_A $IP4_A)
	if [[ -n $gi ]]; then
		rc_suite "loopback $DEV_A (IPv4 GID $gi)" $NS_A -d $DEV_A -g "$gi"
		rc_suite "loopback $DEV_A path MTU 256" $NS_A -d $DEV_A -g "$gi" -m 256 -t $DATA_TESTS
	else
		not_ok "RoCE v2 GID of $IP4_A on $DEV_A"; diag "$(gid_table $DEV_A)"
	fi
else
	not_ok "topology (c) loopback"
	diag "$(< /tmp/topo.err)"
fi

# (a) two devices: requester on DEV_A, responder on DEV_B
if topo_pair 2>/tmp/topo.err; then
	ok "topology (a) pair"
	ga=$(gid_index $DEV_A $IP4_A) gb=$(gid_index $DEV_B $IP4_B)
	if [[ -n $ga && -n $gb ]]; then
		rc_suite "$DEV_A -> $DEV_B (GIDs $ga, $gb)" $NS_A -d $DEV_A -g "$ga" -D $DEV_B -G "$gb"
		rc_suite "$DEV_A -> $DEV_B path MTU 512" $NS_A -d $DEV_A -g "$ga" -D $DEV_B -G "$gb" -m 512 -t $DATA_TESTS
		naks_lost_suite "$ga" "$gb"
		send_last_lost_suite "$ga" "$gb"
	else
		not_ok "RoCE v2 GIDs of $IP4_A/$IP4_B"; diag "$(gid_table $DEV_A; gid_table $DEV_B)"
	fi
else
	not_ok "topology (a) pair"
	diag "$(< /tmp/topo.err)"
fi

# (b) against rdma_rxe, which acknowledges only the packets that ask: the
# requester must ask before a local operation can run, or an SQD drain
# end, behind an unsignaled SEND (rc_verbs local_op_after_unsignaled_send,
# sqd_drain_after_unsignaled_sends).
if [[ $SROCE_DRIVER == sroce ]]; then
	if topo_interop 2>/tmp/topo.err; then
		ok "topology (b) interop, $DEV_B and $RXE_DEV"
		gb=$(gid_index $DEV_B $IP4_B) gr=$(gid_index $RXE_DEV $IP4_A)
		rc_suite "$DEV_B -> $RXE_DEV (GIDs $gb, $gr)" "" -d $DEV_B -g "$gb" -D $RXE_DEV -G "$gr" \
			-t local_op_after_unsignaled_send,sqd_drain_after_unsignaled_sends,send_sizes_1B_to_1MiB,write_sizes_1B_to_1MiB,atomic_write,atomic_write_ex,odp_mrs_fault_in_and_follow_the_mapping,odp_transfers_through_invalidations
		rc_suite "$RXE_DEV -> $DEV_B (GIDs $gr, $gb)" "" -d $RXE_DEV -g "$gr" -D $DEV_B -G "$gb" \
			-t atomic_write_ex,odp_mrs_fault_in_and_follow_the_mapping
	else
		not_ok "topology (b) interop"
		diag "$(< /tmp/topo.err)"
	fi
fi
topo_cleanup

check_dmesg_clean "kernel log clean"
finish
