#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# perftest.sh: unmodified perftest programs complete over sroce: ib_send_bw,
# ib_write_bw, ib_read_bw, ib_atomic_bw, ib_send_lat, ib_write_lat and
# ib_read_lat between two sroce devices (topology (a)), and ib_write_bw,
# ib_send_bw and ib_read_bw between sroce and rdma_rxe (topology (b)).
# (ib_read_bw sets max_rd_atomic to the peer's max_qp_rd_atom: 128 for
# rdma_rxe, which an sroce requester must accept.)
# Completion is what is checked (perftest verifies its own completions'
# status); the figures belong to scripts/bench, not to a test.  Plus
# ibv_rc_pingpong with 1 MiB messages at RoCE MTU 1024 and 4096, and with
# 256 KiB messages at the smallest path MTUs, 256 and 512.

. "$(dirname "$0")/lib.sh"

if [[ $SROCE_DRIVER == sroce ]]; then
	sroce_ko > /dev/null || skip_all "no sroce.ko for $(uname -r) under build/kmod (make module)"
	lib=$(provider_lib) || skip_all "no provider under build/provider (make provider)"
	export RDMAV_DRIVERS=$lib
fi
command -v ib_send_bw > /dev/null || skip_all "perftest is not installed"
trap 'topo_cleanup; sroce_unload; rmmod rdma_rxe 2>/dev/null' EXIT
dmesg_mark
sroce_load || { not_ok "load the module"; finish; }

_pt_listening() { [[ -n $(in_ns "$1" ss -Hltn "sport = :$2" 2>/dev/null) ]] || ! kill -0 "$3" 2>/dev/null; }

# pt NAME SRV_NS SRV_DEV SRV_IP CLI_NS CLI_DEV CLI_IP PROG ARGS...
pt() {
	local name=$1 sns=$2 sdev=$3 sip=$4 cns=$5 cdev=$6 cip=$7 prog=$8 sgi cgi spid
	local port=$((20000 + RANDOM % 10000)) src=0 crc=0 t0=$EPOCHREALTIME
	shift 8
	sgi=$(gid_index "$sdev" "$sip")
	cgi=$(gid_index "$cdev" "$cip")
	in_ns "$sns" timeout 90 "$prog" -d "$sdev" -x "$sgi" -F -p $port "$@" > /tmp/pt.srv 2>&1 &
	spid=$!
	wait_until 15 _pt_listening "$sns" $port $spid
	in_ns "$cns" timeout 90 "$prog" -d "$cdev" -x "$cgi" -F -p $port "$@" "$sip" > /tmp/pt.cli 2>&1 || crc=$?
	wait $spid || src=$?
	if [[ $crc == 0 && $src == 0 ]]; then
		ok "$name$(_slow "$t0")"
	else
		not_ok "$name$(_slow "$t0")"
		diag "$prog $* (client exit $crc, server exit $src; 124 = timed out)"
		diag "server: $(grep -v '^ [A-Z]' /tmp/pt.srv | tail -n 15)"
		diag "client: $(grep -v '^ [A-Z]' /tmp/pt.cli | tail -n 15)"
	fi
}

if topo_pair 2>/tmp/topo.err; then
	ok "topology (a)"
	A=($NS_B $DEV_B $IP4_B $NS_A $DEV_A $IP4_A)
	pt "ib_send_bw 64 KiB" "${A[@]}" ib_send_bw -s 65536 -n 200
	pt "ib_write_bw 64 KiB" "${A[@]}" ib_write_bw -s 65536 -n 200
	pt "ib_read_bw 64 KiB" "${A[@]}" ib_read_bw -s 65536 -n 200
	pt "ib_atomic_bw" "${A[@]}" ib_atomic_bw -n 1000
	pt "ib_send_lat 64 B" "${A[@]}" ib_send_lat -s 64 -n 500
	pt "ib_write_lat 64 B" "${A[@]}" ib_write_lat -s 64 -n 500
	pt "ib_read_lat 64 B" "${A[@]}" ib_read_lat -s 64 -n 500
	pp() {
		if pingpong "$@"; then ok "${*:8} $(grep -o '[0-9.]* Mbit/sec' /tmp/pp.cli)"
		else not_ok "${*:8}"; diag "$PP_OUT"; fi
	}
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
	pt "ib_write_bw sroce server <- rxe client" $NS_B $DEV_B $IP4_B "" $RXE_DEV $IP4_A ib_write_bw -s 65536 -n 100
	pt "ib_write_bw rxe server <- sroce client" "" $RXE_DEV $IP4_A $NS_B $DEV_B $IP4_B ib_write_bw -s 65536 -n 100
	pt "ib_send_bw sroce server <- rxe client" $NS_B $DEV_B $IP4_B "" $RXE_DEV $IP4_A ib_send_bw -s 4096 -n 200
	pt "ib_read_bw sroce server <- rxe client" $NS_B $DEV_B $IP4_B "" $RXE_DEV $IP4_A ib_read_bw -s 65536 -n 100
	pt "ib_read_bw rxe server <- sroce client" "" $RXE_DEV $IP4_A $NS_B $DEV_B $IP4_B ib_read_bw -s 65536 -n 100
else
	not_ok "topology (b)"
	diag "$(< /tmp/topo.err)"
fi
check_dmesg_clean "kernel log clean"
finish
