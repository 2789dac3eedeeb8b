#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# cc.sh: congestion control (ECN, CNPs, DCQCN) on topology (a) and with
# rdma_rxe (topology (b)):
#   - the parameters under /sys/class/infiniband/DEV/ports/1/cc/ have their
#     documented defaults, take valid values and refuse bad ones (EINVAL);
#   - transmitted packets carry ECT(0) in IPv4 and IPv6 (captured on the
#     veth), and not when ecn_mark is 0;
#   - through a CE-marking bottleneck (htb + red ecn) the receiver counts CE
#     marks and sends CNPs, the sender receives them and cuts its rate
#     (counters, one sroce_cc_rate_cut event per cut), the data arrives
#     intact; the captured CNPs have the NIC format (opcode 0x81, BECN,
#     P_Key 0xffff, PSN 0, 16 zero bytes, valid ICRC, UDP length 40) and
#     name the sender's QP; at most one CNP per QP per cnp_interval_us;
#   - with rp_enable 0 CNPs are counted but cut nothing;
#   - a CNP built like a ConnectX NIC's (raw socket) cuts the rate of the
#     QP it names; one with a bad ICRC is dropped; after the cut the rate
#     climbs back through fast recovery, additive and hyper increase, by
#     rate timer and by byte counter (sroce_cc_rate_increase events), and
#     alpha decays with the alpha timer (a second CNP cuts less);
#   - a QP paced at an emulated line rate sends at that rate, not above;
#   - an incast through the bottleneck (scripts/cc-bench.d/guest: two
#     senders, a small-message flow), DCQCN on versus off: with DCQCN
#     (next to) no drops, fewer retransmissions, fair shares (Jain's index),
#     the link used; without it RED drops;
#   - rdma_rxe, which ignores ECN and CNPs, still exchanges checked data
#     with sroce through the marking bottleneck, both ways.
# Behaviour is asserted, not timings.

. "$(dirname "$0")/lib.sh"

[[ $SROCE_DRIVER == sroce ]] || skip_all "sroce-specific (congestion control)"
require_sroce_provider
command -v tcpdump > /dev/null || skip_all "no tcpdump"
command -v python3 > /dev/null || skip_all "no python3"
for m in sch_htb sch_red; do modprobe $m 2>/dev/null || skip_all "no $m"; done

PKT="python3 $(dirname "$0")/cc_pkt.py"
TMP=$(mktemp -d /tmp/cc.XXXXXX)
bg_pids=()

