#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# iser.sh: iSCSI Extensions for RDMA on sroce.  Target: LIO's iSCSI target
# with ib_isert, all through configfs: a ramdisk (an rd_mcp backstore of
# ISER_MIB + 32 MiB) as LUN 0 of tpgt_1, an ACL for the initiator's IQN
# only, authentication off, a network portal on sroce1's address
# 192.168.77.2:3260 with iser enabled.  Initiator: open-iscsi's iscsid
# (started here, in the background, with an initiator name of its own)
# and ib_iser: sendtargets discovery and logins through open-iscsi's "iser"
# interface, from sroce0 (192.168.77.1).  The session must be iSER (the
# only iSCSI transport registered is iser, the session's interface says
# so, its SCSI host is iscsi_iser, the RC QPs and rdma_cm IDs are
# ib_iser's and ib_isert's, and each device sent at least as many bytes as
# fio moved its way), never iSCSI over TCP.  fio writes ISER_MIB (128) MiB
# with crc32c verification headers through O_DIRECT and reads every block
# back and verifies it; logout, login again and a verify-only read of all
# of it; 32 MiB written and verified with netem dropping 2% of the packets
# each way (sroce retransmitted, no QP ran out of retries, and ib_iser and
# ib_isert saw no failed completion: no reconnect); then once
# through one device (sroce1 to itself, sroce's loopback) with 32 MiB
# written and verified; then the initiator's device is deleted (`rdma link
# delete`) while fio writes: the session fails, fio ends with I/O errors
# (recovery timeout 10 s) and the logout removes session and disk, nothing
# hangs.  Then iscsid stops, the target is taken down in reverse order (no
# rdma_cm ID left), `rdma link delete` of the target's device with ib_iser
# and ib_isert loaded, rmmod of every ULP module (a leaked reference makes
# it fail), sroce's module reference count back, kernel log clean.
#
# No network namespaces (topology (a) is impossible for iSER): ib_iser's
# and ib_isert's rdma_cm IDs are created in init_net (rdma_create_id(&init_net,
# ...) in iser_verbs.c and ib_isert.c), whatever namespace iscsid or the
# configfs writer is in, so both veth ends and both devices live in the
# initial namespace (as in srp.sh and nvme.sh), and rdma_rxe (UDP 4791
# there too) must not be loaded.  ib_iser gives rdma_cm no source address
# (open-iscsi's ep_connect passes only the target's), and a target address
# of this host would resolve to the target's own device: policy routing
# (route_via_veth) sends what this host sends to either address out of the
# other end of the veth.  Needs open-iscsi and fio (scripts/install-deps).

. "$(dirname "$0")/lib.sh"

[[ $SROCE_DRIVER == sroce ]] || skip_all "iser.sh runs on sroce only (rdma_rxe shares UDP 4791 in init_net)"
sroce_ko > /dev/null || skip_all "no sroce.ko for $(uname -r) under build/kmod (make module)"
{ command -v iscsiadm && command -v iscsid; } > /dev/null ||
	skip_all "open-iscsi (iscsiadm, iscsid) not installed (scripts/install-deps)"
command -v fio > /dev/null || skip_all "fio not installed (scripts/install-deps)"
require_modules ib_iser ib_isert iscsi_target_mod target_core_mod
pgrep -x iscsid > /dev/null && skip_all "an iscsid runs already"
compgen -G '/sys/class/iscsi_session/session*' > /dev/null && skip_all "an iSCSI session exists already"

MIB=${ISER_MIB:-128}
SMALL_MIB=$((MIB < 32 ? MIB : 32))
RECOVERY_TMO=10
IQN=iqn.2026-11.org.sroce:iser-target
INITIATOR=iqn.2026-11.org.sroce:iser-initiator
PORTAL=$IP4_B:3260
CFG=/sys/kernel/config
TGT=$CFG/target
RD=$TGT/core/rd_mcp_0/sroce_iser
TPG=$TGT/iscsi/$IQN/tpgt_1
NP=$TPG/np/$PORTAL
ACL=$TPG/acls/$INITIATOR
WORK=/tmp/sroce-iser
# target_core_mod loads its backends itself
ULP_MODS="ib_iser libiscsi scsi_transport_iscsi ib_isert iscsi_target_mod
	target_core_user target_core_pscsi target_core_iblock target_core_file
	target_core_mod"
