#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# ud.sh: UD and UC with the libibverbs example programs checking the
# received bytes (-c):
#   (a) sroce <-> sroce: UD and UC over the IPv4 and the IPv6 GID, UD with
#       CQ events, UC at MTU 4096 with 64 KiB messages
#   (c) loopback: UD and UC between two QPs of one device
#   (b) interop with rdma_rxe: UD and UC both ways
# perftest's ib_send_bw -c UD, -c UC and ib_write_bw -c UC complete, and
# ud_verbs (the UD and UC details the example programs do not look at:
# GRH area, completion fields, Q_Key, lengths, address handles, UC loss,
# a send buffer rewritten while its packet is still on the path).

. "$(dirname "$0")/lib.sh"

if [[ $SROCE_DRIVER == sroce ]]; then
	require_sroce_provider
fi
trap 'topo_cleanup; sroce_unload; rmmod rdma_rxe 2>/dev/null' EXIT
dmesg_mark
sroce_load || { not_ok "load the module"; finish; }

UDV=$TOP/build/selftests/ud_verbs
[[ -x $UDV && $UDV -nt $ST_DIR/ud_verbs.c ]] || make -s -C "$ST_DIR" > /dev/null 2>&1 ||
	not_ok "build $UDV (make -C selftests)"

# ud_suite LABEL NS ARGS...: run ud_verbs in NS; its KTAP as diagnostics
ud_suite() {
	local label=$1 ns=$2 out rc=0 t0=$EPOCHREALTIME
	shift 2
	out=$(in_ns "$ns" timeout 180 "$UDV" "$@" 2>&1) || rc=$?
	diag "$out"
	sub_verdict "ud_verbs $label" $rc "$out" "$t0"
}

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
	pp "UD IPv4, 1 KiB x 60, checked" ibv_ud_pingpong $NS_B $DEV_B $IP4_B $NS_A $DEV_A $IP4_A -c -n 60 -s 1024
	PP_CONNECT=$IP4_B pp "UD IPv6 GIDs, 1 KiB x 60, checked" ibv_ud_pingpong $NS_B $DEV_B $IP6_B $NS_A $DEV_A $IP6_A -c -n 60 -s 1024
	pp "UD with CQ events, 64 B x 60" ibv_ud_pingpong $NS_B $DEV_B $IP4_B $NS_A $DEV_A $IP4_A -e -c -n 60 -s 64
	pp "UC IPv4, 4 KiB x 60, checked" ibv_uc_pingpong $NS_B $DEV_B $IP4_B $NS_A $DEV_A $IP4_A -c -n 60 -s 4096
	PP_CONNECT=$IP4_B pp "UC IPv6 GIDs, 4 KiB x 60, checked" ibv_uc_pingpong $NS_B $DEV_B $IP6_B $NS_A $DEV_A $IP6_A -c -n 60 -s 4096
	A=($NS_B $DEV_B $IP4_B $NS_A $DEV_A $IP4_A)
	perftest_pair "ib_send_bw -c UD 1 KiB" "${A[@]}" ib_send_bw -c UD -s 1024 -n 200
	PT_CONNECT=$IP4_B perftest_pair "ib_send_bw -c UD 1 KiB, IPv6 GIDs" $NS_B $DEV_B $IP6_B $NS_A $DEV_A $IP6_A \
		ib_send_bw -c UD -s 1024 -n 200
	PT_CONNECT=$IP4_B perftest_pair "ib_send_bw -c UC 64 KiB, IPv6 GIDs" $NS_B $DEV_B $IP6_B $NS_A $DEV_A $IP6_A \
		ib_send_bw -c UC -s 65536 -n 100
	perftest_pair "ib_send_bw -c UC 64 KiB" "${A[@]}" ib_send_bw -c UC -s 65536 -n 100
	perftest_pair "ib_write_bw -c UC 64 KiB" "${A[@]}" ib_write_bw -c UC -s 65536 -n 100
	ip -n $NS_A link set $VETH_A mtu 9000
	ip -n $NS_B link set $VETH_B mtu 9000
	pp "UD MTU 4096, 4 KiB x 60" ibv_ud_pingpong $NS_B $DEV_B $IP4_B $NS_A $DEV_A $IP4_A -c -n 60 -s 4096
	pp "UC MTU 4096, 64 KiB x 60" ibv_uc_pingpong $NS_B $DEV_B $IP4_B $NS_A $DEV_A $IP4_A -m 4096 -c -n 60 -s 65536
	UD_MTU_LOWER="ip -n $NS_A link set $VETH_A mtu 1500 && ip -n $NS_B link set $VETH_B mtu 1500" \
	UD_MTU_RESTORE="ip -n $NS_A link set $VETH_A mtu 9000 && ip -n $NS_B link set $VETH_B mtu 9000" \
	ud_suite "IPv4 GIDs" $NS_A -d $DEV_A -g "$(gid_index $DEV_A $IP4_A)" \
		-D $DEV_B -G "$(gid_index $DEV_B $IP4_B)" -u 192.168.77.99
	ud_suite "IPv6 GIDs" $NS_A -d $DEV_A -g "$(gid_index $DEV_A $IP6_A)" \
		-D $DEV_B -G "$(gid_index $DEV_B $IP6_B)" -u fd77::99
	# UC under loss: 10% of A's packets dropped by netem
	modprobe sch_netem 2>/dev/null
	if tc -n $NS_A qdisc add dev $VETH_A root netem loss 10% 2>/tmp/tc.err; then
		ud_suite "UC with 10% loss" $NS_A -d $DEV_A -g "$(gid_index $DEV_A $IP4_A)" \
			-D $DEV_B -G "$(gid_index $DEV_B $IP4_B)" -L
		tc -n $NS_A qdisc del dev $VETH_A root
	else
		skip "UC with loss" "no netem: $(< /tmp/tc.err)"
	fi
	# UD and UC sends complete before the packet arrives: netem holds A's
	# packets for 100 ms while the sender rewrites its buffer
	if tc -n $NS_A qdisc add dev $VETH_A root netem delay 100ms 2>/tmp/tc.err; then
		ud_suite "send buffer reused while the packet is held" $NS_A \
			-d $DEV_A -g "$(gid_index $DEV_A $IP4_A)" \
			-D $DEV_B -G "$(gid_index $DEV_B $IP4_B)" -Q
		tc -n $NS_A qdisc del dev $VETH_A root
	else
		skip "send buffer reuse" "no netem: $(< /tmp/tc.err)"
	fi
