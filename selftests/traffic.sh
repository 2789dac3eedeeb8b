#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# traffic.sh: data over sroce on the three standard topologies, with the
# libibverbs example programs checking the received bytes (-c: the first
# of each page) and, where only they did (ESP, bridge, loopback, rdma_rxe),
# build/selftests/rc_verbs' data tests too (SENDs, WRITEs and READs of
# 1 B to 1 MiB, every byte checked; rc.sh runs them on the plain pair):
#   (a) sroce <-> sroce: RC over the IPv4 and the IPv6 GID, RC with CQ
#       events, RC at MTU 4096 with 64 KiB messages
#   (UD joins when the UD datapath exists: the kernel refuses UD QPs today.)
#   (d) sroce on a bridge in NS_B whose port is the veth's far end: RC
#   (c) loopback: RC between two QPs of one device
#   (b) interop with rdma_rxe: RC both ways (last: rdma_rxe takes UDP 4791 in
#       the initial namespace until it is unloaded)
# and which packets had their ICRC computed and checked: none of those sroce
# sends through a veth to sroce at its far end or to itself (transmit.c:
# nobody reads it; recv.c: CHECKSUM_PARTIAL, they never crossed a wire),
# all those to or from a bridge (which may lead to a wire) or rdma_rxe, and
# all with the module parameter tx_icrc_always; no bad ICRC anywhere.

. "$(dirname "$0")/lib.sh"

if [[ $SROCE_DRIVER == sroce ]]; then
	require_sroce_provider
fi
require_program "$RC_VERBS" rc_verbs.c
trap 'topo_cleanup; sroce_unload; rmmod rdma_rxe 2>/dev/null' EXIT
ICRC_ALWAYS=/sys/module/sroce/parameters/tx_icrc_always
dmesg_mark
sroce_load || { not_ok "load the module"; finish; }

# pp NAME PROG SRV_NS SRV_DEV SRV_IP CLI_NS CLI_DEV CLI_IP ARGS...
pp() {
	local name=$1 t0=$EPOCHREALTIME
	shift
	if pingpong "$@"; then
		ok "$name$(_slow "$t0")"
		diag "$(grep 'bytes in' /tmp/pp.cli)"
	else
		not_ok "$name$(_slow "$t0")"
		diag "$PP_OUT"
	fi
}

# icrc_counts DEV: its rx_packets, rx_icrc_trusted, rx_bad_icrc, tx_packets
# and tx_icrc_skipped
icrc_counts() {
	local c out=''
	for c in rx_packets rx_icrc_trusted rx_bad_icrc tx_packets tx_icrc_skipped; do
		out+="$(port_attr "$1" hw_counters/$c) "
	done
	echo "$out"
}

# icrc_check NAME DEV BEFORE RX TX: since BEFORE (icrc_counts), DEV received
# and sent packets, none with a bad ICRC; RX all|none|some: of those
# received, the ICRC of all, none or not all trusted (not checked); TX
# all|none: of those sent, the ICRC of all or none skipped (not computed,
# as the receiver is sroce in this host, transmit.c)
icrc_check() {
	local -a b a
	local rx trusted bad tx skipped rx_ok want_skipped=0
	read -ra b <<< "$3"
	read -ra a <<< "$(icrc_counts "$2")"
	rx=$((a[0] - b[0])) trusted=$((a[1] - b[1])) bad=$((a[2] - b[2]))
	tx=$((a[3] - b[3])) skipped=$((a[4] - b[4]))
	case $4 in
	all) rx_ok=$((trusted == rx)) ;;
	none) rx_ok=$((trusted == 0)) ;;
	some) rx_ok=$((trusted < rx)) ;;
	esac
	[[ $5 == all ]] && want_skipped=$tx
	verdict "$1" "$2: received $rx, ICRC trusted $trusted, bad ICRC $bad; sent $tx, ICRC skipped $skipped" \
		$((rx > 0 && tx > 0 && rx_ok && bad == 0 && skipped == want_skipped))
}

# ipsec_on: ESP in transport mode (AES-GCM, fixed test keys) on the UDP
# packets between IP4_A and IP4_B, both ways, in both namespaces; the
# TCP connection the example programs exchange their QPNs over stays clear
ipsec_on() {
	local ns key=0x0102030405060708090a0b0c0d0e0f1011121314
	for ns in $NS_A $NS_B; do
		in_ns $ns ip -b - <<EOF || return 1
xfrm state add src $IP4_A dst $IP4_B proto esp spi 0x5a01 mode transport aead rfc4106(gcm(aes)) $key 128
xfrm state add src $IP4_B dst $IP4_A proto esp spi 0x5a02 mode transport aead rfc4106(gcm(aes)) $key 128
EOF
	done
	in_ns $NS_A ip -b - <<EOF || return 1
xfrm policy add src $IP4_A dst $IP4_B proto udp dir out tmpl proto esp mode transport
xfrm policy add src $IP4_B dst $IP4_A proto udp dir in tmpl proto esp mode transport
EOF
	in_ns $NS_B ip -b - <<EOF || return 1
xfrm policy add src $IP4_B dst $IP4_A proto udp dir out tmpl proto esp mode transport
xfrm policy add src $IP4_A dst $IP4_B proto udp dir in tmpl proto esp mode transport
EOF
}
ipsec_off() { local ns; for ns in $NS_A $NS_B; do in_ns $ns ip xfrm policy flush; in_ns $ns ip xfrm state flush; done; }

