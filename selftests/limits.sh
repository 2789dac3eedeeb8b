#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# limits.sh: first, every limit sroce advertises (ibv_devinfo -v) is at
# least rdma_rxe's, compared in this boot (limits_cmp.py; an rdma_rxe
# device on a dummy netdev).  Then verbs objects past the device's
# advertised maxima, with build/selftests/limits (limits.cpp): CQ, QP, SRQ
# and MR sizes past the limits (and absurd ones) fail with EINVAL/ENOMEM;
# SRQs and CQs are created up to max_srq/max_cq and the next one is refused
# (SELFTEST_LONG=1 adds AHs, PDs, QPs and MRs).  The counts sroce advertises
# by default are 2^20 (as rdma_rxe's): too many to create here, so the
# module is loaded again with lower ones (its max_* parameters, which go
# through the same counters and checks) for the counting part; the test
# fails if sroce cannot be unloaded first (sroce_load would keep the
# loaded module and its defaults) or if the parameters did not reach the
# device.  The objects the kernel itself has on the device (ib_mad's) are
# read from it and given to limits (-k), which then expects exactly the
# rest to be created.  A process's rings are charged to its memory
# cgroup: a large QP grows the cgroup's kernel memory, and is refused
# with ENOMEM under a memory.max it does not fit (memcg_qp.py).  Then the
# device still moves data (ibv_rc_pingpong with its data check).

. "$(dirname "$0")/lib.sh"

LIMITS=$TOP/build/selftests/limits

if [[ $SROCE_DRIVER == sroce ]]; then
	require_sroce_provider
fi
require_program "$LIMITS" limits.cpp

trap 'topo_cleanup; sroce_unload; ip link del lim_dummy 2>/dev/null' EXIT
dmesg_mark

# Advertised limits against rdma_rxe's, both at their defaults.
if [[ $SROCE_DRIVER == sroce ]] && modprobe -a rdma_rxe dummy 2>/dev/null; then
	sroce_load || { not_ok "load the module"; finish; }
	if ! topo_pair 2>/tmp/topo.err; then
		not_ok "topology (a)"
		diag "$(< /tmp/topo.err)"
		finish
	fi
	ip link add lim_dummy type dummy && ip link set lim_dummy up &&
		rdma link add lim_rxe type rxe netdev lim_dummy
	if ibv_devinfo -v -d lim_rxe > /tmp/limits-rxe.txt 2>&1 &&
	   ibv_devinfo -v -d $DEV_A > /tmp/limits-sroce.txt 2>&1; then
		out=$(python3 "$ST_DIR/limits_cmp.py" /tmp/limits-sroce.txt /tmp/limits-rxe.txt 2>&1)
		rc=$?
		diag "$out"
		if [[ $rc == 0 ]]; then
			ok "every advertised limit at least rdma_rxe's"
		else
			not_ok "every advertised limit at least rdma_rxe's # $(grep -c LOWER <<< "$out") lower"
		fi
	else
		not_ok "ibv_devinfo -v of an rdma_rxe and an sroce device"
		diag "$(cat /tmp/limits-rxe.txt /tmp/limits-sroce.txt 2>/dev/null | tail -5)"
	fi
	rdma link delete lim_rxe 2>/dev/null
	ip link del lim_dummy 2>/dev/null
	topo_cleanup
	# the devices are gone; the module may be busy a moment longer
	wait_until 5 rmmod_sroce
else
	skip "advertised limits against rdma_rxe's" "needs sroce and the rdma_rxe and dummy modules"
fi

# The counting part: low enough to create them all in seconds.  The
# parameters apply only to a fresh load (sroce_load keeps a loaded module):
# sroce must be unloaded first, and they must be what the device reports.
declare -A LIM=([max_cq]=2000 [max_srq]=1000 [max_qp]=1000 [max_pd]=2000 [max_mr]=2000)
params=()
for p in "${!LIM[@]}"; do params+=("$p=${LIM[$p]}"); done
if [[ $SROCE_DRIVER == sroce ]]; then
	if ! wait_until 5 rmmod_sroce; then
		not_ok "sroce unloaded before loading it with ${params[*]}"
		diag "rmmod sroce: $(rmmod sroce 2>&1); refcnt $(< /sys/module/sroce/refcnt)"
		diag "$(rdma link show 2>&1)"
		finish
	fi
fi
sroce_load "${params[@]}" || { not_ok "load the module with ${params[*]}"; finish; }
if ! topo_pair 2>/tmp/topo.err; then
	not_ok "topology (a)"
	diag "$(< /tmp/topo.err)"
	finish
fi
ok "topology (a)"

if [[ $SROCE_DRIVER == sroce ]]; then
	# what the module took, and what the device it made advertises
	bad=
	devinfo=$(ibv_devinfo -v -d $DEV_A 2>&1)
	for p in "${!LIM[@]}"; do
		v=$(< /sys/module/sroce/parameters/$p)
		[[ $devinfo =~ [[:space:]]$p:[[:space:]]+([0-9]+) ]] && a=${BASH_REMATCH[1]} || a=none
		[[ $v == "${LIM[$p]}" && $a == "${LIM[$p]}" ]] || bad+="$p: parameter '$v', $DEV_A advertises '$a', want ${LIM[$p]}; "
	done
	if [[ -n $bad ]]; then
		not_ok "sroce loaded with ${params[*]}"
		diag "$bad"
		finish
	fi
	ok "sroce loaded with ${params[*]}"
fi