else
	not_ok "topology (a)"
	diag "$(< /tmp/topo.err)"
fi

# (c) loopback
if topo_loopback 2>/tmp/topo.err; then
	ok "topology (c)"
	pp "loopback UD, 1 KiB x 60" ibv_ud_pingpong $NS_A $DEV_A $IP4_A $NS_A $DEV_A $IP4_A -c -n 60 -s 1024
	pp "loopback UC, 4 KiB x 60" ibv_uc_pingpong $NS_A $DEV_A $IP4_A $NS_A $DEV_A $IP4_A -c -n 60 -s 4096
else
	not_ok "topology (c)"
	diag "$(< /tmp/topo.err)"
fi

# (b) interop with rdma_rxe
if topo_interop 2>/tmp/topo.err; then
	ok "topology (b)"
	pp "interop UD, sroce server <- rxe client" ibv_ud_pingpong $NS_B $DEV_B $IP4_B "" $RXE_DEV $IP4_A -c -n 60 -s 1024
	pp "interop UD, rxe server <- sroce client" ibv_ud_pingpong "" $RXE_DEV $IP4_A $NS_B $DEV_B $IP4_B -c -n 60 -s 1024
	PP_CONNECT=$IP4_B pp "interop UD IPv6, sroce server <- rxe client" ibv_ud_pingpong $NS_B $DEV_B $IP6_B "" $RXE_DEV $IP6_A -c -n 60 -s 1024
	perftest_pair "interop ib_send_bw -c UD, rxe server <- sroce client" "" $RXE_DEV $IP4_A $NS_B $DEV_B $IP4_B ib_send_bw -c UD -s 1024 -n 100
	pp "interop UC, sroce server <- rxe client" ibv_uc_pingpong $NS_B $DEV_B $IP4_B "" $RXE_DEV $IP4_A -c -n 60 -s 4096
	pp "interop UC, rxe server <- sroce client" ibv_uc_pingpong "" $RXE_DEV $IP4_A $NS_B $DEV_B $IP4_B -c -n 60 -s 4096
else
	not_ok "topology (b)"
	diag "$(< /tmp/topo.err)"
fi
topo_cleanup
rmmod rdma_rxe 2>/dev/null

check_dmesg_clean "kernel log clean"
finish
