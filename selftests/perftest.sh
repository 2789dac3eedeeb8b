#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# perftest.sh: unmodified perftest programs complete over sroce: ib_send_bw,
# ib_write_bw, ib_read_bw, ib_atomic_bw, ib_send_lat, ib_write_lat and
# ib_read_lat between two sroce devices (topology (a)) and between sroce and
# rdma_rxe both ways (topology (b)).
# (ib_read_bw sets max_rd_atomic to the peer's max_qp_rd_atom: 128 for
# rdma_rxe, which an sroce requester must accept.)
# Also UC and UD QPs, -b, -q 4, -e, -a (every size) and --odp (on-demand
# paging) on topology (a).
# Completion is what is checked (perftest verifies its own completions'
# status); the figures belong to scripts/bench, not to a test.  Plus
# ibv_rc_pingpong with 1 MiB messages at RoCE MTU 1024 and 4096, and with
# 256 KiB messages at the smallest path MTUs, 256 and 512; with rdma_rxe both
# ways 1 B and 1 MiB at MTU 1024 and 4096.

. "$(dirname "$0")/lib.sh"

if [[ $SROCE_DRIVER == sroce ]]; then
	require_sroce_provider
fi
command -v ib_send_bw > /dev/null || skip_all "perftest is not installed"
trap 'topo_cleanup; sroce_unload; rmmod rdma_rxe 2>/dev/null' EXIT
dmesg_mark
sroce_load || { not_ok "load the module"; finish; }

odp_faults() { port_attr "$1" hw_counters/odp_faults; }

# pp PROG SRV_NS SRV_DEV SRV_IP CLI_NS CLI_DEV CLI_IP ARGS...: a ping-pong
# (data checked with -c) completes; its rate is shown
pp() {
	if pingpong "$@"; then ok "$3 server: ${*:8} $(grep -o '[0-9.]* Mbit/sec' /tmp/pp.cli)"
	else not_ok "$3 server: ${*:8}"; diag "$PP_OUT"; fi
}

if topo_pair 2>/tmp/topo.err; then
	ok "topology (a)"
	A=($NS_B $DEV_B $IP4_B $NS_A $DEV_A $IP4_A)
	perftest_pair "ib_send_bw 64 KiB" "${A[@]}" ib_send_bw -s 65536 -n 200
	# Towards a veth without a qdisc, a requester pass of 64 KiB WRITEs and
	# a READ's responses leave as transmit batches (transmit.c): one skb of
	# several packets each, counted in tx_batches (with SROCE_TX_BATCH=N:
	# none).  With a qdisc they do not form (netem.sh, slow).
	want=$(tx_batch_on)
	b0=$(tx_batches $DEV_A)
	if perftest_pair "ib_write_bw 64 KiB" "${A[@]}" ib_write_bw -s 65536 -n 200; then
		b=$(($(tx_batches $DEV_A) - b0))
		check "ib_write_bw 64 KiB: $b transmit batches (tx_batch $want)" \
			test $((b > 0)) == $want
	fi
	b0=$(tx_batches $DEV_B)
	if perftest_pair "ib_read_bw 64 KiB" "${A[@]}" ib_read_bw -s 65536 -n 200; then
		b=$(($(tx_batches $DEV_B) - b0))
		check "ib_read_bw 64 KiB: $b transmit batches of READ responses (tx_batch $want)" \
			test $((b > 0)) == $want
	fi
	perftest_pair "ib_atomic_bw" "${A[@]}" ib_atomic_bw -n 1000
	# On-demand paging (odp.c): perftest registers its buffers with
	# IBV_ACCESS_ON_DEMAND, nothing pinned; first touches are faults.
	if [[ $SROCE_DRIVER == sroce ]]; then
		f0=$(($(odp_faults $DEV_A) + $(odp_faults $DEV_B)))
		perftest_pair "ib_write_bw --odp 64 KiB" "${A[@]}" ib_write_bw --odp -s 65536 -n 200
		perftest_pair "ib_read_bw --odp 64 KiB" "${A[@]}" ib_read_bw --odp -s 65536 -n 200
		perftest_pair "ib_send_bw --odp 64 KiB" "${A[@]}" ib_send_bw --odp -s 65536 -n 200
		f=$(($(odp_faults $DEV_A) + $(odp_faults $DEV_B) - f0))
		check "perftest --odp: $f ODP faults on $DEV_A and $DEV_B" test $f -gt 0
	fi
	# perftest signals every 100th WQE: the other messages ask for no ACK
	# of their own (requester.c, sroce_req_ack_wanted()), so the client
	# receives far fewer ACKs than it sends messages (before: one each),
	# and the responder's delayed ACK retires the rest without probes.
	rx0=$(port_attr $DEV_A hw_counters/rx_packets)
	pr0=$(port_attr $DEV_A hw_counters/req_probes)
	if perftest_pair "ib_send_bw 64 B x 2000" "${A[@]}" ib_send_bw -s 64 -n 2000; then
		acks=$(($(port_attr $DEV_A hw_counters/rx_packets) - rx0))
		probes=$(($(port_attr $DEV_A hw_counters/req_probes) - pr0))
		# acks > 0: the completions need some ACK (and rx_packets that
		# did not move would pass the bound by saying nothing)
		if ((acks > 0 && acks * 2 <= 2000 && probes <= 20)); then
			ok "ib_send_bw 64 B: $acks ACKs and $probes probes for 2000 unsignaled-mostly SENDs"
		else
			not_ok "ib_send_bw 64 B: $acks ACKs and $probes probes for 2000 unsignaled-mostly SENDs (want 1 to 1000 and at most 20)"
		fi
	fi
	# The other modes a user reaches for: UC and UD QPs (without rdma_cm:
	# cm.sh has -R), both directions at once, several QPs, completion
	# events instead of polling, and every size from 2 B to 8 MiB (across
	# the inline limit, the MTU and the zero-copy threshold).
	perftest_pair "ib_write_bw -c UC 4 KiB" "${A[@]}" ib_write_bw -c UC -s 4096 -n 200
	perftest_pair "ib_send_bw -c UC 4 KiB" "${A[@]}" ib_send_bw -c UC -s 4096 -n 200
	perftest_pair "ib_send_bw -c UD 1 KiB" "${A[@]}" ib_send_bw -c UD -s 1024 -n 200
	perftest_pair "ib_write_bw -b 64 KiB (bidirectional)" "${A[@]}" ib_write_bw -b -s 65536 -n 200
	perftest_pair "ib_read_bw -q 4 4 KiB" "${A[@]}" ib_read_bw -q 4 -s 4096 -n 200
	perftest_pair "ib_send_bw -e 4 KiB (CQ events)" "${A[@]}" ib_send_bw -e -s 4096 -n 200
	perftest_pair "ib_write_bw -a (2 B to 8 MiB)" "${A[@]}" ib_write_bw -a -n 20
	perftest_pair "ib_send_lat 64 B" "${A[@]}" ib_send_lat -s 64 -n 500
	perftest_pair "ib_write_lat 64 B" "${A[@]}" ib_write_lat -s 64 -n 500
	perftest_pair "ib_read_lat 64 B" "${A[@]}" ib_read_lat -s 64 -n 500
	pp ibv_rc_pingpong "${A[@]}" -c -n 20 -s 1048576
	pp ibv_rc_pingpong "${A[@]}" -c -n 20 -s 262144 -m 256
	pp ibv_rc_pingpong "${A[@]}" -c -n 20 -s 262144 -m 512
	ip -n $NS_A link set $VETH_A mtu 9000
	ip -n $NS_B link set $VETH_B mtu 9000
	pp ibv_rc_pingpong "${A[@]}" -c -n 20 -s 1048576 -m 4096