ISCSID_PID=

# iscsiadm ARGS...: open-iscsi's iscsiadm (timeout runs the program, not
# this function), never waiting forever for iscsid
iscsiadm() { timeout "$(scaled 120)" iscsiadm "$@"; }

# The target's configfs tree, leaves first; quiet about what is not there.
target_teardown() {
	[[ -d $TPG ]] && {
		echo 0 > "$TPG/enable"
		rm -f "$ACL/lun_0/r0"
		rmdir "$ACL/lun_0" "$ACL"
		rm -f "$TPG/lun/lun_0/r0"
		rmdir "$TPG/lun/lun_0"
		[[ -d $NP ]] && echo 0 > "$NP/iser"
		rmdir "$NP" "$TPG" "${TPG%/*}"
	} 2>/dev/null
	[[ -d $TGT/iscsi ]] && rmdir "$TGT/iscsi" 2>/dev/null
	[[ -d $RD ]] && rmdir "$RD" "${RD%/*}" 2>/dev/null
	return 0
}

# route_via_veth: what this host itself sends ("iif lo") to IP4_B leaves
# through VETH_A and to IP4_A through VETH_B, with the local table moved
# behind those rules (packets that arrive still find their address local):
# the initiator's rdma_cm then resolves IP4_B through DEV_A, and the
# target's answers go back the same way.  route_local undoes it.
route_via_veth() {
	ip -b - <<EOF
rule add pref 100 iif lo to $IP4_B lookup 77
rule add pref 101 iif lo to $IP4_A lookup 78
route add $IP4_B dev $VETH_A src $IP4_A table 77
route add $IP4_A dev $VETH_B src $IP4_B table 78
rule add pref 1000 lookup local
rule del pref 0 lookup local
EOF
}
route_local() {
	[[ $(ip rule list pref 0) == *"lookup local"* ]] || ip rule add pref 0 lookup local
	ip rule del pref 1000 lookup local
	ip rule del pref 100
	ip rule del pref 101
	ip route flush table 77
	ip route flush table 78
} 2>/dev/null

# iscsid_stop: SIGTERM to iscsid; non-zero if it took a SIGKILL after 10 s
iscsid_stop() {
	local rc=0
	[[ -n $ISCSID_PID ]] || return 0
	kill "$ISCSID_PID" 2>/dev/null
	if ! wait_until 10 eval "! kill -0 $ISCSID_PID"; then
		rc=1
		kill -9 "$ISCSID_PID" 2>/dev/null
	fi
	wait "$ISCSID_PID" 2>/dev/null
	ISCSID_PID=
	return $rc
}

# records_delete: iscsiadm deletes the node and the discovery record
records_delete() {
	iscsiadm -m node -T "$IQN" -p "$PORTAL" -o delete &&
		iscsiadm -m discoverydb -t st -p "$PORTAL" -o delete
}

cleanup() {
	if [[ -n $ISCSID_PID ]]; then
		iscsiadm -m node -T "$IQN" -p "$PORTAL" --logout
		records_delete
		iscsid_stop
	fi > /dev/null 2>&1
	target_teardown
	route_local
	rm -rf "$WORK"
	ulp_cleanup $ULP_MODS
}
trap cleanup EXIT

# The initial namespace's UDP 4791 must be free for sroce; both veth ends
# and devices there (topo_initial_pair).
ulp_storage_start
check "policy routing: $IP4_B out of $VETH_A, $IP4_A out of $VETH_B" route_via_veth