# kernel_objects DEV: "-k" of limits: the objects already on DEV, which the
# device counts against its maxima.  No process has DEV open now, so what
# `rdma resource show` counts (pd, cq, qp, mr, srq) is the kernel's:
# ib_mad's PD, CQ and QP1 on a RoCE port (and whatever a ULP left).  It
# does not list a PD's internal DMA MR: ib_alloc_pd() gets one from the
# driver (get_dma_mr, counted in max_mr) for every kernel PD on a device
# without a local DMA lkey, as sroce (IBK_LOCAL_DMA_LKEY unset) and
# rdma_rxe are; so mr is what it lists plus one per PD.  AHs it does not
# count at all: the kernel's (MAD replies) live only while a MAD is sent,
# and no MAD is sent here.
kernel_objects() {
	local out k
	local -A n
	out=$(rdma resource show "$1" 2>&1) || { echo "rdma resource show $1: $out" >&2; return 1; }
	for k in pd cq qp mr srq ctx; do
		[[ $out =~ [[:space:]]${k}[[:space:]]+([0-9]+) ]] ||
			{ echo "rdma resource show $1 has no $k count: $out" >&2; return 1; }
		n[$k]=${BASH_REMATCH[1]}
	done
	[[ ${n[ctx]} == 0 ]] || { echo "a process has $1 open: $out" >&2; return 1; }
	echo "srq=${n[srq]},ah=0,cq=${n[cq]},pd=${n[pd]},qp=${n[qp]},mr=$((n[mr] + n[pd]))"
	echo "$out" >&2
}

ga=$(gid_index $DEV_A $IP4_A)
if ! held=$(kernel_objects $DEV_A 2>/tmp/limits-res.txt); then
	not_ok "the kernel's objects on $DEV_A"
	diag "$(< /tmp/limits-res.txt)"
	finish
fi
diag "$(< /tmp/limits-res.txt)"
diag "kernel objects on $DEV_A (limits -k): $held"
args=(-d $DEV_A -g "$ga" -k "$held")
[[ ${SELFTEST_LONG:-0} == 1 ]] && args+=(-a)
rc=0 t0=$EPOCHREALTIME
ulimit -l unlimited
out=$(timeout 150 "$LIMITS" "${args[@]}" 2>&1) || rc=$?
diag "$out"
sub_verdict -n limits $rc "$out" "$t0" "every object past the maxima refused cleanly"

# memcg_charge: a process's rings are charged to its memory cgroup.  An RC
# QP with 2^20 send WRs (a ring of at least 64 MiB) grows the cgroup's
# kernel memory by at least that much; with memory.max 32M the same QP is
# refused with ENOMEM (no OOM kill: memory.events oom_kill stays 0).
memcg_charge() {
	local root=/sys/fs/cgroup cg=/sys/fs/cgroup/sroce_limits out rc grew
	local name="rings charged to the process's memory cgroup"
	if [[ $SROCE_DRIVER != sroce ]]; then
		skip "$name" "sroce-specific (rdma_rxe does not charge its queues)"
		return
	fi
	if ! /usr/bin/python3 -c 'import pyverbs' 2>/dev/null; then
		skip "$name" "/usr/bin/python3 cannot import pyverbs (install python3-pyverbs)"
		return
	fi
	if [[ ! -e $root/cgroup.controllers ]] && ! out=$(mount -t cgroup2 none $root 2>&1); then
		skip "$name" "cannot mount cgroup2 on $root: $out"
		return
	fi
	if ! grep -qw memory $root/cgroup.controllers; then
		skip "$name" "no memory controller in $root/cgroup.controllers"
		return
	fi
	echo +memory > $root/cgroup.subtree_control
	mkdir -p $cg
	# in_cg ARGS...: memcg_qp.py $DEV_A $cg ARGS in a process of $cg
	in_cg() {
		bash -c 'echo $$ > "$1/cgroup.procs" && exec /usr/bin/python3 "$2" "${@:3}"' \
			_ $cg "$ST_DIR/memcg_qp.py" $DEV_A $cg "$@" 2>&1
	}
	rc=0
	out=$(in_cg $((1 << 20))) || rc=$?
	diag "memory.max max: $out"
	grew=$(grep -o 'kernel memory of the cgroup +[0-9]*' <<< "$out")
	grew=${grew##*+}
	if [[ $rc == 0 && ${grew:-0} -ge $((64 << 20)) ]]; then
		ok "$name: a QP with 2^20 send WRs grew its kernel memory by $((grew >> 20)) MiB"
	else
		not_ok "$name: a QP with 2^20 send WRs grew its kernel memory by at least 64 MiB # exit $rc, ${grew:-no} bytes"
	fi
	echo 32M > $cg/memory.max
	rc=0
	out=$(in_cg $((1 << 20))) || rc=$?
	diag "memory.max 32M: exit $rc: $out"
	diag "memory.events: $(tr '\n' ' ' < $cg/memory.events)"
	check_eq "memory.max 32M: the QP refused with ENOMEM (exit 3)" 3 "$rc"
	check_eq "memory.max 32M: no OOM kill" 0 "$(awk '$1 == "oom_kill" { print $2 }' $cg/memory.events)"
	rmdir $cg
}
memcg_charge

check "ibv_rc_pingpong after the limits" pingpong_said ibv_rc_pingpong $NS_B $DEV_B $IP4_B $NS_A $DEV_A $IP4_A -n 50 -s 4096 -c
topo_cleanup
check_dmesg_clean "kernel log clean"
finish
