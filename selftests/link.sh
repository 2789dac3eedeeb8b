#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# link.sh: lifecycle of sroce devices through `rdma link`.
#   auto-load of the installed module through the rdma-link alias; add in the
#   initial namespace and inside a namespace; `rdma link` and sysfs views
#   (node type, link layer, node GUID from the MAC, port state following the
#   netdev and its carrier, active MTU following the netdev MTU, GID table
#   following the addresses); clear errors for bad requests; removal by
#   `rdma link delete`, `ip link del`, `ip netns del` and `rmmod`, the first
#   three also while a process holds the device open (the process sees
#   IBV_EVENT_DEVICE_FATAL); `rmmod` while a process holds it is refused
#   ("in use") and succeeds once the process is gone, and after a removal
#   disassociated a process it is refused until that process closes the
#   device (its doorbell file pins the module); a clean kernel log
#   afterwards.

. "$(dirname "$0")/lib.sh"

L_A=slink_a		# veth pair in the initial namespace
L_B=slink_b
L_C=slink_c		# another veth pair, for the duplicate-name error
L_D=slink_d
NS=slink_ns
D=sroce0
HOLDER=$TOP/build/selftests/sroce_verbs
holder_pid=

cleanup() {
	[[ -n $holder_pid ]] && kill "$holder_pid" 2>/dev/null
	for d in $D sroce9 sroce_ns; do [[ -e $IB/$d ]] && rdma link delete $d 2>/dev/null; done
	ip link del $L_A 2>/dev/null
	ip link del $L_C 2>/dev/null
	ip link del sroce_tun 2>/dev/null
	ip netns del $NS 2>/dev/null
	sroce_unload
}
trap cleanup EXIT

state_is() { [[ $(port_state "$1") == "$2" ]]; }
mtu_is() { [[ $(port_mtu "$1") == "$2" ]]; }

if [[ $SROCE_DRIVER == sroce ]]; then
	KO=$(sroce_ko) || skip_all "no sroce.ko for $(uname -r) under build/kmod (make module)"
fi
modprobe -a veth ib_uverbs ipip || skip_all "cannot load veth/ib_uverbs/ipip"
# ibv_devinfo (active MTU) and the holder need the provider.
if [[ $SROCE_DRIVER == sroce && -z ${RDMAV_DRIVERS:-} ]] && lib=$(provider_lib); then
	export RDMAV_DRIVERS=$lib
fi
sroce_unload
dmesg_mark

ip -b - <<EOF
link add $L_A type veth peer name $L_B
link add $L_C type veth peer name $L_D
link set $L_A up
link set $L_B up
link set $L_C up
link set $L_D up
addr add 192.168.78.1/24 dev $L_A
addr add fd78::1/64 dev $L_A nodad
EOF

# --- auto-load through the module alias --------------------------------------

if [[ $SROCE_DRIVER == sroce ]]; then
	moddir=/lib/modules/$(uname -r)/updates
	# depmod -a reads every module: about 100 s under TCG, but it is what
	# `make install` does.
	mkdir -p "$moddir" && cp "$KO" "$moddir/sroce.ko" && depmod -a
	check "modinfo finds the installed module with its rdma-link alias" \
		grep -q 'alias: *rdma-link-sroce' <<< "$(modinfo sroce 2>&1)"
fi
check "rdma link add $D in the initial netns auto-loads the module" \
	rdma link add $D type "$SROCE_DRIVER" netdev $L_A
mod=$SROCE_DRIVER; [[ $mod == rxe ]] && mod=rdma_rxe
check "$mod is loaded" grep -q "^$mod " /proc/modules

# --- rdma link and sysfs views ----------------------------------------------

