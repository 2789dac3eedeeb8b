#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# frwr.sh: a kernel verbs consumer on sroce (build/kmod/KVER/sroce_ktest.ko,
# source kernel/test/ktest.c) does what kernel ULPs do with memory and
# userspace cannot: ib_alloc_mr + ib_map_mr_sg + IB_WR_REG_MR, RDMA WRITE
# and READ through the registered rkey (data checked byte for byte across a
# page boundary), SEND_WITH_INV (the receive reports the invalidated rkey),
# IB_WR_LOCAL_INV, and the IB errors: a stale or invalidated rkey is a
# remote access error, LOCAL_INV of a wrong key a local protection error,
# REG_MR of a valid MR a memory window bind error; IB_WR_ATOMIC_WRITE into
# the registered MR (kernels from 6.2, whose verbs name it; the case skips
# before), and misaligned an invalid request.  Two kernel RC QPs of one
# device (loopback, topology (c)).  The module prints KTAP lines to the
# kernel log and fails to load if a case failed.

. "$(dirname "$0")/lib.sh"

[[ $SROCE_DRIVER == sroce ]] || skip_all "sroce_ktest runs on sroce only"
ko=$(sroce_ko) || skip_all "no sroce.ko for $(uname -r) under build/kmod (make module)"
ktest=$(dirname "$ko")/sroce_ktest.ko
[[ -f $ktest ]] || skip_all "no $ktest (make module)"

trap 'rmmod sroce_ktest 2>/dev/null; topo_cleanup; sroce_unload' EXIT
dmesg_mark
sroce_load || { not_ok "load the module"; finish; }

if topo_loopback 2>/tmp/topo.err; then
	ok "topology (c) loopback"
	gi=$(gid_index $DEV_A $IP4_A)
	if [[ -z $gi ]]; then
		not_ok "RoCE v2 GID of $IP4_A on $DEV_A"
	else
		rc=0
		insmod "$ktest" dev=$DEV_A gid_index="$gi" 2>/tmp/ktest.err || rc=$?
		# The module's own KTAP lines, in order, from this run.
		lines=$(dmesg | sed -n "/$_dmesg_marker/,\$p" | grep -o 'sroce_ktest: .*' |
			sed 's/^sroce_ktest: //')
		diag "$lines"
		n=$(grep -c '^ok ' <<< "$lines")
		if [[ $rc == 0 && $n == 4 ]]; then
			ok "sroce_ktest: kernel FRWR, LOCAL_INV, SEND_WITH_INV, ATOMIC_WRITE ($n cases)"
		else
			not_ok "sroce_ktest: insmod exit $rc, $n of 4 cases passed"
			diag "$(< /tmp/ktest.err)"
		fi
		rmmod sroce_ktest 2>/dev/null
	fi
else
	not_ok "topology (c) loopback"
	diag "$(< /tmp/topo.err)"
fi
topo_cleanup
check_dmesg_clean "kernel log clean"
finish
