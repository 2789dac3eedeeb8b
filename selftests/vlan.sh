#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# vlan.sh: RoCE over an 802.1Q VLAN (id 77 on the standard veth pair).  As
# with rdma_rxe and RoCE NICs, the device sits on the real netdev and the
# VLAN netdev's addresses are GIDs of it; traffic with such a GID is tagged.
# RC, UC and UD data checked by the example programs, RC also by
# build/selftests/rc_verbs' data tests (every byte of SENDs, WRITEs and
# READs of 1 B to 1 MiB, IPv4 and IPv6, and sroce to rdma_rxe); over rdma_cm rping -V,
# ucmatose and udaddy (IPv4 and IPv6), mckey, perftest -R (RC, UD, UC);
# sroce <-> sroce and against rdma_rxe on the VLAN both ways.  The VLAN netdev's own packet counter shows the traffic took it, and
# a device on a VLAN netdev is refused with a clear message.  Then, with the
# tag and the split of transmit batches done in software on the veth (as
# on virtio-net), RC over IPv6 and IPv4 with batches.  Last, a macvlan
# and an ipvlan netdev on each veth end (same namespace), whose addresses
# are GIDs too: RC, UD and rping over them; then the same netdevs moved
# into a third namespace (a container's), with the programs inside it,
# and the container ended under traffic.

. "$(dirname "$0")/lib.sh"

if [[ $SROCE_DRIVER == sroce ]]; then
	require_sroce_provider
fi
require_program "$RC_VERBS" rc_verbs.c
modprobe 8021q 2>/dev/null
trap 'topo_cleanup; sroce_unload; rmmod rdma_rxe 2>/dev/null' EXIT
dmesg_mark
modprobe rdma_ucm || { not_ok "load rdma_ucm"; finish; }
sroce_load || { not_ok "load the module"; finish; }

VID=77
VL_A=$VETH_A.$VID
VL_B=$VETH_B.$VID
V4_A=192.168.78.1
V4_B=192.168.78.2
V6_A=fd78::1
V6_B=fd78::2

# vlan_end NS VETH: a VLAN netdev on VETH with the VLAN addresses
vlan_end() {
	local ns=$1 dev=$2 ip4=$3 ip6=$4
	in_ns "$ns" ip -b - <<EOT
link set lo up
link set $dev up
link add link $dev name $dev.$VID type vlan id $VID
addr add $ip4/24 dev $dev.$VID
addr add $ip6/64 dev $dev.$VID nodad
link set $dev.$VID up
EOT
}

# rx_pkts NS NETDEV, rx_bytes NS NETDEV (a transmit batch is one skb, one
# "packet" here; its bytes are all counted)
rx_pkts() { in_ns "$1" cat "/sys/class/net/$2/statistics/rx_packets"; }
rx_bytes() { in_ns "$1" cat "/sys/class/net/$2/statistics/rx_bytes"; }

pp() {
	local name=$1 t0=$EPOCHREALTIME
	shift
	if pingpong "$@"; then
		ok "$name$(_slow "$t0")"
	else
		not_ok "$name$(_slow "$t0")"
		diag "$PP_OUT"
	fi
}

