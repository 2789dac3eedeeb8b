#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# nvme.sh: NVMe over Fabrics on sroce, the kernel's own RDMA storage ULPs.
# Target: nvmet + nvmet-rdma exporting a memory-backed null_blk namespace,
# configured through configfs.  Host: nvme-rdma via `nvme connect -t rdma`.
# fio writes NVME_MIB (256; 32 on the debug kernel) MiB with crc32c
# verification headers through O_DIRECT and reads every block back and
# verifies it (--verify_fatal).
#   (1) two devices: the target listens on sroce1 (192.168.77.2), the host
#       connects from sroce0 (--host-traddr 192.168.77.1);
#   (2) case 1's path with netem dropping 2% of the packets each way: the
#       block layer's I/O rides on sroce's retransmission (kernel QPs, RoCE
#       MTU 4096): the data verify, sroce retransmitted, no QP ran out of
#       retries and nvme-rdma never started error recovery;
#   (3) one device: target and host both on sroce0 (QPs of one device talk
#       to each other through sroce's loopback), nvmet-rdma with use_srq=1
#       (its queues receive through shared receive queues);
# each case checks on which devices the RC QPs are, disconnects, and the
# data survive a reconnect (a verify-only read of the first quarter in
# case 1).  Then the host connects once more over two devices and its
# device is deleted (`rdma link delete`) while fio writes: the controller
# and its disk must go and fio end.  Then
# `rdma link delete` of the other device with nvmet-rdma still loaded, rmmod
# of every ULP module (a leaked reference makes it fail), sroce's module
# reference count back, kernel log clean.
#
# nvme-rdma and nvmet-rdma create their rdma_cm IDs in the initial network
# namespace, so both veth ends and both devices live there; rdma_rxe (UDP
# 4791 in the initial namespace too) must not be loaded.  Needs nvme-cli and
# fio (scripts/install-deps).

. "$(dirname "$0")/lib.sh"

[[ $SROCE_DRIVER == sroce ]] || skip_all "nvme.sh runs on sroce only (rdma_rxe shares UDP 4791 in init_net)"
sroce_ko > /dev/null || skip_all "no sroce.ko for $(uname -r) under build/kmod (make module)"
command -v nvme > /dev/null || skip_all "nvme-cli not installed (scripts/install-deps)"
command -v fio > /dev/null || skip_all "fio not installed (scripts/install-deps)"
require_modules nvmet_rdma nvme_rdma null_blk

# On the debug kernel fio moves a few MiB/s: 32 MiB still crosses many
# MRs and queue wraps, and leaves the lane its time for the other tests.
MIB=${NVME_MIB:-$(debug_size 256 32)}
REVERIFY_MIB=$((MIB / 4))
NQN=nqn.2026-11.org.sroce:selftest
HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:5e1f7e57-0000-4000-8000-000000000001
CFG=/sys/kernel/config
NVMET=$CFG/nvmet
PORT=$NVMET/ports/1
SUBSYS=$NVMET/subsystems/$NQN
NULLB=$CFG/nullb/sroce_nvme	# the disk takes the configfs directory's name
ULP_MODS="nvme_rdma nvme_fabrics nvmet_rdma nvmet null_blk"

cleanup() {
	nvme disconnect -n "$NQN" > /dev/null 2>&1
	rm -f "$PORT/subsystems/$NQN" 2>/dev/null
	rmdir "$PORT" 2>/dev/null
	[[ -d $SUBSYS ]] && {
		echo 0 > "$SUBSYS/namespaces/1/enable"
		rmdir "$SUBSYS/namespaces/1" "$SUBSYS"
	} 2>/dev/null
	[[ -d $NULLB ]] && { echo 0 > "$NULLB/power"; rmdir "$NULLB"; } 2>/dev/null
	ulp_cleanup $ULP_MODS
}
trap cleanup EXIT

# The initial namespace's UDP 4791 must be free for sroce; both veth ends
# and devices there (topo_initial_pair), the host binds to 192.168.77.1.
ulp_storage_start

