#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# srp.sh: the SCSI RDMA Protocol on sroce, the storage stack of blktests'
# srp/* tests (where rdma_rxe hung after its workqueue conversion).
# Target: LIO's ib_srpt exporting a ramdisk (an rd_mcp backstore of
# SRP_MIB + 32 MiB) as LUN 0 to one initiator, all through configfs, on
# sroce1 (192.168.77.2), listening for rdma_cm logins on port 5555.
# Initiator: ib_srp's add_target from sroce0 (src=192.168.77.1,
# dest=192.168.77.2:5555).  fio writes SRP_MIB (128) MiB with crc32c
# verification headers through O_DIRECT to the SCSI disk that appears and
# reads every block back and verifies it; then the remote port is deleted,
# the target's channels are moved onto one shared receive queue (ib_srpt's
# use_srq: kernel ib_post_srq_recv(), receive WQEs that outlive the
# channels, a Last WQE Reached event for each QP that goes to error), the
# initiator logs in again, and the first quarter is read back and
# verified; the
# remote port is deleted while fio writes to the second half (a logout
# under I/O: it must not hang), and after a third login the first quarter
# is verified once more, written and verified again with netem dropping 2%
# of the packets each way (sroce retransmitted, no QP ran out of retries),
# and the initiator's device is deleted (`rdma link delete`) while fio
# writes.  Then the target is taken down, `rdma link
# delete` of the other device with ib_srp and ib_srpt loaded, rmmod of
# every ULP module (a leaked reference makes it fail), sroce's module
# reference count back, kernel log clean.
#
# ib_srpt creates its rdma_cm listener in the initial network namespace, so
# both veth ends and both devices live there (as in nvme.sh); rdma_rxe (UDP
# 4791 there too) must not be loaded.  Needs fio (scripts/install-deps).

. "$(dirname "$0")/lib.sh"

[[ $SROCE_DRIVER == sroce ]] || skip_all "srp.sh runs on sroce only (rdma_rxe shares UDP 4791 in init_net)"
sroce_ko > /dev/null || skip_all "no sroce.ko for $(uname -r) under build/kmod (make module)"
command -v fio > /dev/null || skip_all "fio not installed (scripts/install-deps)"
require_modules ib_srp ib_srpt target_core_mod

MIB=${SRP_MIB:-128}
REVERIFY_MIB=$((MIB / 4))
CM_PORT=5555
CFG=/sys/kernel/config
TGT=$CFG/target
RD=$TGT/core/rd_mcp_0/sroce_srp
# target_core_mod loads its backends itself
ULP_MODS="ib_srp scsi_transport_srp ib_srpt target_core_user target_core_pscsi
	target_core_iblock target_core_file target_core_mod"

# The target's configfs tree, leaves first; quiet about what is not there.
target_teardown() {
	[[ -n ${TPG:-} && -d $TPG ]] && {
		echo 0 > "$TPG/enable"
		rm -f "$ACL/lun_0/r0"
		rmdir "$ACL/lun_0" "$ACL"
		rm -f "$TPG/lun/lun_0/r0"
		rmdir "$TPG/lun/lun_0" "$TPG" "${TPG%/*}"
	} 2>/dev/null
	[[ -d $TGT/srpt ]] && {
		echo 0 > "$TGT/srpt/discovery_auth/rdma_cm_port"
		rmdir "$TGT/srpt"
	} 2>/dev/null
	[[ -d $RD ]] && rmdir "$RD" "${RD%/*}" 2>/dev/null
	return 0
}

# delete_ports: delete every SRP remote port; true if that was one
delete_ports() {
	local p n=0
	for p in /sys/class/srp_remote_ports/port-*; do
		[[ -e $p/delete ]] && echo 1 > "$p/delete" && n=$((n + 1))
	done
	[[ $n == 1 ]]
}

cleanup() {
	delete_ports 2>/dev/null
	target_teardown
	ulp_cleanup $ULP_MODS
}
trap cleanup EXIT