# (a) sroce <-> sroce, each on a VLAN netdev in its namespace
topo_cleanup
if ip netns add $NS_A && ip netns add $NS_B &&
   ip link add $VETH_A netns $NS_A type veth peer name $VETH_B netns $NS_B &&
   vlan_end $NS_A $VETH_A $V4_A $V6_A && vlan_end $NS_B $VETH_B $V4_B $V6_B &&
   _topo_link $NS_A $DEV_A sroce $VETH_A && _topo_link $NS_B $DEV_B sroce $VETH_B &&
   _topo_wait_active $DEV_A && _topo_wait_active $DEV_B 2>/tmp/topo.err; then
	ok "VLAN $VID topology, $DEV_A on $VETH_A, $DEV_B on $VETH_B"
	check_fails "a device on a VLAN netdev is refused" "invalid argument" \
		ip netns exec $NS_A rdma link add sroce9 type sroce netdev $VL_A
	if dmesg | tail -n 5 | grep -q "$VL_A is a VLAN netdev; create the device on $VETH_A"; then
		ok "the refusal names the real netdev (kernel log)"
	else
		not_ok "the refusal names the real netdev (kernel log)"
		diag "$(dmesg | tail -n 5)"
	fi
	before=$(rx_pkts $NS_B $VL_B)
	pp "RC over VLAN, 4 KiB x 50, checked" ibv_rc_pingpong $NS_B $DEV_B $V4_B $NS_A $DEV_A $V4_A -c -n 50 -s 4096
	after=$(rx_pkts $NS_B $VL_B)
	if (( after - before >= 100 )); then
		ok "the RC traffic came in on $VL_B ($((after - before)) packets)"
	else
		not_ok "the RC traffic came in on $VL_B (only $((after - before)) packets)"
	fi
	pp "UD over VLAN, 1 KiB x 50, checked" ibv_ud_pingpong $NS_B $DEV_B $V4_B $NS_A $DEV_A $V4_A -c -n 50 -s 1024
	PP_CONNECT=$V4_B pp "RC over VLAN, IPv6 GIDs" ibv_rc_pingpong $NS_B $DEV_B $V6_B $NS_A $DEV_A $V6_A -c -n 50 -s 4096
	before=$(rx_bytes $NS_B $VL_B)
	rc_data "rc_verbs data tests over VLAN, IPv4 GIDs" $NS_A \
		-d $DEV_A -g "$(gid_index $DEV_A $V4_A)" -D $DEV_B -G "$(gid_index $DEV_B $V4_B)"
	rc_data "rc_verbs data tests over VLAN, IPv6 GIDs" $NS_A \
		-d $DEV_A -g "$(gid_index $DEV_A $V6_A)" -D $DEV_B -G "$(gid_index $DEV_B $V6_B)"
	after=$(rx_bytes $NS_B $VL_B)
	# their 1 MiB SENDs and WRITEs alone are 4 MiB towards $DEV_B
	check_ge "the rc_verbs traffic came in on $VL_B (bytes)" 4194304 $((after - before))
	cm_pair "rping -V over VLAN, IPv4" $NS_A "rping -s -a $V4_A -V -C 30" \
		$NS_B "rping -c -a $V4_A -V -C 30"
	cm_pair "rping -V over VLAN, IPv6" $NS_A "rping -s -a $V6_A -V -C 30" \
		$NS_B "rping -c -a $V6_A -V -C 30"
	pp "UC over VLAN, 4 KiB x 50, checked" ibv_uc_pingpong $NS_B $DEV_B $V4_B $NS_A $DEV_A $V4_A -c -n 50 -s 4096
	cm_pair "ucmatose over VLAN, IPv4" $NS_A "ucmatose -b $V4_A" $NS_B "ucmatose -s $V4_A"
	cm_pair "ucmatose over VLAN, IPv6" $NS_A "ucmatose -b $V6_A" $NS_B "ucmatose -s $V6_A"
	cm_pair "udaddy over VLAN, IPv4" $NS_A "udaddy -b $V4_A" $NS_B "udaddy -s $V4_A"
	cm_pair "udaddy over VLAN, IPv6" $NS_A "udaddy -b $V6_A" $NS_B "udaddy -s $V6_A"
	mckey_pair "mckey over VLAN 239.7.8.7" $NS_A $V4_A $NS_B $V4_B 239.7.8.7
	perftest_cm "ib_send_bw -R over VLAN" $NS_A $DEV_A $NS_B $DEV_B $V4_A ib_send_bw -s 65536 -n 100
	perftest_cm "ib_write_bw -R over VLAN" $NS_A $DEV_A $NS_B $DEV_B $V4_A ib_write_bw -s 65536 -n 100
	perftest_cm "ib_send_bw -R -c UD over VLAN" $NS_A $DEV_A $NS_B $DEV_B $V4_A ib_send_bw -c UD -s 1024 -n 100
	# rdma_cm has no UC port space: UC with perftest's TCP side channel.
	# RDMA WRITE: a UC send test would wait forever for a message the
	# (lossy when loaded) veth dropped, as UC allows.
	perftest_pair "ib_write_bw -c UC over VLAN" $NS_A $DEV_A $V4_A $NS_B $DEV_B $V4_B ib_write_bw -c UC -s 65536 -n 100
	# A lower device that tags in software and cannot send a list GSO
	# whole (virtio-net, say): the tag goes into the head of a transmit
	# batch, which is then split there, and every packet of the batch
	# needs room in front of its IP header for the tagged link header.
	# IPv6 leaves the least.  (Until session 41: skb_under_panic.)
	if err=$(in_ns $NS_A ethtool -K $VETH_A txvlan off tx-gso-list off 2>&1) &&
	   err=$(in_ns $NS_B ethtool -K $VETH_B txvlan off tx-gso-list off 2>&1); then
		want=$(tx_batch_on)
		b0=$(($(tx_batches $DEV_A) + $(tx_batches $DEV_B)))
		PP_CONNECT=$V4_B pp "RC over VLAN, IPv6, tag and batch split in software, 64 KiB x 20" \
			ibv_rc_pingpong $NS_B $DEV_B $V6_B $NS_A $DEV_A $V6_A -c -n 20 -s 65536
		PP_CONNECT=$V4_B pp "RC over VLAN, IPv4, tag and batch split in software, 64 KiB x 20" \
			ibv_rc_pingpong $NS_B $DEV_B $V4_B $NS_A $DEV_A $V4_A -c -n 20 -s 65536
		b=$(($(tx_batches $DEV_A) + $(tx_batches $DEV_B) - b0))
		check "those messages left in $b transmit batches (tx_batch $want)" \
			test $((b > 0)) == $want
	else
		not_ok "ethtool -K txvlan off tx-gso-list off on the veth pair"
		diag "$err"
	fi
