#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# teardown.sh: teardown under traffic, on topology (a).  Each way of
# tearing down runs in a loop while an ibv_rc_pingpong pair (data checked
# with -c) moves 64 KiB messages between sroce0 and sroce1 (each teardown
# starts once the client's RC QP is in RTS and sroce0's tx_packets grow):
#   link     `rdma link delete sroce0`, then the processes are killed
#   netdev   `ip link del` of sroce0's veth end (the device goes with it)
#   netns    the veth end moves to another namespace (the device goes)
#   rmmod    `rmmod sroce` while the processes hold the device: refused
#            ("in use": every user context pins the module) with the
#            devices left in place; once the processes are killed it
#            succeeds
#   kill     SIGKILL of both processes mid-transfer
# (link and kill with on-demand paged MRs: ibv_rc_pingpong -o)
# After every iteration the device is re-added (where it went) and
# becomes ACTIVE; at the end no QP, CQ, MR or PD is left in `rdma
# resource`, the module's reference count is back where it started, rmmod
# succeeds, and a fresh pair moves checked data.  Slab usage is reported.
#
#   TEARDOWN_ITERS   iterations per way (default 2, 1 on the debug kernel;
#                    SELFTEST_LONG=1: 50)
#   TEARDOWN_WAYS    the ways to run, from "link netdev netns rmmod kill"
#                    (the default: all of them)

. "$(dirname "$0")/lib.sh"

[[ $SROCE_DRIVER == sroce ]] || skip_all "sroce-specific (module reference count)"
require_sroce_provider

iters=${TEARDOWN_ITERS:-$(debug_size 2 1)}
[[ ${SELFTEST_LONG:-0} == 1 ]] && iters=${TEARDOWN_ITERS:-50}
ways=${TEARDOWN_WAYS:-link netdev netns rmmod kill}
for w in $ways; do
	[[ " link netdev netns rmmod kill " == *" $w "* ]] ||
		{ echo "TEARDOWN_WAYS: unknown way '$w' (link netdev netns rmmod kill)" >&2; exit 1; }
done
NS_C=sroce_c
pids=()

stop_traffic() {
	local p
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	pids=()
}
cleanup() {
	stop_traffic
	ip netns del $NS_C 2>/dev/null
	topo_cleanup
	sroce_unload
}
trap cleanup EXIT
dmesg_mark
sroce_load || { not_ok "load the module"; finish; }

# slab_total: active bytes in all slab caches (KiB), from /proc/slabinfo
slab_total() {
	awk 'NR > 2 { s += $2 * $4 } END { printf "%d\n", s / 1024 }' /proc/slabinfo
}

# slab_growth FILE: the five caches that grew most (KiB) since FILE, a copy
# of /proc/slabinfo (the total also moves with namespaces, netdevs, dentries)
slab_growth() {
	awk 'FNR > 2 && NR == FNR { b[$1] = $2 * $4; next }
	     FNR > 2 { d = ($2 * $4 - b[$1]) / 1024; if (d >= 1) printf "%s +%d\n", $1, d }' \
		"$1" /proc/slabinfo | sort -t+ -k2 -rn | head -5 | tr '\n' ' '
}

