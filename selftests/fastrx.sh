#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# fastrx.sh: the receive hook (module parameter fast_rx, on by default,
# kernel/rx_hook.c), which takes RoCEv2 packets off the netdev before the
# IP stack.
#   0. fast_rx is on after a plain load.
#   1. malformed.sh again with the hook off (its default run has it on):
#      every forged packet moves the same counters and leaves the QPs in
#      the same states through the socket path (its own KTAP is passed
#      through as diagnostics).
#   2. topology (a) with the hook: rc_verbs' data tests across the pair
#      (data checked byte for byte), over IPv4 and over IPv6 GIDs; every
#      packet each device received was taken by the hook (rx_hooked ==
#      rx_packets), and the UDP layer (IPv4 and IPv6) of neither namespace
#      saw a datagram.
#   3. an nftables rule in one namespace: its device's packets, IPv4 and
#      IPv6, go through the IP stack (rx_hook_deferred; rx_hooked stays
#      0), where the rule counts them; data as before; a drop rule stops
#      RC traffic (retry counter exceeded), which the hook would have let
#      around it.
#   4. an inbound IPsec policy that blocks UDP 4791 stops RC traffic the
#      same way; with the rule and the policy gone the hook takes every
#      packet again.
#   5. the hook leaves the netdev's rx_handler free: a macvlan on the
#      hooked netdev is created and answers a ping through it, and the
#      device still takes every packet through the hook.
#   6. a netdev that already has an rx_handler (a macvlan on it): a device
#      created on it gets the hook too (every packet hooked), data as
#      before.
#   7. the netdev goes away while hooked: the device goes with it.

. "$(dirname "$0")/lib.sh"

PARAM=/sys/module/sroce/parameters/fast_rx
# On the debug kernel a 1 MiB READ outlasts rc_verbs' ACK timeout (with or
# without the hook: timeouts and resends either way), and its retry budget
# may run out: the READs are left to the regular kernel there.
DATA_TESTS=$(debug_size $RC_DATA_TESTS,psn_wraparound \
	send_sizes_1B_to_1MiB,write_sizes_1B_to_1MiB,psn_wraparound)

[[ $SROCE_DRIVER == sroce ]] || skip_all "sroce-specific (module parameter fast_rx)"
require_sroce_provider
require_program "$RC_VERBS" rc_verbs.c
modprobe macvlan 2>/dev/null

trap 'ip link del fastrx_mv 2>/dev/null; topo_cleanup; sroce_unload' EXIT
dmesg_mark

# 0. on by default (SROCE_FAST_RX, if set, would hide the default)
sroce_unload
if SROCE_FAST_RX='' sroce_load; then
	check_eq "fast_rx is on after a plain load" "$(cat $PARAM)" Y
	sroce_unload
else
	not_ok "load the module"
fi

# 1. malformed.sh through the socket path (it loads and unloads the module
# itself)
t0=$EPOCHREALTIME
out=$(SROCE_FAST_RX=0 timeout "$(scaled 200)" bash "$ST_DIR/malformed.sh" 2>&1)
rc=$?
diag "$out"
# -n: malformed.sh skips only where this test skips too (not sroce, no
# provider, pktgen not buildable here): a skip now is a failure
sub_verdict -n "malformed.sh with fast_rx=0" $rc "$out" "$t0"

sroce_load || { not_ok "load the module"; finish; }
[[ -w $PARAM ]] || { not_ok "$PARAM exists"; finish; }

COUNTERS="rx_packets rx_hooked rx_hook_deferred"
# udp_in NS: datagrams NS's UDP layer received, IPv4 and IPv6
udp_in() {
	in_ns "$1" awk '/^Udp:/ && $2 ~ /^[0-9]+$/ { n += $2 } $1 == "Udp6InDatagrams" { n += $2 }
		END { print n + 0 }' /proc/net/snmp /proc/net/snmp6
}
ctr() { port_attr "$1" "hw_counters/$2"; }