# (a) sroce <-> sroce
if topo_pair 2>/tmp/topo.err; then
	ok "topology (a)"
	ca=$(icrc_counts $DEV_A) cb=$(icrc_counts $DEV_B)
	pp "RC IPv4, 4 KiB x 500, checked" ibv_rc_pingpong $NS_B $DEV_B $IP4_B $NS_A $DEV_A $IP4_A -c -n 500 -s 4096
	PP_CONNECT=$IP4_B pp "RC IPv6 GIDs, 4 KiB x 200, checked" ibv_rc_pingpong $NS_B $DEV_B $IP6_B $NS_A $DEV_A $IP6_A -c -n 200 -s 4096
	icrc_check "(a) over the veth, IPv4 and IPv6: no packet's ICRC computed or checked ($DEV_A)" $DEV_A "$ca" all all
	icrc_check "(a) over the veth, IPv4 and IPv6: no packet's ICRC computed or checked ($DEV_B)" $DEV_B "$cb" all all
	# Without checksum offload on VETH_A the kernel fills in the UDP
	# checksum of a single packet before the veth (the packets of a batch
	# keep CHECKSUM_PARTIAL when it is split there): DEV_B then checks its
	# ICRC, as of a packet from a wire.
	if in_ns $NS_A ethtool -K $VETH_A tx off > /dev/null 2>&1; then
		ca=$(icrc_counts $DEV_A) cb=$(icrc_counts $DEV_B)
		pp "RC, $VETH_A without checksum offload, 4 KiB x 200, checked" ibv_rc_pingpong $NS_B $DEV_B $IP4_B $NS_A $DEV_A $IP4_A -c -n 200 -s 4096
		in_ns $NS_A ethtool -K $VETH_A tx on > /dev/null
		icrc_check "(a) $VETH_A without checksum offload: $DEV_A computes every ICRC" $DEV_A "$ca" all none
		icrc_check "(a) $VETH_A without checksum offload: $DEV_B checks the ICRC of packets not in a batch" $DEV_B "$cb" some all
	else
		skip "RC, $VETH_A without checksum offload" "ethtool -K $VETH_A tx off failed"
		skip "(a) $VETH_A without checksum offload: $DEV_A computes every ICRC" "ethtool -K failed"
		skip "(a) $VETH_A without checksum offload: $DEV_B checks the ICRC of packets not in a batch" "ethtool -K failed"
	fi
	# With IPsec (ESP, transport mode) on the RoCE packets the kernel fills
	# in the UDP checksum before encrypting: both ends check every ICRC.
	if ipsec_on 2>/tmp/ipsec.err; then
		ca=$(icrc_counts $DEV_A) cb=$(icrc_counts $DEV_B)
		pp "RC over ESP, 4 KiB x 100, checked" ibv_rc_pingpong $NS_B $DEV_B $IP4_B $NS_A $DEV_A $IP4_A -c -n 100 -s 4096
		# READs: read_multi_sge_and_pipelined, not read_sizes.  On 6.12
		# the receiving namespace's IPsec input loses most of a 1 MiB
		# READ's burst of responses (the veth delivered 3,004 packets,
		# UDP took 1,308) and read_sizes ran out of retries; robustness.rst,
		# "Not covered yet".
		rc_data "rc_verbs data tests over ESP, $DEV_A -> $DEV_B" $NS_A \
			-d $DEV_A -g "$(gid_index $DEV_A $IP4_A)" -D $DEV_B -G "$(gid_index $DEV_B $IP4_B)" \
			-t send_sizes_1B_to_1MiB,write_sizes_1B_to_1MiB,read_multi_sge_and_pipelined
		esp=$(in_ns $NS_B ip -s xfrm state | awk '/lifetime current/ { getline; n += $1 } END { print n + 0 }')
		ipsec_off
		check_ge "(a) over ESP: $NS_B's ESP states carried the RoCE packets (bytes)" 100000 "$esp"
		icrc_check "(a) over ESP: $DEV_A computes and checks every ICRC" $DEV_A "$ca" none none
		icrc_check "(a) over ESP: $DEV_B computes and checks every ICRC" $DEV_B "$cb" none none
	else
		skip "RC over ESP" "no IPsec: $(head -1 /tmp/ipsec.err)"
		skip "(a) over ESP: $NS_B's ESP states carried the RoCE packets (bytes)" "no IPsec"
		skip "(a) over ESP: $DEV_A computes and checks every ICRC" "no IPsec"
		skip "(a) over ESP: $DEV_B computes and checks every ICRC" "no IPsec"
	fi
	pp "RC with CQ events, 1 KiB x 200" ibv_rc_pingpong $NS_B $DEV_B $IP4_B $NS_A $DEV_A $IP4_A -e -c -n 200 -s 1024
	pp "RC small messages, 1 B x 500" ibv_rc_pingpong $NS_B $DEV_B $IP4_B $NS_A $DEV_A $IP4_A -c -n 500 -s 1
	ip -n $NS_A link set $VETH_A mtu 9000
	ip -n $NS_B link set $VETH_B mtu 9000
	pp "RC MTU 4096, 64 KiB x 100" ibv_rc_pingpong $NS_B $DEV_B $IP4_B $NS_A $DEV_A $IP4_A -m 4096 -c -n 100 -s 65536