target_setup() {
	modprobe -a iscsi_target_mod ib_isert &&
	mkdir -p "$RD" &&
	echo "rd_pages=$(((MIB + 32) * 256))" > "$RD/control" &&
	echo 1 > "$RD/enable" &&
	mkdir -p "$TPG" &&
	echo 0 > "$TPG/attrib/authentication" &&
	mkdir "$TPG/lun/lun_0" &&
	ln -s "$RD" "$TPG/lun/lun_0/r0" &&
	mkdir -p "$ACL/lun_0" &&
	ln -s "$TPG/lun/lun_0" "$ACL/lun_0/r0" &&
	mkdir "$NP" &&
	echo 1 > "$NP/iser" &&
	echo 1 > "$TPG/enable" &&
	modprobe -a ib_iser sd_mod	# no udev in the guest to load sd_mod
}
if target_setup 2> /tmp/target.err; then
	ok "LIO iSCSI target: ramdisk of $((MIB + 32)) MiB as LUN 0 of $IQN, ACL for $INITIATOR"
else
	not_ok "LIO iSCSI target: ramdisk as LUN 0 of $IQN"
	diag "$(< /tmp/target.err)"
	diag "$(dmesg | tail -15)"
	finish
fi
# ib_isert listens through rdma_cm on the portal's address, on DEV_B
check_eq "portal $PORTAL: iser enabled" 1 "$(< "$NP/iser")"
listen=$(rdma resource show cm_id 2>&1 | grep -cE "^link $DEV_B/1 .*state LISTEN .*comm \[ib_isert\] src-addr $PORTAL( |$)")
check_eq "ib_isert's rdma_cm ID listens on $DEV_B at $PORTAL" 1 "$listen" ||
	diag "$(rdma resource show cm_id 2>&1)"

# iscsid in the background; its initiator name from a file of ours.  Its
# node and discovery records go to /etc/iscsi (a tmpfs overlay in the
# guest; cleanup deletes them), its lock files to /run/lock/iscsi.  In a
# session of its own: on SIGTERM iscsid signals its whole process group.
mkdir -p "$WORK" /run/lock
echo "InitiatorName=$INITIATOR" > "$WORK/initiatorname.iscsi"
setsid iscsid -f -n -i "$WORK/initiatorname.iscsi" > "$WORK/iscsid.log" 2>&1 &
ISCSID_PID=$!
# iscsid_listening: iscsid's socket for iscsiadm is there
iscsid_listening() { [[ $(< /proc/net/unix) == *@ISCSIADM_ABSTRACT_NAMESPACE* ]]; }
if ! wait_until 10 iscsid_listening; then
	not_ok "iscsid started"
	diag "iscsid: $(< "$WORK/iscsid.log")"
	finish
fi
ok "iscsid started (initiator $INITIATOR)"

# open-iscsi has a built-in "iser" interface; make it if this one does not
out=$(iscsiadm -m iface -I iser 2>&1) ||
	out=$({ iscsiadm -m iface -I iser -o new &&
		iscsiadm -m iface -I iser -o update -n iface.transport_name -v iser &&
		iscsiadm -m iface -I iser; } 2>&1)
check_eq "open-iscsi interface iser: iface.transport_name = iser" \
	"iface.transport_name = iser" "$(grep '^iface.transport_name' <<< "$out")" || diag "$out"

out=$(iscsiadm -m discovery -t st -p "$PORTAL" -I iser 2>&1)
check_eq "sendtargets discovery at $PORTAL through iface iser" "$PORTAL,1 $IQN" "$out"
# iSCSI's own ping (NOP-Out every 5 s) gives up after 5 s by default.  A
# guest under TCG on a path that drops 2% of the packets each way can
# stall a request that long (ACK timeouts of 2.1 s with rdma_cm's
# defaults), and the ping would turn that into a reconnect, which the
# lossy step's check counts: the ping waits 30 s here.
check "node record: NOP-Out timeout 30 s" iscsiadm -m node -T "$IQN" -p "$PORTAL" -I iser \
	-o update -n 'node.conn[0].timeo.noop_out_timeout' -v 30