out=$(rdma link show $D/1 2>&1)
check "rdma link shows $D with netdev $L_A" [ -n "$out" -a -z "${out##*netdev $L_A*}" ]
diag "$out"
check_eq "node_type is CA" "1: CA" "$(ibdev_attr $D node_type)"
check_eq "link_layer is Ethernet" "Ethernet" "$(port_attr $D link_layer)"
mac=$(< /sys/class/net/$L_A/address)
check_eq "node_guid is the EUI-64 of $mac" "$(mac_to_guid "$mac")" "$(ibdev_attr $D node_guid)"
check "port becomes ACTIVE" wait_until 5 state_is $D ACTIVE

# --- GID table follows the addresses ------------------------------------------

gid4=$(ipv4_gid 192.168.78.1)
gid6=$(ipv6_gid fd78::1)
gid6b=$(ipv6_gid fd78::99)
has_gid() { gid_table $D | grep -q " $1 RoCE_v2 $L_A\$"; }
no_gid() { ! gid_table $D | grep -q " $1 "; }
has_ll_gid() { gid_table $D | grep -q " fe80:0000:0000:0000:[0-9a-f:]* RoCE_v2 $L_A\$"; }
check "GID table has the link-local fe80 RoCE v2 GID" has_ll_gid
check "GID table has the IPv4-mapped GID of 192.168.78.1" wait_until 5 has_gid "$gid4"
check "GID table has the IPv6 GID of fd78::1" wait_until 5 has_gid "$gid6" ||
	diag "$(ip addr show dev $L_A)"
diag "$(gid_table $D)"
ip addr del 192.168.78.1/24 dev $L_A
check "IPv4 GID removed after ip addr del" wait_until 5 no_gid "$gid4"
ip addr add 192.168.78.1/24 dev $L_A
check "IPv4 GID back after ip addr add" wait_until 5 has_gid "$gid4"
ip addr add fd78::99/64 dev $L_A nodad
check "new IPv6 GID after ip addr add fd78::99" wait_until 5 has_gid "$gid6b"
ip addr del fd78::99/64 dev $L_A
check "IPv6 GID removed after ip addr del fd78::99" wait_until 5 no_gid "$gid6b"

# --- port state follows the netdev and its carrier ---------------------------

ip link set $L_A down
check "port DOWN after ip link set $L_A down" wait_until 5 state_is $D DOWN
ip link set $L_A up
check "port ACTIVE after ip link set $L_A up" wait_until 5 state_is $D ACTIVE
ip link set $L_B down
check "port DOWN when the veth peer goes down (no carrier)" \
	wait_until 5 state_is $D DOWN
ip link set $L_B up
check "port ACTIVE when the veth peer comes back" wait_until 5 state_is $D ACTIVE

# --- active MTU follows the netdev MTU ---------------------------------------

check_eq "active_mtu 1024 at MTU 1500" 1024 "$(port_mtu $D)"
ip link set $L_A mtu 9000
check "active_mtu 4096 at MTU 9000" wait_until 5 mtu_is $D 4096
ip link set $L_A mtu 2200
check "active_mtu 2048 at MTU 2200" wait_until 5 mtu_is $D 2048
ip link set $L_A mtu 1500
check "active_mtu 1024 back at MTU 1500" wait_until 5 mtu_is $D 1024

# --- errors ---------------------------------------------------------------------

check_fails "add on an unknown netdev fails" "no such device|not found|does not exist" \
	rdma link add sroce9 type "$SROCE_DRIVER" netdev no_such_dev0
check_fails "a second device on the same netdev fails" "exists|busy|in use" \
	rdma link add sroce9 type "$SROCE_DRIVER" netdev $L_A
check_fails "add on lo fails" "invalid|not supported|loopback|no such device" \
	rdma link add sroce9 type "$SROCE_DRIVER" netdev lo
ip link add sroce_tun type ipip local 10.9.9.1 remote 10.9.9.2
ip link set sroce_tun up
check_fails "add on a non-Ethernet netdev (ipip) fails" "invalid|not supported|no such device" \
	rdma link add sroce9 type "$SROCE_DRIVER" netdev sroce_tun