else
	not_ok "VLAN $VID topology"
	diag "$(cat /tmp/topo.err 2>/dev/null)"
fi

# (b) rdma_rxe on a VLAN netdev in the initial namespace, sroce in NS_B
topo_cleanup
if modprobe rdma_rxe && ip netns add $NS_B &&
   ip link add $VETH_A type veth peer name $VETH_B netns $NS_B &&
   vlan_end "" $VETH_A $V4_A $V6_A && vlan_end $NS_B $VETH_B $V4_B $V6_B &&
   _topo_link "" $RXE_DEV rxe $VETH_A && _topo_link $NS_B $DEV_B sroce $VETH_B &&
   _topo_wait_active $RXE_DEV && _topo_wait_active $DEV_B 2>/tmp/topo.err; then
	ok "VLAN $VID interop topology, $RXE_DEV on $VETH_A, $DEV_B on $VETH_B"
	pp "interop RC over VLAN, sroce server <- rxe client" ibv_rc_pingpong $NS_B $DEV_B $V4_B "" $RXE_DEV $V4_A -c -n 50 -s 4096
	pp "interop RC over VLAN, rxe server <- sroce client" ibv_rc_pingpong "" $RXE_DEV $V4_A $NS_B $DEV_B $V4_B -c -n 50 -s 4096
	rc_data "interop rc_verbs data tests over VLAN, sroce $DEV_B -> rxe $RXE_DEV" "" \
		-d $DEV_B -g "$(gid_index $DEV_B $V4_B)" -D $RXE_DEV -G "$(gid_index $RXE_DEV $V4_A)"
	pp "interop UD over VLAN, sroce server <- rxe client" ibv_ud_pingpong $NS_B $DEV_B $V4_B "" $RXE_DEV $V4_A -c -n 50 -s 1024
	cm_pair "interop rping -V over VLAN, rxe server <- sroce client" "" "rping -s -a $V4_A -V -C 30" \
		$NS_B "rping -c -a $V4_A -V -C 30"
	cm_pair "interop rping -V over VLAN, sroce server <- rxe client" $NS_B "rping -s -a $V4_B -V -C 30" \
		"" "rping -c -a $V4_B -V -C 30"
	cm_pair "interop ucmatose over VLAN, rxe server <- sroce client" "" "ucmatose -b $V4_A" \
		$NS_B "ucmatose -s $V4_A"
	cm_pair "interop udaddy over VLAN, sroce server <- rxe client" $NS_B "udaddy -b $V4_B" \
		"" "udaddy -s $V4_B"
	mckey_pair "interop mckey over VLAN, rxe receives from sroce" "" $V4_A $NS_B $V4_B 239.7.8.8
	perftest_cm "interop ib_write_bw -R over VLAN, rxe server <- sroce client" "" $RXE_DEV $NS_B $DEV_B $V4_A ib_write_bw -s 65536 -n 100
else
	not_ok "VLAN $VID interop topology"
	diag "$(cat /tmp/topo.err 2>/dev/null)"
fi
ip link del $VETH_A 2>/dev/null
topo_cleanup
rmmod rdma_rxe 2>/dev/null

