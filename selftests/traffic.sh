#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# traffic.sh: data over sroce on the three standard topologies, with the
# libibverbs example programs checking the received bytes (-c):
#   (a) sroce <-> sroce: RC over the IPv4 and the IPv6 GID, RC with CQ
#       events, RC at MTU 4096 with 64 KiB messages
#   (UD joins when the UD datapath exists: the kernel refuses UD QPs today.)
#   (c) loopback: RC between two QPs of one device
#   (b) interop with rdma_rxe: RC both ways (last: rdma_rxe takes UDP 4791 in
#       the initial namespace until it is unloaded)
# and which received packets had their ICRC checked: none of those sroce
# sent through a veth or to itself (CHECKSUM_PARTIAL: they never crossed a
# wire, recv.c), all of rdma_rxe's; no bad ICRC anywhere.

. "$(dirname "$0")/lib.sh"

if [[ $SROCE_DRIVER == sroce ]]; then
	require_sroce_provider
fi
trap 'topo_cleanup; sroce_unload; rmmod rdma_rxe 2>/dev/null' EXIT
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

# icrc_counts DEV: its rx_packets, rx_icrc_trusted and rx_bad_icrc
icrc_counts() {
	local c out=''
	for c in rx_packets rx_icrc_trusted rx_bad_icrc; do
		out+="$(port_attr "$1" hw_counters/$c) "
	done
	echo "$out"
}

# icrc_check NAME DEV BEFORE all|none: since BEFORE (icrc_counts), DEV
# received packets, all or none of them with the ICRC trusted, none bad
icrc_check() {
	local -a b a
	local rx trusted bad want
	read -ra b <<< "$3"
	read -ra a <<< "$(icrc_counts "$2")"
	rx=$((a[0] - b[0])) trusted=$((a[1] - b[1])) bad=$((a[2] - b[2]))
	want=0
	[[ $4 == all ]] && want=$rx
	verdict "$1" "$2: received $rx, ICRC trusted $trusted, bad ICRC $bad" \
		$((rx > 0 && trusted == want && bad == 0))
}

# (a) sroce <-> sroce
if topo_pair 2>/tmp/topo.err; then
	ok "topology (a)"
	ca=$(icrc_counts $DEV_A) cb=$(icrc_counts $DEV_B)
	pp "RC IPv4, 4 KiB x 500, checked" ibv_rc_pingpong $NS_B $DEV_B $IP4_B $NS_A $DEV_A $IP4_A -c -n 500 -s 4096
	PP_CONNECT=$IP4_B pp "RC IPv6 GIDs, 4 KiB x 200, checked" ibv_rc_pingpong $NS_B $DEV_B $IP6_B $NS_A $DEV_A $IP6_A -c -n 200 -s 4096
	icrc_check "(a) over the veth, IPv4 and IPv6: every packet's ICRC trusted ($DEV_A)" $DEV_A "$ca" all
	icrc_check "(a) over the veth, IPv4 and IPv6: every packet's ICRC trusted ($DEV_B)" $DEV_B "$cb" all
	pp "RC with CQ events, 1 KiB x 200" ibv_rc_pingpong $NS_B $DEV_B $IP4_B $NS_A $DEV_A $IP4_A -e -c -n 200 -s 1024
	pp "RC small messages, 1 B x 500" ibv_rc_pingpong $NS_B $DEV_B $IP4_B $NS_A $DEV_A $IP4_A -c -n 500 -s 1
	ip -n $NS_A link set $VETH_A mtu 9000
	ip -n $NS_B link set $VETH_B mtu 9000
	pp "RC MTU 4096, 64 KiB x 100" ibv_rc_pingpong $NS_B $DEV_B $IP4_B $NS_A $DEV_A $IP4_A -m 4096 -c -n 100 -s 65536
else
	not_ok "topology (a)"
	diag "$(< /tmp/topo.err)"
fi

# (c) loopback
if topo_loopback 2>/tmp/topo.err; then
	ok "topology (c)"
	ca=$(icrc_counts $DEV_A)
	pp "loopback RC, 4 KiB x 200" ibv_rc_pingpong $NS_A $DEV_A $IP4_A $NS_A $DEV_A $IP4_A -c -n 200 -s 4096
	icrc_check "(c) loopback: every packet's ICRC trusted" $DEV_A "$ca" all
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
	icrc_check "(b) from rdma_rxe: every packet's ICRC checked" $DEV_B "$cb" none
else
	not_ok "topology (b)"
	diag "$(< /tmp/topo.err)"
fi
topo_cleanup
rmmod rdma_rxe 2>/dev/null

check_dmesg_clean "kernel log clean"
finish