# iser_blockdev: the disk of the iSCSI session's SCSI host, which must be
# ib_iser's (the guest has no other iSCSI host)
iser_blockdev() {
	local h b
	for h in /sys/class/scsi_host/host*; do
		[[ -e $h/proc_name && $(< "$h/proc_name") == iscsi_iser ]] || continue
		for b in "$h"/device/session*/target*/*/block/*; do
			[[ -e $b ]] && { echo "/dev/${b##*/}"; return 0; }
		done
	done
	return 1
}

# iser_gone: no iSCSI session and no disk of ib_iser's
iser_gone() {
	! iser_blockdev > /dev/null && ! compgen -G '/sys/class/iscsi_session/session*' > /dev/null
}

# session_state: the state of the one iSCSI session (LOGGED_IN, FAILED, ...)
session_state() {
	local s
	for s in /sys/class/iscsi_session/session*/state; do
		[[ -e $s ]] && echo "$(< "$s")"
	done
}

# login NAME: log in to the target through iface iser; its disk appears
login() {
	local name=$1 out rc=0 t0=$EPOCHREALTIME
	out=$(iscsiadm -m node -T "$IQN" -p "$PORTAL" -I iser --login 2>&1) || rc=$?
	if [[ $rc == 0 ]] && wait_until 20 iser_blockdev > /dev/null; then
		BDEV=$(iser_blockdev)
		ok "$name$(_slow "$t0") ($BDEV)"
		return 0
	fi
	not_ok "$name$(_slow "$t0")"
	diag "iscsiadm --login exit $rc: $out"
	diag "$(dmesg | tail -15)"
	return 1
}

# logout NAME: iscsiadm logs the session out; session and disk go
logout() {
	local out rc=0
	out=$(iscsiadm -m node -T "$IQN" -p "$PORTAL" -I iser --logout 2>&1) || rc=$?
	if [[ $rc != 0 || $out != *"Logout of [sid: "*"] successful."* ]]; then
		not_ok "$1"
		diag "iscsiadm --logout exit $rc: $out"
	elif ! wait_until 10 iser_gone; then
		not_ok "$1: session or disk still there 10 s after it"
		diag "$(ls /sys/class/iscsi_session/ 2>&1)"
	else
		ok "$1"
	fi
}

# check_placement LABEL QPS_A QPS_B: RC QPs in RTS on DEV_A/DEV_B, and
# ib_iser's connected rdma_cm ID on the device of QPS_A's side (DEV_A; DEV_B
# through one device)
check_placement() {
	local n ids idev=$DEV_A
	[[ $2 == 0 ]] && idev=$DEV_B
	n=$(rc_qps $DEV_A)/$(rc_qps $DEV_B)
	check_eq "$1: RC QPs in RTS on $DEV_A/$DEV_B" "$2/$3" "$n" || diag "$(rdma resource show qp)"
	ids=$(rdma resource show cm_id 2>&1)
	n=$(grep -cE "^link $idev/1 .*state CONNECT .*comm \[ib_iser\] .*dst-addr $PORTAL( |$)" <<< "$ids")/$(
		grep -cE "^link $DEV_B/1 .*state CONNECT .*comm \[ib_isert\] src-addr $PORTAL( |$)" <<< "$ids")
	check_eq "$1: connected rdma_cm IDs of ib_iser on $idev/ib_isert on $DEV_B" 1/1 "$n" || diag "$ids"
}

# conn_errors_since MARK: the kernel's lines since the line MARK (written to
# /dev/kmsg) in which ib_iser or ib_isert report a failed completion or a
# connection error; iscsid's reconnect would hide them from fio
conn_errors_since() {
	dmesg | sed -n "/$1/,\$p" | grep -E 'iser_err_comp|detected conn error|isert.*(err|fail)' | head -n 8
}