# Target: a memory-backed null_blk (configfs, so its size is in MiB) as
# namespace 1 of subsystem NQN, any host allowed.
target_setup() {
	modprobe null_blk nr_devices=0 &&
	mkdir "$NULLB" &&
	echo $((MIB + 32)) > "$NULLB/size" &&
	echo 1 > "$NULLB/memory_backed" &&
	echo 4096 > "$NULLB/blocksize" &&
	echo 1 > "$NULLB/power" &&
	modprobe -a nvmet nvmet_rdma &&
	mkdir "$SUBSYS" &&
	echo 1 > "$SUBSYS/attr_allow_any_host" &&
	mkdir "$SUBSYS/namespaces/1" &&
	[[ -b /dev/${NULLB##*/} ]] &&
	echo "/dev/${NULLB##*/}" > "$SUBSYS/namespaces/1/device_path" &&
	echo 1 > "$SUBSYS/namespaces/1/enable" &&
	modprobe nvme_rdma
}
if target_setup 2> /tmp/target.err; then
	ok "nvmet: null_blk namespace of $((MIB + 32)) MiB in $NQN"
else
	not_ok "nvmet: null_blk namespace in $NQN"
	diag "$(< /tmp/target.err)"
	finish
fi

# port_listen IP: the RDMA port listens on IP:4420 for NQN
port_listen() {
	{
		mkdir "$PORT" &&
		echo rdma > "$PORT/addr_trtype" &&
		echo ipv4 > "$PORT/addr_adrfam" &&
		echo "$1" > "$PORT/addr_traddr" &&
		echo 4420 > "$PORT/addr_trsvcid" &&
		ln -s "$SUBSYS" "$PORT/subsystems/$NQN"
	} 2>&1
}

port_remove() {
	rm -f "$PORT/subsystems/$NQN" && rmdir "$PORT"
}

# nvme_blockdev: the namespace's block device (the guest has no other NVMe;
# with native multipath the per-path nodes nvmeXcYn1 are hidden)
nvme_blockdev() {
	local b
	for b in /sys/block/nvme*n1; do
		[[ ${b##*/} =~ ^nvme[0-9]+n1$ ]] && { echo "/dev/${b##*/}"; return 0; }
	done
	return 1
}

# connect NAME ADDR [HOST_ADDR]
connect() {
	local name=$1 out rc=0 t0=$EPOCHREALTIME
	out=$(nvme connect -t rdma -a "$2" -s 4420 -n "$NQN" --hostnqn="$HOSTNQN" \
		${3:+--host-traddr="$3"} 2>&1) || rc=$?
	if [[ $rc == 0 ]] && wait_until 20 nvme_blockdev > /dev/null; then
		BDEV=$(nvme_blockdev)
		ok "$name$(_slow "$t0") ($BDEV)"
		return 0
	fi
	not_ok "$name$(_slow "$t0")"
	diag "nvme connect exit $rc: $out"
	diag "$(dmesg | tail -15)"
	return 1
}

# disconnect NAME: nvme disconnect says it disconnected one controller, and
# the block device is gone within 10 s
disconnect() {
	local out said
	out=$(nvme disconnect -n "$NQN" 2>&1)
	said=$(grep -o 'disconnected [0-9]* controller(s)' <<< "$out")
	if [[ $said != "disconnected 1 controller(s)" ]]; then
		not_ok "$1"
		diag "nvme disconnect -n $NQN: expected 'disconnected 1 controller(s)', got: $out"
	elif ! wait_until 10 eval '! nvme_blockdev > /dev/null'; then
		not_ok "$1: $(nvme_blockdev) still there 10 s after it"
		diag "$out"
	else
		ok "$1"
	fi
}

# case_run LABEL TARGET_IP HOST_IP QPS_A QPS_B: connect, check the QPs are
# where they must be, fio write + verify, disconnect (and reconnect + verify
# when $REVERIFY)
case_run() {
	local label=$1 tip=$2 hip=$3 n
	local out
	if ! out=$(port_listen "$tip"); then
		not_ok "$label: nvmet port rdma $tip:4420"
		diag "$out"
		return 1
	fi
	ok "$label: nvmet port rdma $tip:4420"
	connect "$label: nvme connect -t rdma -a $tip${hip:+ -w $hip}" "$tip" "$hip" || {
		port_remove
		return 1
	}
	n=$(rc_qps $DEV_A)/$(rc_qps $DEV_B)
	if [[ $n == "$4" ]]; then
		ok "$label: RC QPs in RTS on $DEV_A/$DEV_B: $n"
	else
		not_ok "$label: RC QPs in RTS on $DEV_A/$DEV_B: $n, expected $4"
		diag "$(rdma resource show qp)"
	fi
	if [[ -n $SRQ_CHECK ]]; then
		n=$(rdma resource show srq 2>/dev/null | grep "$DEV_A" | grep -c srqn)
		if [[ $n -gt 0 ]]; then
			ok "$label: $n SRQs on $DEV_A"
		else
			not_ok "$label: no SRQ on $DEV_A"
			diag "$(rdma resource show srq 2>&1)"
		fi
	fi
	fio_verify "$label: fio write $MIB MiB, read back, crc32c verify" "$BDEV" $MIB
	disconnect "$label: nvme disconnect"
	if [[ -n $REVERIFY ]] &&
	   connect "$label: reconnect" "$tip" "$hip"; then
		fio_verify "$label: fio verify-only read of $REVERIFY_MIB MiB after reconnect" "$BDEV" $REVERIFY_MIB verify
		disconnect "$label: nvme disconnect after reconnect"
	fi
	check "$label: nvmet port removed" port_remove
}

compgen -G '/sys/block/nvme*' > /dev/null && skip_all "an NVMe device exists already"

# nvme-rdma opens one admin queue and one I/O queue per CPU on each side.
ncpu=$(nproc)
qps=$((ncpu + 1))
REVERIFY=1 case_run "two devices" $IP4_B $IP4_A "$qps/$qps"

# Case 2: case 1's path with netem dropping LOSS of the packets on both veth
# ends (rdma_cm's MADs too: a lost one costs the connect a retry).
LOSS=2%
LOSS_MIB=$(debug_size 64 16)
((LOSS_MIB <= MIB)) || LOSS_MIB=$MIB
lossy_case() {
	local label="two devices, $LOSS loss each way" recovery
	ulp_lossy_on "$label" $LOSS || return
	echo "selftest-nvme-lossy-$$" > /dev/kmsg
	MIB=$LOSS_MIB case_run "$label" $IP4_B $IP4_A "$qps/$qps"
	ulp_lossy_off
	recovery=$(dmesg | sed -n "/selftest-nvme-lossy-$$/,\$p" |
		grep -E 'nvme.*(error recovery|Reconnecting|timeout)' | head -5)
	check "$label: nvme-rdma never started error recovery" test -z "$recovery"
	[[ -z $recovery ]] || diag "$recovery"
}
lossy_case

# Case 3, one device, with nvmet-rdma's receive queues replaced by SRQs
# (use_srq=1): kernel ib_post_srq_recv, one SRQ per completion vector
# shared by the target's queues.
if rmmod nvmet_rdma && modprobe nvmet_rdma use_srq=1; then
	ok "nvmet_rdma reloaded with use_srq=1"
else
	not_ok "nvmet_rdma reloaded with use_srq=1"
fi
SRQ_CHECK=1 case_run "one device (loopback), target SRQs" $IP4_A "" "$((2 * qps))/0"

# The host's device deleted while fio writes (blktests' nvme tests on
# rdma_rxe hung in such teardowns): nvme-rdma deletes the controller, the
# namespace's disk goes, fio ends with I/O errors, nothing hangs.
if port_listen $IP4_B > /tmp/port.err; then
	connect "two devices again: nvme connect -t rdma -a $IP4_B -w $IP4_A" $IP4_B $IP4_A &&
		cut_under_io "host's device deleted" "$BDEV" 0 $MIB "! nvme_blockdev > /dev/null && ibdev_gone $DEV_A" \
			timeout 60 rdma link delete $DEV_A
	check "nvmet port removed after the cut" port_remove
else
	not_ok "nvmet port rdma $IP4_B:4420 again"
	diag "$(< /tmp/port.err)"
fi

ulp_delete_links "with nvmet-rdma loaded" 10 $DEV_B

rm -f "$PORT/subsystems/$NQN" 2>/dev/null
rmdir "$PORT" 2>/dev/null
echo 0 > "$SUBSYS/namespaces/1/enable"
rmdir "$SUBSYS/namespaces/1" "$SUBSYS"
echo 0 > "$NULLB/power"
rmdir "$NULLB"
ulp_finish $ULP_MODS