# (c) a macvlan and an ipvlan netdev on each end of the pair, in the same
# namespace (the core makes their addresses GIDs of the device below, as
# for a VLAN): their packets come in on the upper netdev, which sroce maps
# to the device of the netdev below.  RC data checked, UD, rping over
# rdma_cm, and the upper netdev's own counter shows the traffic took it.
for kind in macvlan ipvlan; do
	[[ $kind == macvlan ]] && mode="mode bridge" || mode="mode l2"
	if topo_pair 2>/tmp/topo.err &&
	   in_ns $NS_A ip link add up0 link $VETH_A type $kind $mode &&
	   in_ns $NS_B ip link add up0 link $VETH_B type $kind $mode &&
	   in_ns $NS_A ip addr add $V4_A/24 dev up0 && in_ns $NS_A ip link set up0 up &&
	   in_ns $NS_B ip addr add $V4_B/24 dev up0 && in_ns $NS_B ip link set up0 up &&
	   wait_until 10 has_roce_gid $DEV_A "$(ipv4_gid $V4_A)" &&
	   wait_until 10 has_roce_gid $DEV_B "$(ipv4_gid $V4_B)"; then
		ok "$kind topology: up0 on $VETH_A and $VETH_B, GIDs $(gid_index $DEV_A $V4_A) and $(gid_index $DEV_B $V4_B)"
		rx0=$(rx_pkts $NS_A up0)
		pp "RC over $kind, 4 KiB x 50, checked" ibv_rc_pingpong $NS_B $DEV_B $V4_B $NS_A $DEV_A $V4_A -c -n 50 -s 4096
		check_ge "the RC traffic came in on $NS_A's $kind" 50 $(($(rx_pkts $NS_A up0) - rx0))
		pp "UD over $kind, 1 KiB x 50, checked" ibv_ud_pingpong $NS_B $DEV_B $V4_B $NS_A $DEV_A $V4_A -c -n 50 -s 1024
		cm_pair "rping -V over $kind" $NS_A "rping -s -a $V4_A -V -C 30" \
			$NS_B "rping -c -a $V4_A -V -C 30"
	else
		not_ok "$kind topology"
		diag "$(cat /tmp/topo.err 2>/dev/null; gid_table $DEV_A 2>&1)"
	fi
	topo_cleanup
done