ip link del sroce_tun
check_fails "add with a duplicate device name fails" "exists|in use" \
	rdma link add $D type "$SROCE_DRIVER" netdev $L_C
check "failed adds left no device behind" ibdev_gone sroce9
check "the original device survived the failed adds" ibdev_exists $D

# --- removal --------------------------------------------------------------------

check "rdma link delete $D" timeout 30 rdma link delete $D
check "$D is gone from sysfs" wait_until 5 ibdev_gone $D
not_listed() { ! rdma link | grep -qw "$1"; }
check "rdma link no longer lists $D" not_listed $D

check "re-add $D on $L_A" rdma link add $D type "$SROCE_DRIVER" netdev $L_A
check "ip link del $L_A" timeout 30 ip link del $L_A
check "ip link del $L_A removed $D" wait_until 10 ibdev_gone $D

ip netns add $NS
ip link add $L_A netns $NS type veth peer name $L_B netns $NS
ip -n $NS link set $L_A up
ip -n $NS link set $L_B up
check "rdma link add inside a namespace" \
	ip netns exec $NS rdma link add sroce_ns type "$SROCE_DRIVER" netdev $L_A
out=$(ip netns exec $NS rdma link show sroce_ns/1 2>&1)
check "rdma link in the namespace shows sroce_ns with netdev $L_A" \
	[ -n "$out" -a -z "${out##*netdev $L_A*}" ]
check "ip netns del $NS" timeout 30 ip netns del $NS
check "ip netns del removed the device in it" wait_until 20 ibdev_gone sroce_ns

ip link add $L_A type veth peer name $L_B
ip link set $L_A up
ip link set $L_B up
check "re-add $D for rmmod" rdma link add $D type "$SROCE_DRIVER" netdev $L_A
check "rmmod $mod with $D present" timeout 30 rmmod $mod
check "rmmod $mod removed $D" wait_until 10 ibdev_gone $D

# --- removal while a process holds the device open ------------------------------

# start_holder [ARG]: run sroce_verbs --hold $D [ARG] in the background, wait
# for "ready"
holder_log=/tmp/sroce-holder.log
start_holder() {
	rm -f $holder_log
	"$HOLDER" --hold $D "$@" > $holder_log 2>&1 &
	holder_pid=$!
	wait_until 10 grep -q ready $holder_log
}

# setup_held NAME SETUP [ARG]: SETUP creates $D (afresh), then a holder
# (start_holder ARG) opens it; non-zero (reported as NAME's failure) if
# either fails
setup_held() {
	local name=$1 setup=$2 out
	shift 2
	[[ -e $IB/$D ]] && rdma link delete $D
	if ! out=$(eval "$setup" 2>&1); then
		not_ok "$name: setup"; diag "$setup: $out"; return 1
	fi
	if ! start_holder "$@"; then
		not_ok "$name: holder opened the device"
		diag "$(< $holder_log)"
		kill $holder_pid 2>/dev/null; wait $holder_pid 2>/dev/null; holder_pid=
		return 1
	fi
}

# removal_with_holder NAME SETUP REMOVE: SETUP creates $D, REMOVE removes it
removal_with_holder() {
	local name=$1 setup=$2 remove=$3 rc
	setup_held "$name" "$setup" || return
	check "$name while a process holds $D open" timeout 30 bash -c "$remove" &&
	check "$name: $D gone" wait_until 10 ibdev_gone $D
	# The holder sees IBV_EVENT_DEVICE_FATAL, checks that its doorbell file
	# (still open) answers EIO, and exits 0.
	rc=0
	for _ in $(seq 100); do kill -0 $holder_pid 2>/dev/null || break; sleep 0.1; done
	if kill -0 $holder_pid 2>/dev/null; then
		kill -9 $holder_pid; wait $holder_pid 2>/dev/null
		not_ok "$name: holder got IBV_EVENT_DEVICE_FATAL, doorbell file EIO, exited"
		diag "holder still running 10 s after removal: $(< $holder_log)"
	else
		wait $holder_pid || rc=$?
		check_eq "$name: holder got IBV_EVENT_DEVICE_FATAL, doorbell file EIO, exited" "0" "$rc" ||
			diag "$(< $holder_log)"
	fi
	holder_pid=
}

