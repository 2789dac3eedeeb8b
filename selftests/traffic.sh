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

# (a) sroce <-> sroce
if topo_pair 2>/tmp/topo.err; then
	ok "topology (a)"
	pp "RC IPv4, 4 KiB x 500, checked" ibv_rc_pingpong $NS_B $DEV_B $IP4_B $NS_A $DEV_A $IP4_A -c -n 500 -s 4096
	PP_CONNECT=$IP4_B pp "RC IPv6 GIDs, 4 KiB x 200, checked" ibv_rc_pingpong $NS_B $DEV_B $IP6_B $NS_A $DEV_A $IP6_A -c -n 200 -s 4096
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
	pp "loopback RC, 4 KiB x 200" ibv_rc_pingpong $NS_A $DEV_A $IP4_A $NS_A $DEV_A $IP4_A -c -n 200 -s 4096
else
	not_ok "topology (c)"
	diag "$(< /tmp/topo.err)"
fi

# (b) interop with rdma_rxe
if topo_interop 2>/tmp/topo.err; then
	ok "topology (b)"
	pp "interop RC, sroce server <- rxe client" ibv_rc_pingpong $NS_B $DEV_B $IP4_B "" $RXE_DEV $IP4_A -c -n 200 -s 4096
	pp "interop RC, rxe server <- sroce client" ibv_rc_pingpong "" $RXE_DEV $IP4_A $NS_B $DEV_B $IP4_B -c -n 200 -s 4096
else
	not_ok "topology (b)"
	diag "$(< /tmp/topo.err)"
fi
topo_cleanup
rmmod rdma_rxe 2>/dev/null

check_dmesg_clean "kernel log clean"
finish
