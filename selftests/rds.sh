#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# rds.sh: RDS over RDMA (net/rds, rds_rdma) on sroce, the third kernel ULP
# after nvme-rdma and NFS/RDMA: RDS makes its own rdma_cm connections and
# RC QPs, registers user memory with fast registration (zero-based
# addresses) and runs RDMA READ and WRITE for AF_RDS sockets.
# build/selftests/rds_test (rds_test.c) checks it byte for byte and status
# for status:
#   (1) two devices: sockets on 192.168.77.1 (sroce0) and .2 (sroce1);
#   (2) one device: two addresses of sroce0 (RDS's QPs on one device talk
#       through sroce's loopback);
#   (3) case 1 again, netem dropping 2% of the packets each way: sroce
#       retransmitted and no QP ran out of retries (rds_test -l: without
#       its two R_Key errors, whose NAK netem may drop, and then the
#       requester rightly runs out of retries against a responder QP that
#       went to the error state as it sent the NAK);
# then the RC QPs RDS made are on the devices, `rdma link delete` of both
# devices with RDS's connections up, rmmod rds_rdma and rds (a leaked
# reference makes it fail), sroce's module reference count back, kernel
# log clean.
#
# RDS/IB makes its rdma_cm IDs in the initial network namespace only, so
# both devices live there; rdma_rxe (UDP 4791 there too) must not be
# loaded.  No user-space package is needed: rds_test uses the socket API.

. "$(dirname "$0")/lib.sh"

[[ $SROCE_DRIVER == sroce ]] || skip_all "rds.sh runs on sroce only (rdma_rxe shares UDP 4791 in init_net)"
sroce_ko > /dev/null || skip_all "no sroce.ko for $(uname -r) under build/kmod (make module)"
require_modules rds_rdma

RDS=$TOP/build/selftests/rds_test
require_program "$RDS" rds_test.c
IP4_C=192.168.77.3		# a second address of sroce0's netdev
MSGS=$(debug_size 2000 300)	# per direction in the stream test
ULP_MODS="rds_rdma rds"

trap 'ulp_cleanup $ULP_MODS' EXIT

ulp_start

if ! topo_initial_pair 2> /tmp/topo.err ||
   ! ip addr add $IP4_C/24 dev $VETH_A 2>> /tmp/topo.err; then
	not_ok "two sroce devices in the initial namespace"
	diag "$(< /tmp/topo.err)"
	finish
fi
ok "two sroce devices in the initial namespace, $IP4_C a second address of $DEV_A"
# RDS gives its QPs one transport retry (rds_ib_retry_count, default 1): a
# lossy path exhausts it now and then by design, and RDS reconnects and
# resends.  The lossy case below is about sroce's recovery, so RDS asks for
# 7, as nvme-rdma does.
check "modprobe rds_rdma rds_ib_retry_count=7" modprobe rds_rdma rds_ib_retry_count=7 || finish

# rds_case LABEL IP_A IP_B [OPTION...]: rds_test between sockets bound to
# IP_A and IP_B
rds_case() {
	local label=$1 a=$2 b=$3 out rc=0 t0=$EPOCHREALTIME
	shift 3
	out=$(timeout "$(scaled 900)" "$RDS" -a "$a" -b "$b" -n "$MSGS" -T "$(scaled 60)" "$@" 2>&1) || rc=$?
	diag "$out"
	sub_verdict -n "rds_test $label: $a <-> $b" $rc "$out" "$t0"
}

rds_case "two devices" $IP4_A $IP4_B
rds_case "one device, two addresses" $IP4_A $IP4_C
# RDS's connections (up since the first case) with netem dropping 2% of the
# packets each way: every message still arrives once, in order, byte for
# byte, and no QP gives up (RDS would reconnect and resend in silence).
# The R_Key errors are left out (-l): their outcome hangs on whether netem
# drops the one NAK, and cases 1 and 2 check them on a clean path.
if ulp_lossy_on "two devices, 2% loss each way" 2%; then
	rds_case "two devices, 2% loss each way, no R_Key errors" $IP4_A $IP4_B -l
	ulp_lossy_off
fi

# RDS keeps its connections after the sockets close: its QPs are sroce's.
check_ge "RC QPs in RTS on $DEV_A (RDS's)" 1 "$(rc_qps $DEV_A)"
check_ge "RC QPs in RTS on $DEV_B (RDS's)" 1 "$(rc_qps $DEV_B)"

# The R_Key error cases make RDS drop and re-establish connections for a
# few seconds after them.  Delete the devices once that has settled (no
# RDS line in the kernel log for 2 s, at most 30 s): 6.1's rdma_cm can oops
# in cma_cancel_operation() (a NULL id.device) when a device goes while a
# ULP's connection attempt is under way (seen once, in CI, session 46), a
# core race the deletion of connected devices is not here to find.
rds_log_lines() { dmesg | grep -c 'RDS/'; }
for ((i = 0; i < 15; i++)); do
	n=$(rds_log_lines)
	sleep 2
	[[ $(rds_log_lines) == "$n" ]] && break
done
ulp_delete_links "with RDS connected" 20 $DEV_A $DEV_B
ulp_finish $ULP_MODS
