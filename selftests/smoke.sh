#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# smoke.sh: quick check on any kernel: the module loads, a device can be
# added on a veth and shows up in `rdma link`, sysfs and ibv_devinfo through
# the build tree's provider, and it can be deleted and the module removed.

. "$(dirname "$0")/lib.sh"

if [[ $SROCE_DRIVER == sroce ]]; then
	sroce_ko > /dev/null || skip_all "no sroce.ko for $(uname -r) under build/kmod (make module KVER=$(uname -r))"
fi
trap 'ip link del smoke_a 2>/dev/null; sroce_unload' EXIT
dmesg_mark

check "load the module" sroce_load
ip -b - <<EOF2
link add smoke_a type veth peer name smoke_b
link set smoke_a up
link set smoke_b up
addr add 192.168.79.1/24 dev smoke_a
EOF2
check "rdma link add sroce0 on a veth" rdma link add sroce0 type "$SROCE_DRIVER" netdev smoke_a
out=$(rdma link show sroce0/1 2>&1)
check "rdma link shows sroce0 on smoke_a" [ -n "$out" -a -z "${out##*netdev smoke_a*}" ]
diag "$out"
check "port ACTIVE" wait_until 5 eval '[[ $(port_state sroce0) == ACTIVE ]]'
check_eq "link_layer Ethernet" Ethernet "$(port_attr sroce0 link_layer)"

if [[ $SROCE_DRIVER == sroce ]] && ! lib=$(provider_lib); then
	skip "ibv_devinfo" "no provider in build/provider (make provider)"
else
	[[ $SROCE_DRIVER == sroce ]] && export RDMAV_DRIVERS=$lib
	out=$(ibv_devinfo -v -d sroce0 2>&1); rc=$?
	if [[ $rc == 0 && $out == *PORT_ACTIVE* && $out =~ link_layer:[[:space:]]+Ethernet ]]; then
		ok "ibv_devinfo -v -d sroce0: PORT_ACTIVE, Ethernet"
	else
		not_ok "ibv_devinfo -v -d sroce0: PORT_ACTIVE, Ethernet"
		diag "exit $rc"
		diag "$out"
	fi
fi
check "rdma link delete sroce0" timeout 30 rdma link delete sroce0
check "sroce0 gone" wait_until 5 ibdev_gone sroce0
mod=sroce; [[ $SROCE_DRIVER == rxe ]] && mod=rdma_rxe
check "rmmod $mod" timeout 30 rmmod $mod
check_dmesg_clean "kernel log clean"
finish