# stall_snapshots SECS...: while fio runs, at each SECS after the start
# (ascending), append both devices' QPs as restrack shows them (PSNs,
# retries left, held packets, RNR wait) and their non-zero counters to
# /tmp/iser.stuck: if the lossy step stalls (seen once in CI: nothing
# from the target for 35 s, no ACK timeout, the ping gave up), the log
# says where each QP stood and whether it moved between two snapshots
stall_snapshots() {
	local t0=$SECONDS at d wait
	for at; do
		wait=$((at - (SECONDS - t0)))
		((wait > 0)) && sleep $wait
		pgrep -x fio > /dev/null || return 0
		{
			echo "fio still running after $at s:"
			for d in $DEV_A $DEV_B; do qp_snapshot $d; done
		} >> /tmp/iser.stuck 2>&1
	done
}

# check_no_conn_errors NAME MARK
check_no_conn_errors() {
	local e
	e=$(conn_errors_since "$2")
	if [[ -z $e ]]; then
		ok "$1"
	else
		not_ok "$1"
		diag "$e"
		return 1
	fi
}

# tx_bytes: DEV_A's and DEV_B's hw_counters/tx_bytes
tx_bytes() { echo "$(port_attr $DEV_A hw_counters/tx_bytes) $(port_attr $DEV_B hw_counters/tx_bytes)"; }

echo "selftest-iser-$$-start" > /dev/kmsg
if login "iscsiadm --login -I iser to $IQN at $PORTAL"; then
	# the session is iSER, not iSCSI over TCP
	t=$(cd /sys/class/iscsi_transport && echo *)
	check_eq "iSCSI transports registered: iser only" iser "$t"
	out=$(iscsiadm -m session -P 1 2>&1)
	check_eq "iscsiadm -m session -P 1: one session, Iface Transport: iser" \
		"Iface Transport: iser" "$(grep -o 'Iface Transport: .*' <<< "$out")" || diag "$out"
	check_eq "session state LOGGED_IN" LOGGED_IN "$(session_state)"
	check_placement "two devices" 1 1
	# Writes go out of the initiator as RDMA READ responses (or immediate
	# data), reads out of the target as RDMA WRITEs: each device sends at
	# least what fio moves its way.
	read -r a0 b0 <<< "$(tx_bytes)"
	ulp_recovery_mark
	fio_verify "fio write $MIB MiB, read back, crc32c verify" "$BDEV" $MIB
	# What a path that loses nothing made sroce resend (noted, not checked).
	ulp_recovery_moved "no loss"
	read -r a1 b1 <<< "$(tx_bytes)"
	check_ge "$DEV_A sent the $MIB MiB fio wrote (tx_bytes +$((a1 - a0)))" $((MIB << 20)) $((a1 - a0))
	check_ge "$DEV_B sent the $MIB MiB fio read (tx_bytes +$((b1 - b0)))" $((MIB << 20)) $((b1 - b0))
	check_no_conn_errors "no iSER completion or connection error" "selftest-iser-$$-start"
	logout "logout"
fi

if login "login again"; then
	fio_verify "fio verify-only read of $MIB MiB after the new login" "$BDEV" $MIB verify
	if ulp_lossy_on "2% loss each way" 2%; then
		echo "selftest-iser-$$-lossy" > /dev/kmsg
		rm -f /tmp/iser.stuck
		stall_snapshots 20 28 &
		spid=$!
		fio_verify "fio write $SMALL_MIB MiB, read back, crc32c verify, 2% loss each way" \
			"$BDEV" $SMALL_MIB
		kill $spid 2>/dev/null
		wait $spid 2>/dev/null
		ulp_lossy_off
		check_no_conn_errors "2% loss each way: no iSER completion or connection error (no reconnect)" \
			"selftest-iser-$$-lossy" || { [[ -r /tmp/iser.stuck ]] && diag "$(< /tmp/iser.stuck)"; }
	fi
	logout "logout after the lossy step"