# data_run LABEL [IP_A IP_B]: rc_verbs' data tests DEV_A -> DEV_B with the
# GIDs of IP_A and IP_B (default IP4_A and IP4_B); the counter deltas in
# D[dev:counter] and D[ns:udp]
declare -A D
data_run() {
	local label=$1 ipa=${2:-$IP4_A} ipb=${3:-$IP4_B} ga gb d c
	declare -A before
	ga=$(gid_index $DEV_A $ipa) gb=$(gid_index $DEV_B $ipb)
	if [[ -z $ga || -z $gb ]]; then
		not_ok "rc_verbs data tests, $label: RoCE v2 GIDs of $ipa on $DEV_A ('$ga') and $ipb on $DEV_B ('$gb')"
		diag "$(gid_table $DEV_A; gid_table $DEV_B)"
		D=([$DEV_A:rx_packets]=0 [$DEV_A:rx_hooked]=0 [$DEV_A:rx_hook_deferred]=0
		   [$DEV_B:rx_packets]=0 [$DEV_B:rx_hooked]=0 [$DEV_B:rx_hook_deferred]=0
		   [a:udp]=0 [b:udp]=0)
		return 1
	fi
	for d in $DEV_A $DEV_B; do
		for c in $COUNTERS; do before[$d:$c]=$(ctr $d $c); done
	done
	before[a:udp]=$(udp_in $NS_A) before[b:udp]=$(udp_in $NS_B)
	rc_run "rc_verbs data tests, $label" $NS_A -d $DEV_A -g "$ga" -D $DEV_B -G "$gb" -t $DATA_TESTS
	for d in $DEV_A $DEV_B; do
		for c in $COUNTERS; do D[$d:$c]=$(( $(ctr $d $c) - ${before[$d:$c]} )); done
	done
	D[a:udp]=$(( $(udp_in $NS_A) - ${before[a:udp]} ))
	D[b:udp]=$(( $(udp_in $NS_B) - ${before[b:udp]} ))
	diag "$label: $DEV_A rx ${D[$DEV_A:rx_packets]} hooked ${D[$DEV_A:rx_hooked]} deferred ${D[$DEV_A:rx_hook_deferred]}, $DEV_B rx ${D[$DEV_B:rx_packets]} hooked ${D[$DEV_B:rx_hooked]} deferred ${D[$DEV_B:rx_hook_deferred]}; UDP datagrams $NS_A ${D[a:udp]} $NS_B ${D[b:udp]}"
}

NFT_TABLE="inet sroce_fastrx" ROCE_PORT=4791
nft_counted() { in_ns $NS_A nft list counter $NFT_TABLE roce | awk '$1 == "packets" { print $2 }'; }

# pp_counted LABEL PINGPONG-ARGS...: pingpong; its exit in PP_RC, DEV_A's
# counter deltas in D[dev:counter]
PP_RC=0
pp_counted() {
	local label=$1 c
	declare -A before
	shift
	for c in $COUNTERS; do before[$c]=$(ctr $DEV_A $c); done
	PP_RC=0
	pingpong "$@" || PP_RC=$?
	for c in $COUNTERS; do D[$DEV_A:$c]=$(( $(ctr $DEV_A $c) - ${before[$c]} )); done
	diag "$label: $1 exit $PP_RC; $DEV_A rx ${D[$DEV_A:rx_packets]} hooked ${D[$DEV_A:rx_hooked]} deferred ${D[$DEV_A:rx_hook_deferred]}"
}

# hooked_run LABEL: rc_verbs' data tests; every packet of both devices
# taken by the hook
MV_IP=192.168.77.200
hooked_run() {
	local d
	data_run "fast_rx=1, $1"
	for d in $DEV_A $DEV_B; do
		check "$1: $d received packets" test "${D[$d:rx_packets]}" -gt 100
		check_eq "$1: $d: every packet taken by the hook" \
			"${D[$d:rx_hooked]}" "${D[$d:rx_packets]}"
	done
}

# blocked WHAT: with WHAT in NS_A in the way of RoCE packets to DEV_A, an
# ibv_rc_pingpong from NS_A to NS_B fails (both sides' retries run out),
# and the hook took none of DEV_A's packets
blocked() {
	pp_counted "$1" ibv_rc_pingpong $NS_B $DEV_B $IP4_B $NS_A $DEV_A $IP4_A -n 5
	if [[ $PP_RC != 0 ]] && grep -q 'retry counter exceeded' <<< "$PP_OUT"; then
		ok "$1 stops RC traffic to $DEV_A (retry counter exceeded)"
	else
		not_ok "$1 stops RC traffic to $DEV_A (retry counter exceeded)"
		diag "$PP_OUT"
	fi
	check_eq "$DEV_A: no packet taken by the hook" "${D[$DEV_A:rx_hooked]}" 0
	check "$DEV_A: its packets left to the IP stack (rx_hook_deferred)" \
		test "${D[$DEV_A:rx_hook_deferred]}" -gt 0
}