# (d) the same upper netdevs moved into a third namespace, a container's
# ($NS_C): the core keeps their addresses as GIDs of the device below, and
# sroce holds UDP port 4791 in that namespace for as long as such a GID
# exists (its packets come in through that namespace's IP stack) and
# routes its packets there.  The programs run inside the container, its
# peer is $DEV_B on the plain veth end in $NS_B, on the same link.
NS_C=sroce_c
V4_C=192.168.77.3
V6_C=fd77::3
# port4791 NS: sroce's UDP port 4791 socket in namespace NS
port4791() { [[ -n $(in_ns "$1" ss -Hulna "sport = :4791" 2>/dev/null) ]]; }
# gone NS GID: neither the GID on $DEV_A nor the port in NS is left
gone() { ! has_roce_gid $DEV_A "$2" && ! port4791 "$1"; }
# container_killed_under_traffic: RC between $NS_C and $NS_B, moving; the
# container's side killed with its namespace, then the peer; the GID goes
container_killed_under_traffic() {
	local port=$((20000 + RANDOM % 10000)) spid cpid rx0 moving=1
	# ip netns exec execs the program: $! is the program's PID
	ip netns exec $NS_B ibv_rc_pingpong -d $DEV_B -g "$(gid_index $DEV_B $IP4_B)" \
		-p $port -n 100000000 -s 4096 > /dev/null 2>&1 &
	spid=$!
	sleep 1
	rx0=$(rx_pkts $NS_C up0)
	ip netns exec $NS_C ibv_rc_pingpong -d $DEV_A -g "$(gid_index $DEV_A $V4_C)" \
		-p $port -n 100000000 -s 4096 $IP4_B > /dev/null 2>&1 &
	cpid=$!
	_moving() { (($(rx_pkts $NS_C up0) - rx0 > 200)); }
	wait_until 20 _moving || { diag "no RC traffic in $NS_C"; moving=0; }
	kill -9 $cpid
	wait $cpid 2>/dev/null
	ip netns del $NS_C
	kill -9 $spid
	wait $spid 2>/dev/null
	wait_until 20 gone $NS_C "$(ipv4_gid $V4_C)" && ((moving))
}
for kind in macvlan ipvlan; do
	[[ $kind == macvlan ]] && mode="mode bridge" || mode="mode l2"
	ip netns del $NS_C 2>/dev/null
	if topo_pair 2>/tmp/topo.err && ! port4791 "" && ip netns add $NS_C &&
	   in_ns $NS_A ip link add up0 link $VETH_A type $kind $mode &&
	   in_ns $NS_A ip link set up0 netns $NS_C &&
	   in_ns $NS_C ip link set lo up &&
	   in_ns $NS_C ip addr add $V4_C/24 dev up0 &&
	   in_ns $NS_C ip addr add $V6_C/64 dev up0 nodad && in_ns $NS_C ip link set up0 up &&
	   wait_until 10 has_roce_gid $DEV_A "$(ipv4_gid $V4_C)" &&
	   wait_until 10 has_roce_gid $DEV_A "$(ipv6_gid $V6_C)"; then
		ok "$kind in a container: up0 on $VETH_A moved to $NS_C, GID $(gid_index $DEV_A $V4_C) of $DEV_A"
		check "sroce holds UDP port 4791 in $NS_C" port4791 $NS_C
		rx0=$(rx_pkts $NS_C up0)
		pp "RC from the container's $kind, 4 KiB x 50, checked" ibv_rc_pingpong $NS_B $DEV_B $IP4_B $NS_C $DEV_A $V4_C -c -n 50 -s 4096
		check_ge "the RC traffic came in on $NS_C's $kind" 50 $(($(rx_pkts $NS_C up0) - rx0))
		PP_CONNECT=$IP4_B pp "RC from the container's $kind, IPv6 GIDs" ibv_rc_pingpong $NS_B $DEV_B $IP6_B $NS_C $DEV_A $V6_C -c -n 50 -s 4096
		pp "UD from the container's $kind, 1 KiB x 50, checked" ibv_ud_pingpong $NS_C $DEV_A $V4_C $NS_B $DEV_B $IP4_B -c -n 50 -s 1024
		rc_data "rc_verbs data tests between the container's $kind and $DEV_B" $NS_C \
			-d $DEV_A -g "$(gid_index $DEV_A $V4_C)" -D $DEV_B -G "$(gid_index $DEV_B $IP4_B)"
		cm_pair "rping -V, server in the container's $kind" $NS_C "rping -s -a $V4_C -V -C 30" \
			$NS_B "rping -c -a $V4_C -V -C 30"
		cm_pair "rping -V, client in the container's $kind" $NS_B "rping -s -a $IP4_B -V -C 30" \
			$NS_C "rping -c -a $IP4_B -V -C 30"
		cm_pair "udaddy, server in the container's $kind" $NS_C "udaddy -b $V4_C" \
			$NS_B "udaddy -s $V4_C"
		mckey_pair "mckey, the container's $kind receives" $NS_C $V4_C $NS_B $IP4_B 239.7.8.9
		mckey_pair "mckey, the container's $kind sends" $NS_B $IP4_B $NS_C $V4_C 239.7.8.10
		# The container goes away: its GIDs with it, and the port there.
		in_ns $NS_C ip addr flush dev up0
		if wait_until 10 gone $NS_C "$(ipv4_gid $V4_C)" &&
		   ! has_roce_gid $DEV_A "$(ipv6_gid $V6_C)"; then
			ok "the container's address gone: its GID and sroce's port 4791 there too"
		else
			not_ok "the container's address gone: its GID and sroce's port 4791 there too"
			diag "$(gid_table $DEV_A 2>&1; in_ns $NS_C ss -ulna 2>&1)"
		fi
		# The container ends under traffic: its processes killed, its
		# namespace deleted (the QP held it until then), the GID gone.
		in_ns $NS_C ip addr add $V4_C/24 dev up0
		if wait_until 10 has_roce_gid $DEV_A "$(ipv4_gid $V4_C)" &&
		   container_killed_under_traffic; then
			ok "the container ended under traffic: its GID went with it"
		else
			not_ok "the container ended under traffic: its GID went with it"
			diag "$(gid_table $DEV_A 2>&1)"
		fi
	else
		not_ok "$kind in a container"
		diag "$(cat /tmp/topo.err 2>/dev/null; gid_table $DEV_A 2>&1; port4791 "" && echo "port 4791 held in the initial namespace")"
	fi
	ip netns del $NS_C 2>/dev/null
	topo_cleanup
done

check_dmesg_clean "kernel log clean"
finish