# start_traffic: an ibv_rc_pingpong server on sroce1 and client on sroce0,
# running until killed; returns once the client is connected
# start_traffic [ARGS...]: ARGS go to both ibv_rc_pingpong (-o: on-demand
# paged MRs)
start_traffic() {
	local port=$((20000 + RANDOM % 10000)) sgi cgi
	sgi=$(gid_index $DEV_B $IP4_B) cgi=$(gid_index $DEV_A $IP4_A)
	[[ -n $sgi && -n $cgi ]] || return 1
	ip netns exec $NS_B ibv_rc_pingpong -d $DEV_B -g "$sgi" -p $port -n 100000000 -s 65536 -c \
		"$@" > /tmp/td.srv 2>&1 &
	pids+=($!)
	_td_listen() { [[ -n $(ip netns exec $NS_B ss -Hltn "sport = :$port" 2>/dev/null) ]]; }
	wait_until 15 _td_listen || return 1
	ip netns exec $NS_A ibv_rc_pingpong -d $DEV_A -g "$cgi" -p $port -n 100000000 -s 65536 -c \
		"$@" $IP4_B > /tmp/td.cli 2>&1 &
	pids+=($!)
	# connected: the client's RC QP in RTS (not QP1, the GSI QP, which
	# the MAD layer keeps in RTS whatever runs)
	_td_rts() {
		rdma resource show qp link $DEV_A/1 2>/dev/null |
			grep ' type RC ' | grep ' state RTS ' | grep -q ibv_rc_pingpong
	}
	wait_until 15 _td_rts || { echo "no RC QP of ibv_rc_pingpong in RTS on $DEV_A"; return 1; }
	# under traffic: the client's device sends
	tx0=$(port_attr $DEV_A hw_counters/tx_packets) || { echo "$DEV_A has no tx_packets counter"; return 1; }
	_td_sending() { (($(port_attr $DEV_A hw_counters/tx_packets) > tx0)); }
	wait_until 15 _td_sending || { echo "$DEV_A sent nothing in 15 s (tx_packets $tx0)"; return 1; }
}

# readd: bring topology (a) back where a teardown took a part of it away
readd() {
	if ! ip -n $NS_A link show $VETH_A > /dev/null 2>&1; then
		ip netns del $NS_C 2>/dev/null
		ip -n $NS_B link del $VETH_B 2>/dev/null
		ip link add $VETH_A netns $NS_A type veth peer name $VETH_B netns $NS_B &&
		_topo_end $NS_A $VETH_A $IP4_A $IP6_A && _topo_end $NS_B $VETH_B $IP4_B $IP6_B || return 1
	fi
	grep -qw '^sroce' /proc/modules || sroce_load || return 1
	ibdev_exists $DEV_A || _topo_link $NS_A $DEV_A sroce $VETH_A || return 1
	ibdev_exists $DEV_B || _topo_link $NS_B $DEV_B sroce $VETH_B || return 1
	_topo_wait_active $DEV_A && _topo_wait_active $DEV_B
}

if ! topo_pair 2>/tmp/topo.err; then
	not_ok "topology (a)"
	diag "$(< /tmp/topo.err)"
	finish
fi
ok "topology (a)"
refcnt0=$(< /sys/module/sroce/refcnt)
slab0=$(slab_total)
cp /proc/slabinfo /tmp/td.slab0