else
	not_ok "topology (a)"
	diag "$(< /tmp/topo.err)"
fi

if topo_interop 2>/tmp/topo.err; then
	ok "topology (b)"
	S=($NS_B $DEV_B $IP4_B "" $RXE_DEV $IP4_A)	# sroce server <- rxe client
	R=("" $RXE_DEV $IP4_A $NS_B $DEV_B $IP4_B)	# rxe server <- sroce client
	for dir in S R; do
		declare -n D=$dir
		[[ $dir == S ]] && who="sroce server <- rxe client" || who="rxe server <- sroce client"
		perftest_pair "ib_send_bw $who" "${D[@]}" ib_send_bw -s 4096 -n 200
		perftest_pair "ib_write_bw $who" "${D[@]}" ib_write_bw -s 65536 -n 100
		perftest_pair "ib_read_bw $who" "${D[@]}" ib_read_bw -s 65536 -n 100
		perftest_pair "ib_atomic_bw $who" "${D[@]}" ib_atomic_bw -n 500
		perftest_pair "ib_send_lat $who" "${D[@]}" ib_send_lat -s 64 -n 200
		perftest_pair "ib_write_lat $who" "${D[@]}" ib_write_lat -s 64 -n 200
		perftest_pair "ib_read_lat $who" "${D[@]}" ib_read_lat -s 64 -n 200
		pp ibv_rc_pingpong "${D[@]}" -c -n 20 -s 1
		pp ibv_rc_pingpong "${D[@]}" -c -n 10 -s 1048576 -m 1024
		unset -n D
	done
	ip link set $VETH_A mtu 9000
	ip -n $NS_B link set $VETH_B mtu 9000
	pp ibv_rc_pingpong "${S[@]}" -c -n 10 -s 1048576 -m 4096
	pp ibv_rc_pingpong "${R[@]}" -c -n 10 -s 1048576 -m 4096
else
	not_ok "topology (b)"
	diag "$(< /tmp/topo.err)"
fi
check_dmesg_clean "kernel log clean"
finish