cleanup() {
	local p
	for p in "${bg_pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	[[ -e $TRACING/events/sroce/enable ]] && echo 0 > $TRACING/events/sroce/enable
	topo_cleanup
	sroce_unload
	rmmod rdma_rxe 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
dmesg_mark
sroce_load || { not_ok "load the module"; finish; }
# The captured CNPs' ICRC is checked: computed even between two sroce
# devices of this host (transmit.c skips it where nobody reads it).
echo 1 > /sys/module/sroce/parameters/tx_icrc_always

declare -A ST
# snap ARRAY DEV: DEV's port counters into the associative array ARRAY
snap() {
	local -n _dst=$1
	local out w i
	out=$(rdma statistic show link "$2/1") || return 1
	read -ra w <<< "${out//$'\n'/ }"
	for ((i = 2; i + 1 < ${#w[@]}; i += 2)); do _dst[${w[i]}]=${w[i + 1]}; done
}
# d BEFORE AFTER COUNTER: the difference
d() { local -n _a=$1 _b=$2; echo $((_b[$3] - _a[$3])); }

# cc DEV PARAM [VALUE]: read or write a cc parameter
cc() {
	if [[ $# == 3 ]]; then echo "$3" > "$IB/$1/ports/1/cc/$2"; else echo "$(< "$IB/$1/ports/1/cc/$2")"; fi
}

# capture NS IFACE FILE FILTER...: tcpdump in the background until
# stop_capture.  `ip netns exec` execs tcpdump, so $! is tcpdump itself (a
# shell function in the background would leave it running when killed).
# --immediate-mode: without it libpcap hands packets over a ring block at a
# time, and a short exchange still sitting in an unfinished block when
# tcpdump is killed never reaches the file (the IPv4 capture came back
# empty that way).
capture() {
	local ns=$1 ifc=$2 file=$3
	shift 3
	ip netns exec "$ns" tcpdump --immediate-mode -i "$ifc" -n -U -s 200 -w "$file" "$@" 2> "$file.err" &
	CAP_PID=$!
	bg_pids+=($CAP_PID)
	wait_until 10 grep -q listening "$file.err"
}
stop_capture() { kill "$CAP_PID" 2>/dev/null; wait "$CAP_PID" 2>/dev/null; }

# bottleneck NS IFACE RATE: htb rate limit with a shallow ECN-marking RED
bottleneck() {
	in_ns "$1" tc qdisc replace dev "$2" root handle 1: htb default 1 &&
	in_ns "$1" tc class add dev "$2" parent 1: classid 1:1 htb rate "$3" burst 8k cburst 8k &&
	in_ns "$1" tc qdisc add dev "$2" parent 1:1 handle 10: red limit 64000 \
		min 3000 max 9000 avpkt 1100 burst 4 bandwidth "$3" probability 0.5 ecn
}
bottleneck_cleanup() { in_ns "$1" tc qdisc del dev "$2" root 2>/dev/null; }

if ! topo_pair 2> "$TMP/topo.err"; then
	not_ok "topology (a)"
	diag "$(< "$TMP/topo.err")"
	finish
fi
ok "topology (a)"

# ---- parameters --------------------------------------------------------------
PARAMS="ecn_mark np_enable cnp_interval_us rp_enable g alpha_timer_us rate_timer_us byte_counter fast_recovery rate_ai_kbps rate_hai_kbps rate_min_kbps rate_line_kbps"
DEFAULTS="1 1 50 1 4 55 300 32768 5 5000 50000 1000 0"
vals=
for p in $PARAMS; do vals+=" $(cc $DEV_A $p)"; done
check_eq "ports/1/cc/ parameters have their documented defaults" "$DEFAULTS" "${vals# }"
cc $DEV_A g 16 && cc $DEV_A rate_ai_kbps 250
check_eq "parameters take valid values" "16 250" "$(cc $DEV_A g) $(cc $DEV_A rate_ai_kbps)"
for bad in "g 0" "g 1025" "g x" "rp_enable 2" "ecn_mark -1" "byte_counter 10" \
	   "fast_recovery 0" "rate_min_kbps 2000000000" "cnp_interval_us 1000001"; do
	set -- $bad
	check_fails "cc/$1 refuses '$2' (EINVAL)" "invalid argument" \
		bash -c "echo $2 > $IB/$DEV_A/ports/1/cc/$1"
done
cc $DEV_A rate_line_kbps 5000
cc $DEV_A rate_min_kbps 1000
check_fails "cc/rate_line_kbps below rate_min_kbps is refused" "invalid argument" \
	bash -c "echo 999 > $IB/$DEV_A/ports/1/cc/rate_line_kbps"
check_eq "a refused value leaves the parameter alone" "16 5000" "$(cc $DEV_A g) $(cc $DEV_A rate_line_kbps)"
set -- $DEFAULTS
for p in $PARAMS; do cc $DEV_A $p "$1"; shift; done

# ---- ECT(0) on the wire ------------------------------------------------------------
# ecn_wire FAMILY IP_A IP_B: capture a short ping-pong on VETH_B; DEV_A
# marks, DEV_B (ecn_mark 0) does not.  The pcap helper prints the ECN
# field (1st column) and the source address (last) of every RoCE packet.
ecn_wire() {
	local fam=$1 ipa=$2 ipb=$3
	capture $NS_B $VETH_B "$TMP/ecn.pcap" udp port 4791
	PP_CONNECT=$IP4_B pingpong ibv_rc_pingpong $NS_B $DEV_B "$ipb" $NS_A $DEV_A "$ipa" -c -n 5 -s 64 ||
		diag "$PP_OUT"
	stop_capture
	$PKT pcap "$TMP/ecn.pcap" > "$TMP/ecn.txt"
	check_eq "$fam: every RoCE packet of $DEV_A carries ECT(0)" "ecn=2" \
		"$(awk -v s="src=$ipa" '$NF == s { print $1 }' "$TMP/ecn.txt" | sort -u | tr '\n' ' ' | sed 's/ $//')"
	check_eq "$fam: with ecn_mark 0, $DEV_B's packets are Not-ECT" "ecn=0" \
		"$(awk -v s="src=$ipb" '$NF == s { print $1 }' "$TMP/ecn.txt" | sort -u | tr '\n' ' ' | sed 's/ $//')"
	diag "$(head -2 "$TMP/ecn.txt")"
}
cc $DEV_B ecn_mark 0
ecn_wire IPv4 $IP4_A $IP4_B
ecn_wire IPv6 $IP6_A $IP6_B
cc $DEV_B ecn_mark 1

# ---- CE -> CNP -> rate cut ---------------------------------------------------------
# DEV_A sends through a 10 Mbit/s marking bottleneck on VETH_A; DCQCN's
# rates and timers scaled to that port speed and to the milliseconds a
# round trip takes in a TCG guest; the line rate (DEV_A's emulated port
# speed) 2x the bottleneck.  One CNP per QP per 10 ms at most.
RATE=10mbit
cc $DEV_A rate_line_kbps 20000
cc $DEV_A rate_min_kbps 500
cc $DEV_A rate_ai_kbps 200
cc $DEV_A rate_hai_kbps 1000
cc $DEV_A rate_timer_us 10000
cc $DEV_A alpha_timer_us 11000
cc $DEV_B cnp_interval_us 10000
have_trace=0
if tracing_prepare; then
	echo 1 > $TRACING/events/sroce/sroce_cc_rate_cut/enable
	have_trace=1
fi
declare -A A0 B0 A1 B1
if bottleneck $NS_A $VETH_A $RATE; then
	ok "bottleneck: htb $RATE + red ecn on $VETH_A"
else
	not_ok "bottleneck: htb $RATE + red ecn on $VETH_A"
fi
capture $NS_A $VETH_A "$TMP/cnp.pcap" "udp port 4791 and udp[8] = 0x81"
snap A0 $DEV_A && snap B0 $DEV_B
t0=${EPOCHREALTIME/./}
if pingpong ibv_rc_pingpong $NS_B $DEV_B $IP4_B $NS_A $DEV_A $IP4_A -c -n 8 -s 262144; then
	ok "RC 8 x 256 KiB through the bottleneck, data checked$(_slow "${t0:0:-6}.${t0: -6}")"
else
	not_ok "RC 8 x 256 KiB through the bottleneck, data checked"
	diag "$PP_OUT"
fi
secs=$(( (${EPOCHREALTIME/./} - t0 + 999999) / 1000000 ))
snap A1 $DEV_A && snap B1 $DEV_B
stop_capture
check_ge "$DEV_B counted CE-marked packets (rx_ecn_ce)" 1 "$(d B0 B1 rx_ecn_ce)"
check_ge "$DEV_B sent CNPs (tx_cnp)" 1 "$(d B0 B1 tx_cnp)"
# The last CNPs may still be on their way.
_all_cnps() { snap A1 $DEV_A && (($(d A0 A1 rx_cnp) >= $(d B0 B1 tx_cnp))); }
wait_until 5 _all_cnps
check_eq "$DEV_A received every CNP (rx_cnp == peer tx_cnp)" "$(d B0 B1 tx_cnp)" "$(d A0 A1 rx_cnp)"
check_eq "$DEV_A cut its rate once per CNP (cc_rate_cuts)" "$(d A0 A1 rx_cnp)" "$(d A0 A1 cc_rate_cuts)"
if (($(d B0 B1 tx_cnp) <= 100 * secs + 1)); then
	ok "at most one CNP per QP per cnp_interval_us (10 ms)"
else
	not_ok "at most one CNP per QP per cnp_interval_us (10 ms)"
fi
diag "$secs s: CE $(d B0 B1 rx_ecn_ce), CNPs $(d B0 B1 tx_cnp), cuts $(d A0 A1 cc_rate_cuts), retransmits $(d A0 A1 req_retransmits), timeouts $(d A0 A1 req_timeouts)"
bad=0
for c in rx_bad_header rx_bad_opcode rx_bad_icrc rx_bad_qp_type rx_bad_addr rx_bad_pkey; do
	bad=$((bad + $(d A0 A1 $c) + $(d B0 B1 $c)))
done
check_eq "no packet (CNPs included) refused as malformed or misaddressed" 0 "$bad"

$PKT pcap "$TMP/cnp.pcap" > "$TMP/cnp.txt"
cnp=$(head -1 "$TMP/cnp.txt")
diag "first CNP: $cnp"
fmt=$(awk '{ $1 = ""; $7 = ""; $NF = ""; print }' "$TMP/cnp.txt" | sort -u | tr -s ' ')
check_eq "captured CNPs: opcode 0x81, UDP length 40, BECN, P_Key 0xffff, PSN 0, 16 zero bytes, ICRC" \
	" opcode=0x81 udp_len=40 becn=1 fecn=0 pkey=0xffff psn=0 body=00000000000000000000000000000000 icrc_ok=1 " "$fmt"
if [[ $have_trace == 1 ]]; then
	echo 0 > $TRACING/events/sroce/sroce_cc_rate_cut/enable
	trace=$(< $TRACING/trace)
	check_eq "one sroce_cc_rate_cut event per cut" "$(d A0 A1 cc_rate_cuts)" \
		"$(grep -c "sroce_cc_rate_cut: $DEV_A " <<< "$trace")"
	dqpn=$(awk '{ sub("dqpn=", "", $7); print $7; exit }' "$TMP/cnp.txt")
	check "the CNP names the QP that was cut (DestQP $dqpn)" \
		grep -q "sroce_cc_rate_cut: $DEV_A qpn=$dqpn rc_kbps=" <<< "$trace"
	check_eq "every cut event reports stage=cut by=cnp (the rate event class)" \
		"$(grep -c "sroce_cc_rate_cut: $DEV_A " <<< "$trace")" \
		"$(grep -c "sroce_cc_rate_cut: $DEV_A .* alpha=[0-9]*/1048576 stage=cut by=cnp\$" <<< "$trace")"
	rc=$(grep -m1 -o "rc_kbps=[0-9]*" <<< "$trace")
	check "the first cut lowered the rate below line rate (20000): $rc" test "${rc#rc_kbps=}" -lt 20000
	diag "$(grep -m3 sroce_cc_rate_cut <<< "$trace")"
else
	skip "sroce_cc_rate_cut events" "no tracepoints"
fi

# ---- rp_enable 0: CNPs counted, no cuts ----------------------------------------------
cc $DEV_A rp_enable 0
cc $DEV_B cnp_interval_us 50
snap A0 $DEV_A && snap B0 $DEV_B
if pingpong ibv_rc_pingpong $NS_B $DEV_B $IP4_B $NS_A $DEV_A $IP4_A -c -n 4 -s 131072; then
	ok "rp_enable 0: RC 4 x 128 KiB through the bottleneck, data checked"
else
	not_ok "rp_enable 0: RC 4 x 128 KiB through the bottleneck, data checked"
	diag "$PP_OUT"
fi
snap A1 $DEV_A && snap B1 $DEV_B
check_ge "rp_enable 0: CNPs still arrive (rx_cnp)" 1 "$(d A0 A1 rx_cnp)"
check_eq "rp_enable 0: no rate cut" 0 "$(d A0 A1 cc_rate_cuts)"
cc $DEV_A rp_enable 1
bottleneck_cleanup $NS_A $VETH_A

# ---- a CNP from a NIC, and DCQCN's way back -----------------------------------------
# A long ping-pong holds a connected QP on DEV_A; a CNP in the ConnectX
# format, sent from DEV_B's address through a raw socket, names it: two
# back to back, so that the target rate falls to half the line rate (the
# first cut keeps the target at line rate, the second sets it to the rate
# the first left).  The way back is made long enough to watch: line rate
# 8 Mbit/s, R_AI 20 and R_HAI 100 kbit/s, a rate step every 10 ms and
# every 4 KiB sent, fast recovery 2 steps; alpha decays fast (g 1/16
# every 1 ms) so that a third CNP 0.5 s later cuts less.  Hyper increase
# needs three timer steps (30 ms); with a step per 1 KiB, a fast guest's
# ping-pong (a step every 0.6 ms) climbed the 50 additive steps to line
# rate in those 30 ms, and hyper was never seen.
cc $DEV_A rate_line_kbps 8000
cc $DEV_A rate_min_kbps 100
cc $DEV_A rate_ai_kbps 20
cc $DEV_A rate_hai_kbps 100
cc $DEV_A rate_timer_us 10000
cc $DEV_A byte_counter 4096
cc $DEV_A fast_recovery 2
cc $DEV_A alpha_timer_us 1000
cc $DEV_A g 64
port=$((20000 + RANDOM % 10000))
sgi=$(gid_index $DEV_B $IP4_B) cgi=$(gid_index $DEV_A $IP4_A)
ip netns exec $NS_B timeout 120 ibv_rc_pingpong -d $DEV_B -g "$sgi" -p $port -n 1000000 -s 64 > "$TMP/srv" 2>&1 &
bg_pids+=($!)
_listening() { [[ -n $(in_ns $NS_B ss -Hltn "sport = :$port" 2>/dev/null) ]]; }
wait_until 15 _listening
ip netns exec $NS_A timeout 120 ibv_rc_pingpong -d $DEV_A -g "$cgi" -p $port -n 1000000 -s 64 $IP4_B > "$TMP/cli" 2>&1 &
bg_pids+=($!)
_rts() { rdma resource show qp link $DEV_A/1 | grep -q 'RTS.*ibv_rc_pingpong\|ibv_rc_pingpong.*RTS'; }
if wait_until 20 _rts; then
	lqpn=$(rdma resource show qp link $DEV_A/1 | awk '/ibv_rc_pingpong/ { for (i = 1; i < NF; i++) if ($i == "lqpn") { print $(i + 1); exit } }')
	snap A0 $DEV_A
	if [[ $have_trace == 1 ]]; then
		echo > $TRACING/trace
		echo 1 > $TRACING/events/sroce/sroce_cc_rate_cut/enable
		echo 1 > $TRACING/events/sroce/sroce_cc_rate_increase/enable
	fi
	in_ns $NS_B $PKT cnp $IP4_B $IP4_A "$lqpn" --count 2
	in_ns $NS_B $PKT cnp $IP4_B $IP4_A "$lqpn" --bad-icrc
	_cnp_in() { snap A1 $DEV_A && (($(d A0 A1 rx_cnp) >= 2 && $(d A0 A1 rx_bad_icrc) >= 1)); }
	wait_until 10 _cnp_in
	check_eq "two ConnectX-format CNPs to QP $lqpn: received and acted on (rx_cnp, cc_rate_cuts)" \
		"2 2" "$(d A0 A1 rx_cnp) $(d A0 A1 cc_rate_cuts)"
	check_eq "the same CNP with a bad ICRC is dropped (rx_bad_icrc)" 1 "$(d A0 A1 rx_bad_icrc)"
	if [[ $have_trace == 1 ]]; then
		# Back at line rate: the last increase step reports 8000.
		_at_line() { grep -q "sroce_cc_rate_increase: $DEV_A qpn=$lqpn rc_kbps=8000 " $TRACING/trace; }
		wait_until 20 _at_line
		sleep 0.5
		in_ns $NS_B $PKT cnp $IP4_B $IP4_A "$lqpn"
		_cut3() { (($(grep -c "sroce_cc_rate_cut: $DEV_A qpn=$lqpn " $TRACING/trace) >= 3)); }
		wait_until 10 _cut3
		echo 0 > $TRACING/events/sroce/sroce_cc_rate_increase/enable
		echo 0 > $TRACING/events/sroce/sroce_cc_rate_cut/enable
		trace=$(grep "$DEV_A qpn=$lqpn " $TRACING/trace)
		words=" $(grep sroce_cc_rate_increase <<< "$trace" | grep -o 'stage=[a-z_]*\|by=[a-z_]*' | sort -u | tr '\n' ' ')"
		for w in stage=fast_recovery stage=additive stage=hyper by=timer by=byte_counter; do
			check "after the cut the rate rises with $w (sroce_cc_rate_increase)" test "${words/ $w /}" != "$words"
		done
		check "the rate reached line rate again (rc_kbps=8000)" _at_line
		check_eq "every increase event reports alpha" \
			"$(grep -c sroce_cc_rate_increase <<< "$trace")" \
			"$(grep -c "sroce_cc_rate_increase: .* alpha=[0-9]*/1048576 stage=[a-z_]* by=[a-z_]*\$" <<< "$trace")"
		# alpha=A/1048576 after the first cut: 1 (the initial 1 raised
		# by g); after the third: decayed to ~0 meanwhile, then raised by
		# g; the third cut took alpha/2 of a rate back at line rate.
		read -r a1 _ a2 <<< "$(grep sroce_cc_rate_cut <<< "$trace" | sed -n 's/.*alpha=\([0-9]*\)\/.*/\1/p' | head -3 | tr '\n' ' ')"
		read -r r1 _ r2 <<< "$(grep sroce_cc_rate_cut <<< "$trace" | sed -n 's/.*rc_kbps=\([0-9]*\) .*/\1/p' | head -3 | tr '\n' ' ')"
		check "alpha decays between CNPs: alpha $a1 -> $a2 (of 1048576), cut to $r1, later to $r2 kbit/s" \
			test "${a1:-0}" -eq 1048576 -a "${a2:-1048576}" -le 131072 -a "${r2:-0}" -ge 7000 -a "${r1:-8000}" -le 4000
		diag "$(grep -m4 sroce_cc_rate_increase <<< "$trace")"
	else
		skip "DCQCN increase and alpha decay" "no tracepoints"
	fi
else
	not_ok "a running ping-pong's QP for the CNP injection"
	diag "$(rdma resource show qp link $DEV_A 2>&1)"
fi
for p in "${bg_pids[@]}"; do kill "$p" 2>/dev/null; done
wait 2>/dev/null
bg_pids=()
set -- $DEFAULTS
for p in $PARAMS; do cc $DEV_A $p "$1"; shift; done

# ---- pacing ---------------------------------------------------------------------------
# With no bottleneck at all, a QP of a device that emulates a 4 Mbit/s port
# sends at 4 Mbit/s: at most 5 % above (the pacer's credit is 4 KB), and
# at least half of it (a loaded host runs the guest's pace timer late, and
# the credit covers only 8 ms of lateness at this rate).  perftest's average counts payload only: 1024 B of every
# 1082 B packet on the wire at this MTU.
cc $DEV_A rate_line_kbps 4000
cc $DEV_A rate_min_kbps 100
port=$((20000 + RANDOM % 10000))
sgi=$(gid_index $DEV_B $IP4_B) cgi=$(gid_index $DEV_A $IP4_A)
in_ns $NS_B timeout 60 ib_write_bw -d $DEV_B -x "$sgi" -p $port -F -m 1024 -s 65536 -D 4 > "$TMP/srv" 2>&1 &
spid=$!
wait_until 15 _listening
in_ns $NS_A timeout 60 ib_write_bw -d $DEV_A -x "$cgi" -p $port -F -m 1024 -s 65536 -D 4 $IP4_B > "$TMP/cli" 2>&1
wait $spid
kbps=$(awk '$1 == 65536 { printf "%d", $4 * 1048576 * 8 / 1000 * 1082 / 1024 }' "$TMP/cli")
check "a QP paced at rate_line_kbps 4000 sends at ${kbps:-?} kbit/s on the wire (2000-4200)" \
	test "${kbps:-0}" -ge 2000 -a "${kbps:-99999}" -le 4200
[[ -n $kbps ]] || diag "$(tail -5 "$TMP/cli")"
cc $DEV_A rate_line_kbps 0
cc $DEV_A rate_min_kbps 1000

# ---- rdma_rxe through the marking bottleneck ------------------------------------------------
# sroce (in NS_B) sends ECT(0) through the bottleneck on VETH_B towards
# rdma_rxe, which gets CE marks and ignores them; rdma_rxe sends ECT(0) too
# when asked for traffic class 2 (perftest --tclass), then sroce answers
# the CE marks with CNPs, which rdma_rxe drops.  Data checked both ways.
# Only a kernel without rdma_rxe skips this; a topology that fails is a
# failure.
if ! rxe_err=$(modprobe rdma_rxe 2>&1); then
	skip "rdma_rxe through the bottleneck" "no rdma_rxe: modprobe rdma_rxe: $rxe_err"
elif ! topo_interop 2> "$TMP/topo.err"; then
	not_ok "topology (b): rdma_rxe $RXE_DEV <-> sroce $DEV_B"
	diag "$(< "$TMP/topo.err")"
else
	ok "topology (b): rdma_rxe $RXE_DEV <-> sroce $DEV_B"
	# rdma_rxe's own packets meet the marking queue only as ECT(0)
	# (ib_write_bw --tclass=2 below): RED drops others early, and rdma_rxe
	# on 6.12 answers a drop of its own transmit with a send error
	# (send_err) and a QP in the error state, where 6.1 sends again.
	bottleneck $NS_B $VETH_B $RATE
	snap B0 $DEV_B
	if pingpong ibv_rc_pingpong "" $RXE_DEV $IP4_A $NS_B $DEV_B $IP4_B -c -n 5 -s 65536; then
		ok "rxe server <- sroce client, 5 x 64 KiB through the bottleneck, data checked"
	else
		not_ok "rxe server <- sroce client, 5 x 64 KiB through the bottleneck, data checked"
		diag "$PP_OUT"
	fi
	bottleneck "" $VETH_A $RATE
	port=$((20000 + RANDOM % 10000))
	sgi=$(gid_index $DEV_B $IP4_B) cgi=$(gid_index $RXE_DEV $IP4_A)
	# At most 4 x 4 KiB in flight: rdma_rxe has no congestion control and
	# collapses (retry exceeded) if it overflows the queue; this is about
	# the CE marks and the CNPs, which it must survive.
	in_ns $NS_B timeout 90 ib_write_bw -d $DEV_B -x "$sgi" -p $port -F -s 4096 -n 200 -t 4 > "$TMP/srv" 2>&1 &
	spid=$!
	wait_until 15 _listening
	crc=0
	timeout 90 ib_write_bw -d $RXE_DEV -x "$cgi" -p $port -F -s 4096 -n 200 -t 4 --tclass=2 $IP4_B > "$TMP/cli" 2>&1 || crc=$?
	src=0
	wait $spid || src=$?
	snap B1 $DEV_B
	if [[ $crc == 0 && $src == 0 ]]; then
		ok "rxe (tclass 2: ECT(0)) -> sroce ib_write_bw through the bottleneck completes"
	else
		not_ok "rxe (tclass 2: ECT(0)) -> sroce ib_write_bw through the bottleneck completes"
		diag "client exit $crc: $(tail -5 "$TMP/cli")"
		diag "server exit $src: $(tail -5 "$TMP/srv")"
	fi
	if debug_kernel && (($(d B0 B1 rx_ecn_ce) == 0)); then
		# rdma_rxe on the debug kernel may not fill the bottleneck
		skip "sroce answered rdma_rxe's CE marks with CNPs (tx_cnp)" "no CE mark arrived: rdma_rxe did not congest the bottleneck (debug kernel)"
	else
		check_ge "sroce answered rdma_rxe's CE marks with CNPs (tx_cnp)" 1 "$(d B0 B1 tx_cnp)"
	fi
	bottleneck_cleanup "" $VETH_A
	if pingpong ibv_rc_pingpong $NS_B $DEV_B $IP4_B "" $RXE_DEV $IP4_A -c -n 5 -s 65536; then
		ok "sroce server <- rxe client after the CNPs, data checked"
	else
		not_ok "sroce server <- rxe client after the CNPs, data checked"
		diag "$PP_OUT"
	fi
	diag "sroce: CE $(d B0 B1 rx_ecn_ce), CNPs sent $(d B0 B1 tx_cnp), received $(d B0 B1 rx_cnp), retransmits $(d B0 B1 req_retransmits)"
	bottleneck_cleanup $NS_B $VETH_B
fi

# ---- incast: DCQCN on versus off ------------------------------------------------------
# The measurement of scripts/cc-bench, short: two sroce senders (one bulk
# RC flow each, sender 1 also a 64 B ping-pong) into one receiver through
# a 10 Mbit/s htb + RED-ECN switch port, 6 s with DCQCN and 6 s without
# (SELFTEST_LONG=1: 20 s each and rdma_rxe senders too).  Figures come
# from the bottleneck's qdisc counters, the devices' counters and
# perftest; scripts/cc-bench.d/report.py computes them for both.  Asserted,
# relative to the run without DCQCN in the same guest (a loaded host stalls
# the guest for whole seconds, and the absolute figures follow the host's
# load: scripts/cc-bench measures them): at least ten times fewer drops
# per packet offered to the bottleneck, fewer retransmissions, more of the
# link used; fair shares (Jain >= 0.9).
topo_cleanup
rmmod rdma_rxe 2>/dev/null
if debug_kernel; then
	# Ten times slower senders: whether they congest the bottleneck in 6 s
	# is chance there (one run: 415 drops without DCQCN, none and no CNP
	# with it).  The checks above cover the same code under the checkers.
	skip "incast: DCQCN against no congestion control" "timing-bound: not on the debug kernel (scripts/cc-bench measures it)"
	check_dmesg_clean "no kernel warnings"
	finish
fi
BENCH=$TMP/bench phases="dcqcn nocc" secs=6
[[ ${SELFTEST_LONG:-0} == 1 ]] && phases="dcqcn nocc rxe" secs=20
declare -A F
# fig PHASE NAME [SCALE]: the figure as a whole number (x SCALE), or -1
fig() {
	awk -v v="${F[$1.$2]:--}" -v s="${3:-1}" 'BEGIN { if (v == "-") print -1; else printf "%d", v * s + 0.5 }'
}
# void: nothing was measured in a phase: the guest stood still for more
# than half of it (the longest gap between the 0.5 s samples), or its two
# bulk flows never sent at the same time (no received rate "while both
# flows ran": a stalled guest started them too far apart).  Then the
# incast runs once more; void twice, the comparison is skipped with the
# reason (a guest on an idle host stalls for about a second).
void() {
	local ph
	VOID=''
	for ph in $phases; do
		[[ ${F[$ph.rx]:--} == - ]] && VOID+="$ph: the bulk flows never overlapped; "
		awk -v g="${F[$ph.gap]:-0}" -v s=$secs 'BEGIN { exit !(g > s / 2) }' &&
			VOID+="$ph: the guest stood still for $(printf %.1f "${F[$ph.gap]}") s; "
	done
	[[ -n $VOID ]]
}
# starved_diag: what an unfair DCQCN phase did, to explain it next time
# (report.py --flows: each sender's rate every 0.5 s, bytes on its veth
# with retransmissions, beside what the receiver got; its recovery and
# rate counters over the phase; perftest's figure, whose sampling window
# is the middle of the flow's own run).
starved_diag() {
	diag "$(python3 "$(dirname "$0")/../scripts/cc-bench.d/report.py" --flows dcqcn "$BENCH" 2>&1)"
}
for try in 1 2; do
	t0=${EPOCHREALTIME/./}
	if "$(dirname "$0")/../scripts/cc-bench.d/guest" --out "$BENCH" --rate 10 --duration $secs \
		--phases "$phases" --lat-n 100 > "$TMP/bench.log" 2>&1; then
		ok "incast through a 10 Mbit/s bottleneck, phases $phases ($secs s each)$(_slow "${t0:0:-6}.${t0: -6}")"
	else
		not_ok "incast through a 10 Mbit/s bottleneck, phases $phases ($secs s each)"
		diag "$(tail -5 "$TMP/bench.log")"
	fi
	F=()
	while read -r ph k v; do F[$ph.$k]=$v; done < <(python3 "$(dirname "$0")/../scripts/cc-bench.d/report.py" --figures "$BENCH" 2>/dev/null)
	while read -r line; do diag "$line"; done < <(python3 "$(dirname "$0")/../scripts/cc-bench.d/report.py" "$BENCH" 2>&1 | grep -v '^chart')
	if ! void; then
		# Session 31's CI saw one bulk flow starve for a whole DCQCN
		# phase (4.36/0.00 Mbit/s, Jain 0.500; the 6.1 lane had passed
		# it in every run before).  Not understood yet: such a run is
		# reported and the incast runs once more; a second one fails.
		j=$(fig dcqcn jain 1000)
		((j >= 900)) && break
		starved_diag
		[[ $try == 2 ]] && break
		diag "a flow starved with DCQCN (Jain's index $j/1000): once more"
		continue
	fi
	[[ $try == 1 ]] && diag "no measurement (${VOID%; }): once more"
done
check_eq "with DCQCN every flow completed (exit codes bulk1/bulk2/64 B flow)" "0/0/0" "${F[dcqcn.exits]:-}"
if [[ -z $VOID ]]; then
	# Drops per packet offered: without DCQCN the senders spend much of
	# the phase in go-back-N and offer the queue fewer packets, so their
	# count of drops understates the queue's overflow (session 23: 189
	# drops of 3,700 offered against DCQCN's 21 of 8,750).
	dd=$(fig dcqcn drops) nd=$(fig nocc drops)
	dr=$(fig dcqcn drop_rate 100000) nr=$(fig nocc drop_rate 100000)
	check "bottleneck drops: $dd with DCQCN, $nd without (at least 20); per packet offered at least ten times fewer ($dr against $nr per 100,000)" \
		test "$dd" -ge 0 -a "$nd" -ge 20 -a "$dr" -ge 0 -a $((10 * dr)) -le "$nr"
	dr=$(fig dcqcn retx) nr=$(fig nocc retx)
	check "with DCQCN fewer retransmissions than without: $dr versus $nr" test "$dr" -ge 0 -a "$dr" -lt "$nr"
	j=$(fig dcqcn jain 1000)
	check "with DCQCN fair shares: Jain's index $j/1000 (at least 900)" test "$j" -ge 900
	u=$(fig dcqcn util 1000) nu=$(fig nocc util 1000)
	check "link utilisation $u/1000 with DCQCN, more than without ($nu/1000; target 900: scripts/cc-bench)" \
		test "$u" -gt "$nu" -a "$nu" -ge 0
	check_ge "with DCQCN the senders were cut (CNPs sent)" 1 "$(fig dcqcn cnps)"
else
	skip "incast: DCQCN against no congestion control" "no measurement twice (${VOID%; }): host too busy"
fi

check_dmesg_clean "no kernel warnings"
finish