# rmmod_with_holder: every open user context pins the module, so rmmod is
# refused while the holder runs and the device stays usable; once the
# holder is gone, rmmod succeeds and removes the device.
rmmod_with_holder() {
	setup_held "rmmod while held" "$add" || return
	check_fails "rmmod sroce refused while a process holds $D" "in use" rmmod sroce
	check "$D still there and ACTIVE after the refused rmmod" \
		[ "$(port_state $D)" = ACTIVE ]
	check "the holder is still running" kill -0 $holder_pid
	kill $holder_pid 2>/dev/null; wait $holder_pid 2>/dev/null; holder_pid=
	check "rmmod sroce once the holder is gone" wait_until 10 rmmod_sroce
	check "rmmod removed $D" wait_until 10 ibdev_gone $D
}

# rmmod_after_disassociation: a process the removal disassociated but that
# has not closed the device yet still holds its provider's doorbell file,
# whose code is in the module: rmmod is refused until ibv_close_device(),
# and then succeeds while the process still runs.
rmmod_after_disassociation() {
	local name="rmmod after disassociation"
	setup_held "$name" "$add" --linger || return
	check "$name: rdma link delete while held" rdma link delete $D &&
	check "$name: holder disassociated, doorbell file EIO, device still open" \
		wait_until 10 grep -q lingering $holder_log &&
	check_fails "$name: rmmod sroce refused while the device is still open" \
		"in use" rmmod sroce &&
	check "$name: holder closed the device" \
		eval "kill -USR1 $holder_pid && wait_until 10 grep -q closed $holder_log" &&
	check "$name: rmmod sroce once the device is closed, holder still running" \
		eval "rmmod_sroce && kill -0 $holder_pid"
	diag "holder: $(tr '\n' ' ' < $holder_log)"
	kill $holder_pid 2>/dev/null; wait $holder_pid 2>/dev/null; holder_pid=
}

build_rc=0
[[ $SROCE_DRIVER == rxe ]] || build_program "$HOLDER" sroce_verbs.c || build_rc=$?
if [[ $SROCE_DRIVER == rxe ]]; then
	skip "removal while the device is held open" "rdma_rxe cannot disassociate user contexts"
elif [[ $build_rc == 2 ]]; then
	skip "removal while the device is held open" "$BUILD_ERR"
elif [[ $build_rc != 0 ]]; then
	not_ok "removal while the device is held open: build $HOLDER"
	diag "$BUILD_ERR"
else
	add="modprobe sroce && rdma link add $D type sroce netdev $L_A"
	removal_with_holder "rdma link delete" "$add" "rdma link delete $D"
	removal_with_holder "ip link del" "$add" \
		"ip link del $L_A; ip link add $L_A type veth peer name $L_B; ip link set $L_A up; ip link set $L_B up"
	removal_with_holder "ip netns del" \
		"ip link del $L_A; ip netns add $NS && ip link add $L_A netns $NS type veth peer name $L_B netns $NS &&
		 ip -n $NS link set $L_A up && ip -n $NS link set $L_B up && modprobe sroce &&
		 ip netns exec $NS rdma link add $D type sroce netdev $L_A" \
		"ip netns del $NS"
	ip link add $L_A type veth peer name $L_B 2>/dev/null
	ip link set $L_A up; ip link set $L_B up
	rmmod_with_holder
	rmmod_after_disassociation
fi

no_links() { [[ -z $(rdma link) ]]; }
check "no device left" no_links
check_dmesg_clean "kernel log has no warnings, BUGs, oopses or leaks"
finish
