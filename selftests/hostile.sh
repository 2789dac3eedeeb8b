#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# hostile.sh: a hostile process against sroce, with build/selftests/hostile
# (hostile.cpp) on topology (c): garbage indices and WQEs written into the
# mapped send, receive and completion rings, raw uverbs commands with bad
# handles and work requests, bad MR access flags and QP attributes, bad
# create_qp driver data (the SQ poller request), bad mmap()s of the
# command fd, mremap/munmap of a live ring, a fork child writing into the
# parent's ring, bad write()s into the doorbell file.  Each must end in its
# exact error completion, QP state or errno, with canary pages and
# untouched buffers checked byte for byte.  Then the device still moves data
# (ibv_rc_pingpong with its data check) and the kernel log is clean.

. "$(dirname "$0")/lib.sh"

HOSTILE=$TOP/build/selftests/hostile

[[ $SROCE_DRIVER == sroce ]] || skip_all "hostile.cpp uses sroce's provider internals"
require_sroce_provider
require_program "$HOSTILE" hostile.cpp

trap 'topo_cleanup; sroce_unload' EXIT
dmesg_mark
sroce_load || { not_ok "load the module"; finish; }
if ! topo_loopback 2>/tmp/topo.err; then
	not_ok "topology (c)"
	diag "$(< /tmp/topo.err)"
	finish
fi
ok "topology (c)"

ga=$(gid_index $DEV_A $IP4_A)
rc=0 t0=$EPOCHREALTIME
ulimit -l unlimited
out=$(timeout 150 "$HOSTILE" -d $DEV_A -g "$ga" 2>&1) || rc=$?
diag "$out"
sub_verdict -n hostile $rc "$out" "$t0" "every lie answered by its error, no byte out of bounds touched"

# rdma itself must answer: an empty listing from a failing rdma proves nothing
if res=$({ rdma resource show qp && rdma resource show cq && rdma resource show mr &&
	   rdma resource show pd; } 2>/tmp/hostile.rdma); then
	check_eq "no user QP, CQ, MR or PD left on $DEV_A" "" "$(grep -E "$DEV_A[/ ].*comm [^[]" <<< "$res")"
else
	not_ok "no user QP, CQ, MR or PD left on $DEV_A: rdma resource show failed"
	diag "$(< /tmp/hostile.rdma)"
fi
check "ibv_rc_pingpong after the hostile process" pingpong_said ibv_rc_pingpong $NS_A $DEV_A $IP4_A $NS_A $DEV_A $IP4_A -n 50 -s 4096 -c
topo_cleanup
check_dmesg_clean "kernel log clean"
finish
