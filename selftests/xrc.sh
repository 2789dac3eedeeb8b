#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# xrc.sh: XRC (rdma_rxe has none): XRC domains, XRC SRQs, XRC send
# (initiator) and receive (target) QPs.
#   ibv_xsrq_pingpong (libibverbs' example; it checks nothing but that every
#   completion succeeds and comes from a known QP): (c) loopback on one
#   device, and (a) across DEV_A and DEV_B with two clients sharing the
#   server's XRC SRQ, messages of several packets.
#   build/selftests/xrc_verbs: what the example does not check, byte for
#   byte and status for status (two SRQs in one domain, steering by SRQ
#   number, wrong SRQ numbers, RDMA and atomics through an XRC send QP,
#   destroy order), loopback and across the pair; and the
#   resp_xrc_bad_srq counter its bad-SRQ tests must move.

. "$(dirname "$0")/lib.sh"

XRC=$TOP/build/selftests/xrc_verbs
XSRQ=$(command -v ibv_xsrq_pingpong) || skip_all "no ibv_xsrq_pingpong (ibverbs-utils)"

if [[ $SROCE_DRIVER == sroce ]]; then
	require_sroce_provider
fi
require_program "$XRC" xrc_verbs.c

trap 'topo_cleanup; sroce_unload' EXIT
dmesg_mark
sroce_load || { not_ok "load the module"; finish; }

# xsrq LABEL SNS SDEV SIP CLIENTS ARGS... -- one server in SNS on SDEV,
# CLIENTS clients ("NS DEV IP" each, space separated, one per argument
# after --), all with ARGS.  Passes when every process exits 0 and prints
# "success".
xsrq() {
	local label=$1 sns=$2 sdev=$3 sip=$4 port=$((20000 + RANDOM % 10000))
	local args=() clients=() pids=() sgi cgi c ns dev ip i rc=0 out t0=$EPOCHREALTIME
	shift 4
	while [[ $# -gt 0 && $1 != -- ]]; do args+=("$1"); shift; done
	shift
	clients=("$@")
	sgi=$(gid_index "$sdev" "$sip") || { not_ok "$label: GID of $sip"; return; }
	in_ns "$sns" timeout "$(scaled 90)" "$XSRQ" -d "$sdev" -g "$sgi" -p $port \
		-c ${#clients[@]} "${args[@]}" > /tmp/xsrq.srv 2>&1 &
	pids+=($!)
	_xsrq_listening() { [[ -n $(in_ns "$sns" ss -Hltn "sport = :$port" 2>/dev/null) ]]; }
	wait_until 15 _xsrq_listening
	i=0
	for c in "${clients[@]}"; do
		read -r ns dev ip <<< "$c"
		cgi=$(gid_index "$dev" "$ip")
		in_ns "$ns" timeout "$(scaled 90)" "$XSRQ" -d "$dev" -g "$cgi" -p $port \
			"${args[@]}" "$sip" > /tmp/xsrq.cli$i 2>&1 &
		pids+=($!)
		i=$((i + 1))
	done
	for i in "${!pids[@]}"; do wait "${pids[$i]}" || rc=$?; done
	out="server: $(< /tmp/xsrq.srv)"
	for i in "${!clients[@]}"; do out+=$'\n'"client $i: $(< /tmp/xsrq.cli$i)"; done
	if [[ $rc == 0 ]] && [[ $(grep -c '^success' /tmp/xsrq.srv /tmp/xsrq.cli* | awk -F: '{s += $2} END {print s}') == $((${#clients[@]} + 1)) ]]; then
		ok "ibv_xsrq_pingpong $label$(_slow "$t0")"
	else
		not_ok "ibv_xsrq_pingpong $label # exit $rc"
		diag "$out"
	fi
	rm -f /tmp/xsrq.srv /tmp/xsrq.cli*
}

# xrc_suite LABEL NS ARGS...: run xrc_verbs in NS; its KTAP as diagnostics
xrc_suite() {
	local label=$1 ns=$2 out rc=0 t0=$EPOCHREALTIME
	shift 2
	out=$(in_ns "$ns" timeout "$(scaled 180)" "$XRC" "$@" 2>&1) || rc=$?
	diag "$out"
	sub_verdict "xrc_verbs $label" $rc "$out" "$t0"
}

bad_srq() { port_attr "$1" hw_counters/resp_xrc_bad_srq; }

# (c) loopback: server and client on one device
if topo_loopback 2>/tmp/topo.err; then
	ok "topology (c) loopback"
	xsrq "loopback $DEV_A" $NS_A $DEV_A $IP4_A -- "$NS_A $DEV_A $IP4_A"
	gi=$(gid_index $DEV_A $IP4_A)
	before=$(bad_srq $DEV_A)
	xrc_suite "loopback $DEV_A" $NS_A -d $DEV_A -g "$gi"
	after=$(bad_srq $DEV_A)
	check "resp_xrc_bad_srq counted the bad-SRQ requests ($before -> $after)" \
		test "${after:-0}" -gt "${before:-0}"
else
	not_ok "topology (c) loopback"
	diag "$(< /tmp/topo.err)"
fi

# (a) two devices: server on DEV_B, two clients on DEV_A; 64 KiB messages
# at path MTU 1024 (64 packets each).
if topo_pair 2>/tmp/topo.err; then
	ok "topology (a) pair"
	xsrq "$DEV_B <- 2 clients on $DEV_A, 64 KiB, MTU 1024" $NS_B $DEV_B $IP4_B \
		-s 65536 -m 1024 -n 20 -- "$NS_A $DEV_A $IP4_A" "$NS_A $DEV_A $IP4_A"
	ga=$(gid_index $DEV_A $IP4_A) gb=$(gid_index $DEV_B $IP4_B)
	xrc_suite "$DEV_A -> $DEV_B" $NS_A -d $DEV_A -g "$ga" -D $DEV_B -G "$gb"
else
	not_ok "topology (a) pair"
	diag "$(< /tmp/topo.err)"
fi
topo_cleanup

check_dmesg_clean "no kernel warnings, oopses or leaks reported"
finish