# way NAME: one iteration of teardown NAME under traffic; 0 if it went
# right.  It runs in a subshell (its output is the failure's message), the
# only one that knows the traffic's processes: it stops them on a failure.
way() { _way "$@" && return 0; stop_traffic; return 1; }
_way() {
	local name=$1 out odp=()
	# The device deleted, and the processes killed, with on-demand paged
	# MRs (odp.c): their umems and fault work go with the context.
	[[ $name == link || $name == kill ]] && odp=(-o)
	start_traffic "${odp[@]}" || { echo "traffic did not start: server: $(< /tmp/td.srv) client: $(< /tmp/td.cli)"; return 1; }
	sleep 0.$((RANDOM % 9 + 1))
	case $name in
	link)
		rdma link delete $DEV_A || return 1
		wait_until 10 ibdev_gone $DEV_A || { echo "$DEV_A still there"; return 1; }
		stop_traffic ;;
	netdev)
		ip -n $NS_A link del $VETH_A || return 1
		wait_until 10 ibdev_gone $DEV_A || { echo "$DEV_A still there after ip link del"; return 1; }
		stop_traffic ;;
	netns)
		ip netns add $NS_C 2>/dev/null
		ip -n $NS_A link set $VETH_A netns $NS_C || return 1
		wait_until 10 ibdev_gone $DEV_A || { echo "$DEV_A still there after the netns move"; return 1; }
		stop_traffic
		ip -n $NS_C link set $VETH_A netns $NS_A || return 1
		_topo_end $NS_A $VETH_A $IP4_A $IP6_A || return 1 ;;
	rmmod)
		out=$(rmmod sroce 2>&1) && { echo "rmmod under traffic succeeded"; return 1; }
		[[ $out == *"in use"* ]] || { echo "rmmod under traffic: $out (expected: in use)"; return 1; }
		ibdev_exists $DEV_A && ibdev_exists $DEV_B || { echo "a device went with the refused rmmod"; return 1; }
		stop_traffic
		wait_until 10 rmmod_sroce || { echo "rmmod after the processes exited: $(rmmod sroce 2>&1)"; return 1; }
		ibdev_gone $DEV_A && ibdev_gone $DEV_B || { echo "devices left after rmmod"; return 1; } ;;
	kill)
		stop_traffic
		_td_noqp() { [[ $(rdma resource show qp link $DEV_A/1 2>/dev/null) != *ibv_rc_pingpong* ]]; }
		wait_until 10 _td_noqp || { echo "a killed process's QP is still there"; return 1; } ;;
	esac
	# -c: what arrived before the teardown was right
	! grep -h 'invalid data' /tmp/td.srv /tmp/td.cli || return 1
	readd || { echo "re-adding the device failed"; return 1; }
}

for w in $ways; do
	t0=$EPOCHREALTIME fails=0 msg=
	for ((i = 1; i <= iters; i++)); do
		if ! msg=$(way $w 2>&1); then
			fails=$((fails + 1))
			stop_traffic
			readd > /dev/null 2>&1
			break
		fi
	done
	stop_traffic
	if [[ $fails == 0 ]]; then
		ok "$w under traffic, $iters times$(_slow "$t0")"
	else
		not_ok "$w under traffic: iteration $i failed"
		diag "$msg"
		diag "client: $(tail -3 /tmp/td.cli)"
	fi
done

# Nothing left behind (rdma itself must answer: an empty listing from a
# failing rdma proves nothing).
if res=$({ rdma resource show qp && rdma resource show cq && rdma resource show mr &&
	   rdma resource show pd; } 2>/tmp/td.rdma); then
	check_eq "no QP, CQ, MR or PD left on $DEV_A/$DEV_B" "" \
		"$(grep -E "($DEV_A|$DEV_B)[/ ].*comm [^[]" <<< "$res")"
else
	not_ok "no QP, CQ, MR or PD left on $DEV_A/$DEV_B: rdma resource show failed"
	diag "$(< /tmp/td.rdma)"
fi
check_eq "module reference count back to $refcnt0 (module reloaded by rmmod way)" "$refcnt0" "$(< /sys/module/sroce/refcnt)"
# It sleeps on completion events (-e): two busy-polling ping-pongs on the
# guest's two vCPUs starve the softirqs that carry their ACKs, and on the
# debug kernel of a loaded host the ACKs of a 64-packet message then come
# later than ibv_rc_pingpong's fixed 67 ms ACK timeout allows seven times
# over (IBV_WC_RETRY_EXC_ERR with no packet lost).
check "a fresh ibv_rc_pingpong moves checked data" \
	pingpong_said ibv_rc_pingpong $NS_B $DEV_B $IP4_B $NS_A $DEV_A $IP4_A -n 20 -s 65536 -c -e
diag "slab: $slab0 KiB at the start, $(slab_total) KiB at the end; module refcnt $refcnt0 -> $(< /sys/module/sroce/refcnt)"
diag "slab caches that grew most (KiB): $(slab_growth /tmp/td.slab0)"
topo_cleanup
ip netns del $NS_C 2>/dev/null
check "rmmod sroce at the end" rmmod sroce
check_dmesg_clean "kernel log clean"
finish