# The initial namespace's UDP 4791 must be free for sroce; both veth ends
# and devices there (topo_initial_pair), the initiator binds to
# 192.168.77.1.
ulp_storage_start

# srpt names a port after its GID 0 ("0x" and 32 hex digits): DEV_B's.
gid0=$(< $IB/$DEV_B/ports/1/gids/0)
SPORT=$TGT/srpt/0x${gid0//:/}
TPG=$SPORT/tpgt_1
# The initiator's ACL: named after its SRP initiator port ID, which
# ib_srp makes of its initiator_ext (0) and DEV_A's node GUID.  (srpt
# would also take the session's source address, but what it reads for an
# rdma_cm login is its own side's.)
guid_a=$(< $IB/$DEV_A/node_guid)
ACL=$TPG/acls/0x0000000000000000${guid_a//:/}

# Target: the ramdisk as LUN 0 of srpt's port on DEV_B for that
# initiator, rdma_cm logins on CM_PORT.
target_setup() {
	modprobe ib_srpt &&
	mkdir -p "$RD" &&
	echo "rd_pages=$(((MIB + 32) * 256))" > "$RD/control" &&
	echo 1 > "$RD/enable" &&
	{ [[ -d $TGT/srpt ]] || mkdir "$TGT/srpt"; } &&
	echo $CM_PORT > "$TGT/srpt/discovery_auth/rdma_cm_port" &&
	mkdir -p "$TPG/lun/lun_0" &&
	ln -s "$RD" "$TPG/lun/lun_0/r0" &&
	mkdir -p "$ACL" &&
	{ [[ -d $ACL/lun_0 ]] || {
		mkdir "$ACL/lun_0" && ln -s "$TPG/lun/lun_0" "$ACL/lun_0/r0"; }; } &&
	echo 1 > "$TPG/enable" &&
	modprobe -a ib_srp sd_mod	# no udev in the guest to load sd_mod
}
if target_setup 2> /tmp/target.err; then
	ok "ib_srpt: ramdisk of $((MIB + 32)) MiB as LUN 0 on ${SPORT##*/} ($DEV_B), rdma_cm port $CM_PORT"
else
	not_ok "ib_srpt: ramdisk as LUN 0 on ${SPORT##*/} ($DEV_B)"
	diag "$(< /tmp/target.err)"
	diag "$(dmesg | tail -15)"
	finish
fi

# srp_blockdev: the disk of the SCSI host ib_srp made (the guest has no
# other SRP host)
srp_blockdev() {
	local h b
	for h in /sys/class/scsi_host/host*; do
		[[ $(< "$h/proc_name") == ib_srp ]] || continue
		for b in "$h"/device/target*/*/block/*; do
			[[ -e $b ]] && { echo "/dev/${b##*/}"; return 0; }
		done
	done
	return 1
}

# login NAME: add_target on DEV_A for the target's port; the target port
# ID is srpt's service GUID (its first device's node GUID) twice
login() {
	local name=$1 guid rc=0 tries=0 t0=$EPOCHREALTIME
	local add=/sys/class/infiniband_srp/srp-$DEV_A-1/add_target
	guid=$(< /sys/module/ib_srpt/parameters/srpt_service_guid)
	guid=${guid#0x}
	# After a logout ib_srp forgets the old target from a work item, a
	# while after its remote port went: until then, EEXIST
	while ! echo "id_ext=$guid,ioc_guid=$guid,dest=$IP4_B:$CM_PORT,src=$IP4_A" 2> /tmp/srp.err > "$add"; do
		grep -q 'File exists' /tmp/srp.err && ((tries++ < 20)) || { rc=1; break; }
		sleep 0.5
	done
	((tries)) && diag "add_target refused with EEXIST $tries time(s) first: the old target was still being removed"
	if [[ $rc == 0 ]] && wait_until 20 srp_blockdev > /dev/null; then
		BDEV=$(srp_blockdev)
		ok "$name$(_slow "$t0") ($BDEV)"
		return 0
	fi
	not_ok "$name$(_slow "$t0")"
	diag "add_target exit $rc: $(< /tmp/srp.err)"
	diag "$(dmesg | tail -15)"
	return 1
}

# logout NAME: delete the remote port; its disk goes, and the port itself
# (ib_srp then forgets the target in a work item: login() waits for that)
logout() {
	check "$1: remote port deleted" delete_ports &&
		check "$1: the disk and the remote port are gone" wait_until 10 srp_gone
}

# srp_gone: the disk and the remote port are gone
srp_gone() {
	! srp_blockdev > /dev/null && ! compgen -G "/sys/class/srp_remote_ports/port-*" > /dev/null
}

compgen -G '/sys/class/srp_remote_ports/port-*' > /dev/null && skip_all "an SRP remote port exists already"

if login "ib_srp add_target dest=$IP4_B:$CM_PORT src=$IP4_A"; then
	# ib_srp opens one RC channel per completion vector it may use, srpt
	# one QP per channel: as many on each side, at least one.
	a=$(rc_qps $DEV_A) b=$(rc_qps $DEV_B)
	if [[ $a -ge 1 && $a == "$b" ]]; then
		ok "RC QPs in RTS on $DEV_A/$DEV_B: $a/$b"
	else
		not_ok "RC QPs in RTS on $DEV_A/$DEV_B: $a/$b, expected as many, at least 1"
		diag "$(rdma resource show qp)"
	fi
	fio_verify "fio write $MIB MiB, read back, crc32c verify" "$BDEV" $MIB
	logout "logout"
	# ib_srpt reads use_srq only while no initiator is logged in.
	check "ib_srpt use_srq=1: the next channels receive through an SRQ" \
		sh -c 'echo 1 > "$1"' use_srq "$TPG/attrib/use_srq"
	if login "login again, target on an SRQ"; then
		# (the SRQ exists from use_srq=1 on; the channels' QPs on it
		# show as its lqpn)
		n=$(rdma resource show srq 2>/dev/null | grep "dev $DEV_B " | grep -c ' lqpn ')
		if [[ $n -gt 0 ]]; then
			ok "$n SRQ(s) on $DEV_B with the channels' QPs attached"
		else
			not_ok "no SRQ on $DEV_B with the channels' QPs attached"
			diag "$(rdma resource show srq 2>&1)"
		fi
		fio_verify "fio verify-only read of $REVERIFY_MIB MiB after the new login" "$BDEV" $REVERIFY_MIB verify
		cut_under_io "logout under I/O" "$BDEV" $((MIB / 2)) $((MIB / 2)) srp_gone delete_ports
	fi
	if login "login after the logout under I/O"; then
		fio_verify "fio verify-only read of $REVERIFY_MIB MiB: what the cut I/O did not touch is intact" \
			"$BDEV" $REVERIFY_MIB verify
		if ulp_lossy_on "2% loss each way" 2%; then
			fio_verify "fio write $REVERIFY_MIB MiB, read back, crc32c verify, 2% loss each way" \
				"$BDEV" $REVERIFY_MIB
			ulp_lossy_off
		fi
		# ib_srp's device goes: it removes its host and target first
		cut_under_io "initiator's device deleted" "$BDEV" $((MIB / 2)) $((MIB / 2)) srp_gone \
			timeout 60 rdma link delete $DEV_A
		check "$DEV_A is gone" wait_until 10 ibdev_gone $DEV_A
	fi
fi

target_teardown
check "target taken down: its configfs tree is gone" test ! -d "$SPORT" -a ! -d "$RD"
live=()
for d in $DEV_A $DEV_B; do [[ -e $IB/$d ]] && live+=("$d"); done
ulp_delete_links "with ib_srp and ib_srpt loaded" 10 "${live[@]}"
known=$(dmesg_known_warnings)
[[ -n $known ]] && diag "ib_srpt's own warning for its SRQ channels (not sroce's: DMESG_KNOWN_RE in lib.sh): $known"
# shellcheck disable=SC2046 # one module name per word
ulp_finish $(for m in $ULP_MODS; do grep -q "^$m " /proc/modules && echo $m; done)