else
	not_ok "topology (a)"
	diag "$(< /tmp/topo.err)"
fi

# (d) sroce on a bridge whose port is the far end of the veth: a bridge may
# send a packet on to a wire, so DEV_A computes every ICRC; DEV_B sends from
# the bridge, not a veth (UDP checksum 0), so DEV_A checks every ICRC too.
if topo_pair 2>/tmp/topo.err && in_ns $NS_B rdma link del $DEV_B &&
   in_ns $NS_B ip -b - <<EOF 2>>/tmp/topo.err && _topo_link $NS_B $DEV_B "$SROCE_DRIVER" sbr_b 2>>/tmp/topo.err && _topo_wait_active $DEV_B 2>>/tmp/topo.err
addr flush dev $VETH_B
link add sbr_b type bridge
link set $VETH_B master sbr_b
addr add $IP4_B/24 dev sbr_b
link set sbr_b up
EOF
then
	ok "topology (d)"
	ca=$(icrc_counts $DEV_A)
	pp "RC to sroce on a bridge, 4 KiB x 200, checked" ibv_rc_pingpong $NS_B $DEV_B $IP4_B $NS_A $DEV_A $IP4_A -c -n 200 -s 4096
	rc_data "rc_verbs data tests to sroce on a bridge, $DEV_A -> $DEV_B" $NS_A \
		-d $DEV_A -g "$(gid_index $DEV_A $IP4_A)" -D $DEV_B -G "$(gid_index $DEV_B $IP4_B)"
	icrc_check "(d) to a bridge port: every packet's ICRC computed and checked" $DEV_A "$ca" none none
else
	not_ok "topology (d)"
	diag "$(< /tmp/topo.err)"
fi

# (c) loopback
if topo_loopback 2>/tmp/topo.err; then
	ok "topology (c)"
	ca=$(icrc_counts $DEV_A)
	pp "loopback RC, 4 KiB x 200" ibv_rc_pingpong $NS_A $DEV_A $IP4_A $NS_A $DEV_A $IP4_A -c -n 200 -s 4096
	rc_data "rc_verbs data tests, loopback $DEV_A" $NS_A -d $DEV_A -g "$(gid_index $DEV_A $IP4_A)"
	icrc_check "(c) loopback: no packet's ICRC computed or checked" $DEV_A "$ca" all all
	echo 1 > $ICRC_ALWAYS
	ca=$(icrc_counts $DEV_A)
	pp "loopback RC with tx_icrc_always, 4 KiB x 100" ibv_rc_pingpong $NS_A $DEV_A $IP4_A $NS_A $DEV_A $IP4_A -c -n 100 -s 4096
	echo 0 > $ICRC_ALWAYS
	icrc_check "(c) loopback with tx_icrc_always: every packet's ICRC computed, none checked" $DEV_A "$ca" all none
else
	not_ok "topology (c)"
	diag "$(< /tmp/topo.err)"
fi

# (b) interop with rdma_rxe
if topo_interop 2>/tmp/topo.err; then
	ok "topology (b)"
	cb=$(icrc_counts $DEV_B)
	pp "interop RC, sroce server <- rxe client" ibv_rc_pingpong $NS_B $DEV_B $IP4_B "" $RXE_DEV $IP4_A -c -n 200 -s 4096
	pp "interop RC, rxe server <- sroce client" ibv_rc_pingpong "" $RXE_DEV $IP4_A $NS_B $DEV_B $IP4_B -c -n 200 -s 4096
	gb=$(gid_index $DEV_B $IP4_B) gr=$(gid_index $RXE_DEV $IP4_A)
	rc_data "rc_verbs data tests, sroce $DEV_B -> rxe $RXE_DEV" "" -d $DEV_B -g "$gb" -D $RXE_DEV -G "$gr"
	rc_data "rc_verbs data tests, rxe $RXE_DEV -> sroce $DEV_B" "" -d $RXE_DEV -g "$gr" -D $DEV_B -G "$gb"
	icrc_check "(b) with rdma_rxe: every packet's ICRC computed and checked" $DEV_B "$cb" none none
else
	not_ok "topology (b)"
	diag "$(< /tmp/topo.err)"
fi
topo_cleanup
rmmod rdma_rxe 2>/dev/null

check_dmesg_clean "kernel log clean"
finish
