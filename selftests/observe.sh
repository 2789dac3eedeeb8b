#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# observe.sh: sroce can be watched while it works, on topology (a):
#   - counters (`rdma statistic show link DEV/1`) agree with known RC
#     traffic: each side sends at least N * ceil(S / MTU) request packets,
#     what one side sends the other receives, nothing is dropped;
#   - per-QP counters (`rdma statistic qp`, auto mode by QP type): a
#     running QP's packets count in its own counter, which goes with the
#     QP, the link's totals intact;
#   - `rdma resource show qp/cq/mr/pd` lists the objects of a running
#     program, with sroce's transport details under -dd;
#   - the tracepoints fire: every QP goes RESET -> INIT -> RTR -> RTS
#     during a ping-pong, and a clean run logs no error completion;
#   - over a lossy link (netem) RC data still arrives, and every NAK and
#     ACK timeout the counters count is also a trace event.

. "$(dirname "$0")/lib.sh"

[[ $SROCE_DRIVER == sroce ]] || skip_all "sroce-specific (counters, driver details, tracepoints)"
require_sroce_provider

bg_pids=()

cleanup() {
	local p
	for p in "${bg_pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	[[ -e $TRACING/events/sroce/enable ]] && echo 0 > $TRACING/events/sroce/enable
	topo_cleanup
	sroce_unload
}
trap cleanup EXIT
dmesg_mark
sroce_load || { not_ok "load the module"; finish; }