fi

# Through one device: without the policy routing the target's address is
# local, and rdma_cm puts ib_iser's connection on the target's device;
# its QPs talk to each other through sroce's loopback.
route_local
echo "selftest-iser-$$-loop" > /dev/kmsg
if login "login through one device ($DEV_B to itself)"; then
	check_placement "one device" 0 2
	fio_verify "one device: fio write $SMALL_MIB MiB, read back, crc32c verify" "$BDEV" $SMALL_MIB
	check_no_conn_errors "one device: no iSER completion or connection error" "selftest-iser-$$-loop"
	logout "one device: logout"
fi

# The initiator's device deleted while fio writes: ib_iser drops the
# connection (rdma_cm's DEVICE_REMOVAL), the session fails, iscsid's
# reconnects find no RDMA device on VETH_A and after the recovery timeout
# the pending and new I/O fail: fio ends.  The logout then removes the
# session and the disk.
check "policy routing again" route_via_veth
check "node record: recovery timeout $RECOVERY_TMO s" iscsiadm -m node -T "$IQN" -p "$PORTAL" -I iser \
	-o update -n node.session.timeo.replacement_timeout -v $RECOVERY_TMO
if login "login for the device deletion"; then
	check_placement "two devices again" 1 1
	fio --name=cut --filename="$BDEV" --direct=1 --ioengine=libaio --iodepth=16 \
		--bs=64k --rw=randwrite --size=${MIB}M --time_based --runtime=120 \
		--output=/tmp/fio-cut.out > /dev/null 2>&1 &
	pid=$!
	sleep 3
	check "fio is writing to $BDEV" kill -0 $pid
	t0=$EPOCHREALTIME
	check "initiator's device deleted while fio writes: rdma link delete $DEV_A$(_slow "$t0")" \
		timeout 60 rdma link delete $DEV_A
	check "$DEV_A is gone" wait_until 10 ibdev_gone $DEV_A
	if wait_until 20 eval '[[ $(session_state) == FAILED ]]'; then
		ok "the iSCSI session failed$(_slow "$t0")"
	else
		not_ok "the iSCSI session failed: state '$(session_state)' 20 s after the deletion"
	fi
	if wait_until $((RECOVERY_TMO + 30)) eval "! kill -0 $pid 2> /dev/null"; then
		# (it was to write for 120 s)
		if grep -qE 'err= *[1-9]' /tmp/fio-cut.out; then
			ok "fio ended with I/O errors$(_slow "$t0")"
		else
			not_ok "fio ended without an I/O error$(_slow "$t0")"
		fi
		diag "$(grep -E 'err=' /tmp/fio-cut.out | head -2)"
	else
		not_ok "fio still running $((RECOVERY_TMO + 30)) s after the deletion"
		kill -9 $pid 2> /dev/null
	fi
	wait $pid 2> /dev/null
	logout "logout of the failed session"
fi

check "iscsiadm: node and discovery records deleted" records_delete
t0=$EPOCHREALTIME
if iscsid_stop; then
	ok "iscsid stopped by SIGTERM$(_slow "$t0")"
else
	not_ok "iscsid still running 10 s after SIGTERM (killed)"
	diag "$(tail -n 20 "$WORK/iscsid.log")"
fi

target_teardown
check "target taken down: its configfs tree is gone" test ! -d "$TGT/iscsi" -a ! -d "$RD"
check_eq "no rdma_cm ID left" "" "$(rdma resource show cm_id 2>&1)"
route_local
live=()
for d in $DEV_A $DEV_B; do [[ -e $IB/$d ]] && live+=("$d"); done
ulp_delete_links "with ib_iser and ib_isert loaded" 10 "${live[@]}"
# shellcheck disable=SC2046 # one module name per word
ulp_finish $(for m in $ULP_MODS; do grep -q "^$m " /proc/modules && echo $m; done)