# 2. the hook takes every packet
echo 1 > $PARAM
if topo_pair 2>/tmp/topo.err; then
	ok "topology (a) with fast_rx=1"
	# A missing one would end this block at its first arithmetic error.
	for c in $COUNTERS; do
		check "$DEV_A has counter $c" test -r "$IB/$DEV_A/ports/1/hw_counters/$c" || finish
	done
	for fam in IPv4 IPv6; do
		if [[ $fam == IPv4 ]]; then data_run "fast_rx=1"; else data_run "fast_rx=1, IPv6" $IP6_A $IP6_B; fi
		for d in $DEV_A $DEV_B; do
			check "$fam: $d received packets" test "${D[$d:rx_packets]}" -gt 100
			check_eq "$fam: $d: every packet taken by the hook (rx_hooked == rx_packets)" \
				"${D[$d:rx_hooked]}" "${D[$d:rx_packets]}"
		done
		check_eq "$fam: UDP layer of $NS_A saw no datagram" "${D[a:udp]}" 0
		check_eq "$fam: UDP layer of $NS_B saw no datagram" "${D[b:udp]}" 0
	done

	# 3. netfilter in NS_A: DEV_A's packets go to the IP stack and its rule
	if ! command -v nft > /dev/null; then
		skip "netfilter rules over the hook" "nft not installed (nftables, scripts/install-deps)"
	elif ! in_ns $NS_A nft list tables > /dev/null 2>&1; then
		skip "netfilter rules over the hook" "no nf_tables in kernel $(uname -r)"
	elif in_ns $NS_A nft -f - <<-EOF
		table $NFT_TABLE {
			counter roce { }
			chain input {
				type filter hook input priority 0; policy accept;
				udp dport $ROCE_PORT counter name roce
			}
		}
	EOF
	then
		data_run "fast_rx=1, an nftables rule in $NS_A"
		check_eq "$DEV_A: no packet taken by the hook" "${D[$DEV_A:rx_hooked]}" 0
		check "$DEV_A: its packets left to the IP stack (rx_hook_deferred)" \
			test "${D[$DEV_A:rx_hook_deferred]}" -gt 0
		check "$DEV_A's packets came through the UDP socket" \
			test "${D[a:udp]}" -ge "${D[$DEV_A:rx_packets]}"
		check "the nftables rule in $NS_A counted them" test "$(nft_counted)" -gt 0
		check_eq "$DEV_B: still every packet hooked" "${D[$DEV_B:rx_hooked]}" "${D[$DEV_B:rx_packets]}"
		# the rule's table is "inet": IPv6 input has the hook too
		PP_CONNECT=$IP4_B pp_counted "IPv6, the nftables rule in $NS_A" ibv_rc_pingpong $NS_B $DEV_B $IP6_B $NS_A $DEV_A $IP6_A -n 50
		check "IPv6: ibv_rc_pingpong with the rule" test $PP_RC = 0
		check_eq "IPv6: $DEV_A: no packet taken by the hook" "${D[$DEV_A:rx_hooked]}" 0
		check "IPv6: $DEV_A: its packets left to the IP stack (rx_hook_deferred)" \
			test "${D[$DEV_A:rx_hook_deferred]}" -gt 0

		in_ns $NS_A nft add rule $NFT_TABLE input udp dport $ROCE_PORT drop
		blocked "an nftables drop rule in $NS_A"
		in_ns $NS_A nft delete table $NFT_TABLE
	else
		not_ok "an nftables table in $NS_A"
	fi

	# 4. an inbound IPsec policy in NS_A that blocks RoCE
	if ! in_ns $NS_A ip xfrm policy list > /dev/null 2>&1; then
		skip "IPsec policies over the hook" "no xfrm netlink (XFRM_USER) in kernel $(uname -r)"
	elif in_ns $NS_A ip xfrm policy add src $IP4_B/32 dst $IP4_A/32 proto udp \
		dport $ROCE_PORT dir in action block; then
		blocked "an inbound IPsec policy in $NS_A"
		in_ns $NS_A ip xfrm policy flush
	else
		not_ok "an IPsec policy in $NS_A"
	fi
	pp_counted "no rule, no policy" ibv_rc_pingpong $NS_B $DEV_B $IP4_B $NS_A $DEV_A $IP4_A -n 50
	check "ibv_rc_pingpong without them" test $PP_RC = 0
	check "$DEV_A received packets" test "${D[$DEV_A:rx_packets]}" -gt 0
	check_eq "$DEV_A: every packet taken by the hook again" "${D[$DEV_A:rx_hooked]}" "${D[$DEV_A:rx_packets]}"

	# 5. the rx_handler stays free while hooked: a macvlan on the netdev
	check "macvlan on hooked $VETH_B" \
		in_ns $NS_B ip link add fastrx_mv link $VETH_B type macvlan mode private
	in_ns $NS_B ip addr add $MV_IP/24 dev fastrx_mv
	in_ns $NS_B ip link set fastrx_mv up
	check "ping $NS_A -> the macvlan on $VETH_B ($MV_IP)" \
		wait_until 10 in_ns $NS_A ping -c 1 -W 1 $MV_IP
	hooked_run "a macvlan on $VETH_B"

	# 6. created on a netdev whose rx_handler the macvlan holds
	in_ns $NS_B rdma link delete $DEV_B
	wait_until 10 ibdev_gone $DEV_B
	check "re-add $DEV_B on $VETH_B (macvlan holds the rx_handler)" \
		in_ns $NS_B rdma link add $DEV_B type sroce netdev $VETH_B
	wait_until 10 [ "$(port_state $DEV_B)" = ACTIVE ]
	hooked_run "$DEV_B created under the macvlan's rx_handler"
	in_ns $NS_B ip link del fastrx_mv

	# 7. the netdev goes away under a hooked device
	in_ns $NS_A ip link del $VETH_A
	check "$DEV_A removed with its netdev" wait_until 10 ibdev_gone $DEV_A
else
	not_ok "topology (a) with fast_rx=1"
	diag "$(< /tmp/topo.err)"
fi
echo 1 > $PARAM		# the default again
topo_cleanup

check_dmesg_clean "kernel log clean"
finish