# stats DEV: fill the associative array ST with DEV's port counters
declare -A ST
stats() {
	local out w i
	ST=()
	out=$(rdma statistic show link "$1/1") || return 1
	read -ra w <<< "${out//$'\n'/ }"
	# "link DEV/1 name value name value ..."
	for ((i = 2; i + 1 < ${#w[@]}; i += 2)); do ST[${w[i]}]=${w[i + 1]}; done
	[[ -n ${ST[tx_packets]} ]]
}

# snap PREFIX DEV: copy DEV's counters into the array named PREFIX
snap() {
	local -n _dst=$1
	local k
	stats "$2" || return 1
	for k in "${!ST[@]}"; do _dst[$k]=${ST[$k]}; done
}

if ! topo_pair 2>/tmp/topo.err; then
	not_ok "topology (a)"
	diag "$(< /tmp/topo.err)"
	finish
fi
ok "topology (a)"

# ---- tracing ------------------------------------------------------------------
have_trace=0
if tracing_prepare; then
	echo 1 > $TRACING/events/sroce/enable
	echo 1 > $TRACING/tracing_on
	have_trace=1
	ok "sroce tracepoints are registered"
	diag "$(cd $TRACING/events/sroce && echo */ | tr -d /)"
else
	not_ok "sroce tracepoints are registered"
	diag "no $TRACING/events/sroce (tracefs: $(grep tracefs /proc/mounts))"
fi

# ---- known traffic, counted ------------------------------------------------------
# ibv_rc_pingpong: each side sends N messages of S bytes at path MTU 1024
# (its default; the veth MTU 1500 allows it).
N=200 S=4096 MTU=1024
PPM=$(((S + MTU - 1) / MTU))
REQ=$((N * PPM))
declare -A A0 B0 A1 B1
snap A0 $DEV_A && snap B0 $DEV_B
check "rdma statistic show link $DEV_A/1 lists sroce counters" \
	test -n "${A0[rx_packets]}" -a -n "${A0[req_retransmits]}" -a -n "${A0[rx_no_qp]}"

t0=$EPOCHREALTIME
if pingpong ibv_rc_pingpong $NS_B $DEV_B $IP4_B $NS_A $DEV_A $IP4_A -c -n $N -s $S; then
	ok "RC ping-pong $N x $S B, checked$(_slow "$t0")"
else
	not_ok "RC ping-pong $N x $S B, checked"
	diag "$PP_OUT"
fi
snap A1 $DEV_A && snap B1 $DEV_B

d() { local -n _a=$1 _b=$2; echo $((_b[$3] - _a[$3])); }
for side in A B; do
	if [[ $side == A ]]; then dev=$DEV_A s0=A0 s1=A1 p0=B0 p1=B1; else dev=$DEV_B s0=B0 s1=B1 p0=A0 p1=A1; fi
	tx=$(d $s0 $s1 tx_packets) peer_rx=$(d $p0 $p1 rx_packets)
	retx=$(d $s0 $s1 req_retransmits)
	# Requests plus at least one ACK; at most one ACK per request packet
	# received, plus whatever was retransmitted.
	check_ge "$dev sent at least $REQ request packets and an ACK" $((REQ + 1)) "$tx"
	if ((tx <= 2 * REQ + retx)); then
		ok "$dev sent no more than requests + one ACK each + retransmits"
	else
		not_ok "$dev sent no more than requests + one ACK each + retransmits"
		diag "tx_packets $tx > 2 * $REQ + $retx"
	fi
	check_ge "$dev sent at least $N x $S payload bytes" $((N * S)) "$(d $s0 $s1 tx_bytes)"
	check_eq "$dev tx_packets == peer rx_packets (veth loses nothing)" "$tx" "$peer_rx"
	check_eq "$dev tx_bytes == peer rx_bytes (both count BTH..ICRC)" \
		"$(d $s0 $s1 tx_bytes)" "$(d $p0 $p1 rx_bytes)"
	check_eq "$dev dropped nothing (rx_dropped, tx_dropped)" "0 0" \
		"$(d $s0 $s1 rx_dropped) $(d $s0 $s1 tx_dropped)"
	check_eq "$dev no retry exhausted" "0 0" \
		"$(d $s0 $s1 req_retry_exceeded) $(d $s0 $s1 req_rnr_retry_exceeded)"
	diag "$dev: tx $tx rx $(d $s0 $s1 rx_packets) retransmits $retx timeouts $(d $s0 $s1 req_timeouts) seq NAKs sent $(d $s0 $s1 resp_seq_naks) rcvd $(d $s0 $s1 comp_naks_seq)"
done

# ---- tracepoints from that run -------------------------------------------------
if [[ $have_trace == 1 ]]; then
	trace=$(< $TRACING/trace)
	for dev in $DEV_A $DEV_B; do
		states=$(awk -v d="$dev" '/sroce_qp_state:/ && $0 ~ " " d " qpn=" {
			sub(/.*qpn=[0-9]+ /, ""); printf "%s;", $0 }' <<< "$trace")
		check_eq "$dev: QP state events RESET -> INIT -> RTR -> RTS" \
			"RESET -> INIT;INIT -> RTR;RTR -> RTS;" "$states"
	done
	errs=$(grep -c 'sroce_comp_err:' <<< "$trace")
	check_eq "no error completions traced in a clean run" 0 "$errs"
	[[ $errs != 0 ]] && diag "$(grep 'sroce_comp_err:' <<< "$trace" | head -5)"
	echo 0 > $TRACING/events/sroce/enable
else
	skip "QP state events" "no tracepoints"
fi

# ---- per-QP counters (rdma statistic qp) ----------------------------------------
# In auto mode by QP type, each RC QP created on DEV_A is bound to an rdma
# counter at INIT, and its own events (packets sent, retransmissions,
# NAKs, ...) count there instead of in the device's counters.  While a
# long ping-pong runs, its QP's counter lists the QP and its packets; once
# the QP is gone the counter goes, and the link's totals (which the core
# sums from the device and its counters, current and past) still match
# what the peer received.
# qp_counter DEV FIELD: FIELD of DEV's first rdma counter, and its QPs
qp_counter() {
	rdma statistic qp show link "$1/1" | awk -v f="$2" '
		/^link/ { for (i = 1; i < NF; i++) if ($i == f) v = $(i + 1) }
		/LQPN:/ { q = $2 }
		END { if (v != "") print v, q }'
}
_counter_moving() { local v; v=$(qp_counter $DEV_A tx_packets); [[ ${v%% *} -gt 0 ]]; }
N2=30000
if rdma statistic qp set link $DEV_A/1 auto type on; then
	ok "rdma statistic qp set link $DEV_A/1 auto type on"
	snap A0 $DEV_A && snap B0 $DEV_B
	pingpong ibv_rc_pingpong $NS_A $DEV_A $IP4_A $NS_B $DEV_B $IP4_B -c -n $N2 -s 64 > /dev/null &
	pp_pid=$!
	bg_pids+=("$pp_pid")
	if wait_until 60 _counter_moving; then
		ok "a running RC QP's packets count in its rdma counter"
		diag "$DEV_A counter: tx_packets, QPs $(qp_counter $DEV_A tx_packets)"
	else
		not_ok "a running RC QP's packets count in its rdma counter"
		diag "$(rdma statistic qp show link $DEV_A/1 2>&1 | cut -c1-300)"
	fi
	if wait $pp_pid; then
		ok "RC ping-pong $N2 x 64 B with the QP bound to a counter"
	else
		not_ok "RC ping-pong $N2 x 64 B with the QP bound to a counter"
		diag "$(< /tmp/pp.srv) $(< /tmp/pp.cli)"
	fi
	check_eq "the counter goes with its QP" "" "$(qp_counter $DEV_A tx_packets)"
	snap A1 $DEV_A && snap B1 $DEV_B
	check_ge "$DEV_A link tx_packets count the bound QP's $N2 requests" $N2 "$(d A0 A1 tx_packets)"
	check_eq "$DEV_A link tx_packets == $DEV_B rx_packets after the counter went" \
		"$(d B0 B1 rx_packets)" "$(d A0 A1 tx_packets)"
	rdma statistic qp set link $DEV_A/1 auto off
else
	not_ok "rdma statistic qp set link $DEV_A/1 auto type on"
fi

# ---- RC traffic over a lossy link ------------------------------------------------
# netem drops LOSS of the packets each way: the responders NAK sequence
# errors, the requesters go back (after a NAK or a timeout), the data still
# arrives intact.  Every NAK a responder sends is one sroce_nak_sent event,
# every ACK timeout one sroce_ack_timeout event.
#
# The traffic is pktgen -T (SEND, WRITE, READ and fetch-and-add, verified,
# both QPs in one process), not ibv_rc_pingpong: a ping-pong has no closing
# handshake, so when the ACK of the client's last SEND is lost the server,
# which has all it waits for, destroys its QP and exits, and the client's
# resends of that SEND meet no QP until IB_WC_RETRY_EXC_ERR.  A RoCE NIC
# does the same; at 3 % loss each way that ended 6 runs in 100 here (the
# trace shows sroce_drop reason=rx_no_qp for each resend).
LOSS=3%
PKTGEN=$TOP/build/selftests/pktgen
# Resolve both neighbours on the clean link first: the QPs' move to RTR
# resolves the peer's MAC with one ARP try, which the loss could eat.
in_ns $NS_A ping -c 1 -W 2 $IP4_B > /dev/null 2>&1
in_ns $NS_B ping -c 1 -W 2 $IP4_A > /dev/null 2>&1
build_rc=0
build_program "$PKTGEN" pktgen.cpp || build_rc=$?
if [[ $build_rc == 1 ]]; then
	not_ok "lossy link: build $PKTGEN"
	diag "$BUILD_ERR"
elif [[ $build_rc == 2 ]]; then
	skip "lossy link" "$BUILD_ERR"
elif [[ $have_trace != 1 ]]; then
	skip "lossy link" "no sroce tracepoints"
elif ! err=$({ modprobe sch_netem &&
	       tc -n $NS_A qdisc add dev $VETH_A root netem loss $LOSS &&
	       tc -n $NS_B qdisc add dev $VETH_B root netem loss $LOSS; } 2>&1); then
	skip "lossy link" "no netem (sch_netem): $err"
	tc -n $NS_A qdisc del dev $VETH_A root 2>/dev/null
else
	echo > $TRACING/trace
	echo 1 > $TRACING/events/sroce/enable
	snap A0 $DEV_A && snap B0 $DEV_B
	t0=$EPOCHREALTIME
	ga=$(gid_index $DEV_A $IP4_A) gb=$(gid_index $DEV_B $IP4_B)
	if out=$(timeout "$(scaled 120)" "$PKTGEN" -d $DEV_A -g "$ga" -D $DEV_B -G "$gb" -T 1 2>&1); then
		ok "RC SEND, WRITE, READ and atomics, 1 MiB each, verified, with $LOSS loss each way$(_slow "$t0")"
	else
		not_ok "RC SEND, WRITE, READ and atomics, 1 MiB each, verified, with $LOSS loss each way"
		diag "$(tail -5 <<< "$out")"
	fi
	snap A1 $DEV_A && snap B1 $DEV_B
	echo 0 > $TRACING/events/sroce/enable
	trace=$(< $TRACING/trace)
	tc -n $NS_A qdisc del dev $VETH_A root
	tc -n $NS_B qdisc del dev $VETH_B root
	retx=$(($(d A0 A1 req_retransmits) + $(d B0 B1 req_retransmits)))
	check_ge "lost packets were retransmitted" 1 "$retx"
	for side in A B; do
		if [[ $side == A ]]; then dev=$DEV_A s0=A0 s1=A1; else dev=$DEV_B s0=B0 s1=B1; fi
		naks=$(($(d $s0 $s1 resp_seq_naks) + $(d $s0 $s1 resp_rnr_naks) + $(d $s0 $s1 resp_fatal_naks)))
		ev=$(grep -c "sroce_nak_sent: $dev " <<< "$trace")
		check_eq "$dev: one sroce_nak_sent event per NAK counted ($naks)" "$naks" "$ev"
		ev=$(grep -c "sroce_ack_timeout: $dev " <<< "$trace")
		check_eq "$dev: one sroce_ack_timeout event per timeout counted" \
			"$(d $s0 $s1 req_timeouts)" "$ev"
		diag "$dev: retransmits $(d $s0 $s1 req_retransmits) timeouts $(d $s0 $s1 req_timeouts) seq NAKs sent $(d $s0 $s1 resp_seq_naks) rcvd $(d $s0 $s1 comp_naks_seq) duplicates $(d $s0 $s1 resp_duplicates)"
	done
	ev=$(grep -c "sroce_retransmit: " <<< "$trace")
	check_ge "go-back-N traced (sroce_retransmit)" 1 "$ev"
	diag "$(grep -m3 -E 'sroce_(retransmit|nak_sent|nak_rcvd|ack_timeout):' <<< "$trace")"
fi

# ---- resources of a running program ------------------------------------------------
# A long ping-pong in the background holds a connected QP, its CQ, MRs and PD
# while rdma resource show looks at them.  `ip netns exec` execs timeout,
# so $! is the process to kill (timeout passes the signal on).
port=$((20000 + RANDOM % 10000))
sgi=$(gid_index $DEV_B $IP4_B) cgi=$(gid_index $DEV_A $IP4_A)
ip netns exec $NS_B timeout 120 ibv_rc_pingpong -d $DEV_B -g "$sgi" -p $port -n 1000000 -s 1024 > /tmp/obs.srv 2>&1 &
bg_pids+=($!)
_listening() { [[ -n $(in_ns $NS_B ss -Hltn "sport = :$port" 2>/dev/null) ]]; }
wait_until 15 _listening
ip netns exec $NS_A timeout 120 ibv_rc_pingpong -d $DEV_A -g "$cgi" -p $port -n 1000000 -s 1024 $IP4_B > /tmp/obs.cli 2>&1 &
bg_pids+=($!)
# The program's RC QP, not QP1 (GSI), which the MAD layer keeps in RTS.
_rts() {
	rdma resource show qp link $DEV_A/1 |
		grep ' type RC ' | grep ' state RTS ' | grep -q ibv_rc_pingpong
}
if wait_until 20 _rts; then
	ok "a running ping-pong's QP is listed in state RTS"
else
	not_ok "a running ping-pong's QP is listed in state RTS"
	diag "$(rdma resource show qp link $DEV_A 2>&1)"
	diag "server: $(< /tmp/obs.srv)"
	diag "client: $(< /tmp/obs.cli)"
fi

# res_has NAME OBJ WORD... -- DRIVER_FIELD...: `rdma -dd resource show OBJ`
# has a line for DEV_A with each WORD and each driver field (iproute2 prints
# those as drv_NAME).  Lines start "link DEV/PORT" (QPs) or "dev DEV".
res_has() {
	local name=$1 obj=$2 out f missing=() drv=
	shift 2
	out=$(rdma -dd resource show "$obj" 2>&1 | grep -E "^(link|dev) ${DEV_A}[/ ]")
	for f in "$@"; do
		[[ $f == -- ]] && { drv=drv_; continue; }
		[[ " $out " =~ [[:space:]]$drv${f}[[:space:]] ]] || missing+=("$drv$f")
	done
	if [[ -n $out && ${#missing[@]} == 0 ]]; then
		ok "$name"
		diag "$(grep -m1 ibv_rc_pingpong <<< "$out")"
		return 0
	fi
	not_ok "$name"
	diag "missing: ${missing[*]}"
	diag "$out"
	return 1
}
res_has "rdma resource show qp -dd: sequence, window, rings, retries, held packets" qp \
	ibv_rc_pingpong RTS -- next_psn max_psn unacked_psn unacked expected_psn msn \
	sq_size sq_posted sq_inflight rq_size rq_posted retries_left rnr_retries_left timeout_ms \
	held read_resp_held "read_resp_patience 3"
res_has "rdma resource show cq -dd: size and occupancy" cq ibv_rc_pingpong -- size used overflowed armed
res_has "rdma resource show mr -dd: type, access, pages" mr ibv_rc_pingpong -- "type user" access valid pages
check "rdma resource show pd lists the program's PD" \
	bash -c "rdma resource show pd | grep -E '^dev $DEV_A .*ibv_rc_pingpong'"

# The receive queue the program filled (ibv_rc_pingpong keeps rx_depth 500
# receives posted) shows up in rq_posted.
rq=$(rdma -dd resource show qp link $DEV_A | grep -o 'drv_rq_posted [0-9]*' | head -1)
check_ge "rq_posted shows the program's posted receives" 1 "${rq#drv_rq_posted }"

for p in "${bg_pids[@]}"; do kill "$p" 2>/dev/null; done
wait 2>/dev/null
bg_pids=()
_no_qp() { ! rdma resource show qp link $DEV_A/1 | grep -q ibv_rc_pingpong; }
check "the QP is gone from rdma resource show after the program exits" wait_until 10 _no_qp

topo_cleanup
check_dmesg_clean "kernel log clean"
finish
