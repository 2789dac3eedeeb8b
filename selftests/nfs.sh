#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# nfs.sh: NFS over RDMA on sroce (svcrdma server, xprtrdma client, both in
# rpcrdma.ko).  knfsd exports a tmpfs directory as the NFSv4 root and listens
# on rdma 20049; the client mounts it with proto=rdma through one sroce
# device (loopback: the client's rdma_cm resolves the server's local address
# to the same device; NFS has no option to bind another source address, so
# there is no two-device case).  NFS_MIB (256) MiB of random data are
# written with O_DIRECT and read back with O_DIRECT after dropping the
# caches; the checksums of the source, of the read-back and of the
# server's file must agree.  Then umount, nfsd stopped, `rdma link delete`,
# rmmod of the NFS and RPC-over-RDMA modules, kernel log clean.
# Needs nfs-kernel-server (scripts/install-deps).

. "$(dirname "$0")/lib.sh"

[[ $SROCE_DRIVER == sroce ]] || skip_all "nfs.sh runs on sroce only (rdma_rxe shares UDP 4791 in init_net)"
sroce_ko > /dev/null || skip_all "no sroce.ko for $(uname -r) under build/kmod (make module)"
for c in rpc.nfsd rpc.mountd exportfs rpcbind mount.nfs; do
	command -v $c > /dev/null || skip_all "$c not installed (nfs-kernel-server, scripts/install-deps)"
done
require_modules rpcrdma nfsd nfsv4

MIB=${NFS_MIB:-256}
EXPORT=/tmp/nfs-export
MNT=/tmp/nfs-mnt
NFS_MODS="nfsv4 nfs nfsd rpcrdma"

nfs_stop() {
	umount "$MNT" 2>/dev/null
	[[ -d /proc/fs/nfsd/threads || -e /proc/fs/nfsd/threads ]] && rpc.nfsd 0 2>/dev/null
	exportfs -ua 2>/dev/null
	pkill -x rpc.mountd
	pkill -x rpcbind
	wait_until 5 eval '! pgrep -x "rpc.mountd|rpcbind" > /dev/null'
	umount /proc/fs/nfsd 2>/dev/null
	umount /var/lib/nfs 2>/dev/null
}
cleanup() {
	nfs_stop
	ulp_cleanup $NFS_MODS
	rm -rf "$EXPORT" /tmp/nfs-src
}
trap cleanup EXIT

ulp_start

# knfsd and the client live in the initial namespace: so do netdev and device.
if ip link add $VETH_A type veth peer name $VETH_B &&
   TOPO_MTU=9000 _topo_end "" $VETH_A $IP4_A $IP6_A &&
   ip link set $VETH_B up &&
   _topo_link "" $DEV_A sroce $VETH_A && _topo_wait_active $DEV_A 2> /tmp/topo.err; then
	ok "$DEV_A in the initial namespace, veth MTU 9000"
else
	not_ok "$DEV_A in the initial namespace"
	diag "$(< /tmp/topo.err)"
	finish
fi

# The root file system is read-only: nfs-utils' state goes to a tmpfs.  A
# 10 s grace period instead of 90 s.
nfs_start() {
	modprobe -a rpcrdma nfsd nfsv4 &&
	mount -t tmpfs none /var/lib/nfs &&
	mkdir -p /var/lib/nfs/v4recovery "$EXPORT" "$MNT" &&
	touch /var/lib/nfs/etab /var/lib/nfs/rmtab &&
	mount -t nfsd nfsd /proc/fs/nfsd &&
	rpcbind -w &&
	exportfs -o rw,no_root_squash,insecure,fsid=0 "*:$EXPORT" &&
	rpc.mountd -N 2 -N 3 &&
	echo 10 > /proc/fs/nfsd/nfsv4leasetime &&
	echo 10 > /proc/fs/nfsd/nfsv4gracetime &&
	rpc.nfsd -N 3 4 &&
	echo "rdma 20049" > /proc/fs/nfsd/portlist &&
	grep -q '^rdma 20049' /proc/fs/nfsd/portlist
}
if nfs_start > /tmp/nfsd.err 2>&1; then
	ok "knfsd exports $EXPORT (NFSv4 root), listening on rdma 20049"
else
	not_ok "knfsd on rdma 20049"
	diag "$(< /tmp/nfsd.err)"
	finish
fi

t0=$EPOCHREALTIME
if out=$(mount -t nfs -o vers=4.2,proto=rdma,port=20049 $IP4_A:/ "$MNT" 2>&1) &&
   grep -q " $MNT nfs4 .*proto=rdma" /proc/mounts; then
	ok "mount -t nfs -o vers=4.2,proto=rdma$(_slow "$t0")"
	n=$(rdma resource show qp 2>/dev/null | grep "$DEV_A/" | grep -c 'type RC state RTS')
	check_eq "RC QPs of the mount in RTS on $DEV_A (client and server)" 2 "$n"

	dd if=/dev/urandom of=/tmp/nfs-src bs=1M count="$MIB" status=none
	sum=$(sha256sum < /tmp/nfs-src)
	check "write $MIB MiB (O_DIRECT)" dd if=/tmp/nfs-src of="$MNT/f" bs=1M oflag=direct status=none
	sync
	echo 3 > /proc/sys/vm/drop_caches
	t0=$EPOCHREALTIME
	got=$(dd if="$MNT/f" bs=1M iflag=direct status=none | sha256sum)
	check_eq "read back $MIB MiB (O_DIRECT), sha256 equal$(_slow "$t0")" "$sum" "$got"
	check_eq "server's file, sha256 equal" "$sum" "$(sha256sum < "$EXPORT/f")"
	check "umount" umount "$MNT"
else
	not_ok "mount -t nfs -o vers=4.2,proto=rdma$(_slow "$t0")"
	diag "$out"
fi
rm -f /tmp/nfs-src

nfs_stop
ulp_delete_links "with rpcrdma loaded" 10 $DEV_A
ulp_finish $NFS_MODS
