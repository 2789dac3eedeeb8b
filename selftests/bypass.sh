#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bypass.sh: the datapath stays in userspace.  ibv_rc_pingpong (busy
# polling) runs twice under `strace -c`, with N1 and N2 iterations; every
# system call the longer run makes beyond the shorter one must be a write()
# (the send doorbell), one per iteration: ibv_post_recv and ibv_poll_cq make
# none, ibv_post_send exactly one.

. "$(dirname "$0")/lib.sh"

N1=100
N2=300

command -v strace > /dev/null || skip_all "strace is not installed"
if [[ $SROCE_DRIVER == sroce ]]; then
	require_sroce_provider
fi
trap 'topo_cleanup; sroce_unload' EXIT
dmesg_mark
sroce_load || { not_ok "load the module"; finish; }
topo_pair 2>/tmp/topo.err || { not_ok "topology (a)"; diag "$(< /tmp/topo.err)"; finish; }
ok "topology (a)"
sgi=$(gid_index "$DEV_B" "$IP4_B")
cgi=$(gid_index "$DEV_A" "$IP4_A")

# syscalls N: run a ping-pong of N iterations with the client under strace;
# prints "TOTAL WRITES" of the client, fails if the ping-pong failed
syscalls() {
	local n=$1 port=$((20000 + RANDOM % 10000)) spid total writes
	in_ns $NS_B timeout 60 ibv_rc_pingpong -d $DEV_B -g "$sgi" -p $port -n "$n" > /tmp/bp.srv 2>&1 &
	spid=$!
	_bp_listening() { [[ -n $(in_ns $NS_B ss -Hltn "sport = :$port" 2>/dev/null) ]] || ! kill -0 $spid 2>/dev/null; }
	wait_until 15 _bp_listening
	in_ns $NS_A timeout 120 strace -f -c -o /tmp/bp.strace \
		ibv_rc_pingpong -d $DEV_A -g "$cgi" -p $port -n "$n" $IP4_B > /tmp/bp.cli 2>&1 || return 1
	wait $spid || return 1
	# strace -c rows: "% time seconds usecs/call calls [errors] syscall";
	# sum the calls of every syscall row (not the "total" row, whose
	# columns differ between strace versions)
	total=$(awk '$1 ~ /^[0-9.]+$/ && $NF != "total" && NF >= 5 { n += $4 } END { print n + 0 }' /tmp/bp.strace)
	writes=$(awk '$1 ~ /^[0-9.]+$/ && $NF == "write" { print $4; exit }' /tmp/bp.strace)
	echo "${total:-0} ${writes:-0}"
}

if ! r1=$(syscalls $N1); then
	not_ok "ping-pong $N1 iterations under strace"
	diag "$(cat /tmp/bp.srv /tmp/bp.cli)"
	finish
fi
ok "ping-pong $N1 iterations under strace"
diag "client, $N1 iterations: $(head -c 3000 /tmp/bp.strace)"
if ! r2=$(syscalls $N2); then
	not_ok "ping-pong $N2 iterations under strace"
	diag "$(cat /tmp/bp.srv /tmp/bp.cli)"
	finish
fi
ok "ping-pong $N2 iterations under strace"
diag "client, $N2 iterations: $(head -c 3000 /tmp/bp.strace)"

read -r t1 w1 <<< "$r1"
read -r t2 w2 <<< "$r2"
extra=$((t2 - t1)) extra_w=$((w2 - w1)) iters=$((N2 - N1))
diag "system calls: $t1 for $N1 iterations, $t2 for $N2; write(): $w1, $w2"
check_eq "the extra $iters iterations made only write() doorbells" "$extra_w" "$extra"
if (( extra_w >= iters && extra_w <= iters + 2 )); then
	ok "one doorbell per ibv_post_send ($extra_w for $iters iterations)"
else
	not_ok "one doorbell per ibv_post_send ($extra_w for $iters iterations)"
fi
check_dmesg_clean "kernel log clean"
finish
