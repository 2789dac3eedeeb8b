#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# cm.sh: the kernel's communication manager over sroce (QP1, rdma_cm),
# with rdma-core's librdmacm example programs:
#   rping -V (every ping's data verified), ucmatose (RC connect, send,
#   disconnect), udaddy (UD address exchange over SIDR), mckey (multicast
#   join, attach, delivery), perftest's ib_send_bw -R and ib_write_bw -R
#   (IPv4 only: perftest 4.5 resolves -R addresses as IPv4),
# (a) sroce <-> sroce in two namespaces over IPv4 and IPv6, and
# (b) against rdma_rxe both ways.  CM_COUNT sets the rping count (100).

. "$(dirname "$0")/lib.sh"

if [[ $SROCE_DRIVER == sroce ]]; then
	sroce_ko > /dev/null || skip_all "no sroce.ko for $(uname -r) under build/kmod (make module)"
	lib=$(provider_lib) || skip_all "no provider under build/provider (make provider)"
	export RDMAV_DRIVERS=$lib
fi
command -v rping > /dev/null || skip_all "rping not installed (rdmacm-utils)"
trap 'topo_cleanup; sroce_unload; rmmod rdma_rxe 2>/dev/null' EXIT
dmesg_mark
modprobe rdma_ucm || { not_ok "load rdma_ucm"; finish; }
sroce_load || { not_ok "load the module"; finish; }
COUNT=${CM_COUNT:-100}

# _cm_listening PID: an rdma_cm ID listens (or server PID is gone)
_cm_listening() {
	[[ $(rdma resource show cm_id 2>/dev/null) == *LISTEN* ]] || ! kill -0 "$1" 2>/dev/null
}

# cm NAME SRV_NS SRV_CMD CLI_NS CLI_CMD: run a librdmacm server and client
# (commands as single strings); both must exit 0 and neither may report a
# failed event.  The client is retried while the server is not listening
# yet (its connect is rejected).
cm() {
	local name=$1 sns=$2 scmd=$3 cns=$4 ccmd=$5 spid src=0 crc=0 try t0=$EPOCHREALTIME
	in_ns "$sns" timeout 90 $scmd > /tmp/cm.srv 2>&1 &
	spid=$!
	wait_until 20 _cm_listening $spid
	for try in 1 2 3 4 5 6; do
		crc=0
		in_ns "$cns" timeout 90 $ccmd > /tmp/cm.cli 2>&1 || crc=$?
		grep -q REJECTED /tmp/cm.cli && kill -0 $spid 2>/dev/null || break
		sleep 1
	done
	wait $spid || src=$?
	if [[ $src == 0 && $crc == 0 ]] &&
	   ! grep -qiE 'error|fail|unreachable|rejected' /tmp/cm.srv /tmp/cm.cli; then
		ok "$name$(_slow "$t0")"
		return 0
	fi
	not_ok "$name$(_slow "$t0")"
	diag "server ($sns): $scmd -> exit $src"
	diag "$(tail -15 /tmp/cm.srv)"
	diag "client ($cns): $ccmd -> exit $crc (attempt $try)"
	diag "$(tail -15 /tmp/cm.cli)"
	return 1
}

# mc NAME NS_RECV BIND_RECV NS_SEND BIND_SEND GROUP: mckey receiver, then a
# sender; the receiver must get all 10 messages.
mc() {
	local name=$1 rns=$2 rip=$3 sns=$4 sip=$5 grp=$6 rpid rrc=0 src=0 t0=$EPOCHREALTIME
	in_ns "$rns" timeout 60 mckey -m "$grp" -b "$rip" -C 10 > /tmp/mc.rcv 2>&1 &
	rpid=$!
	wait_until 15 grep -q 'receiving data' /tmp/mc.rcv
	sleep 1
	in_ns "$sns" timeout 60 mckey -m "$grp" -b "$sip" -s -C 10 > /tmp/mc.snd 2>&1 || src=$?
	wait $rpid || rrc=$?
	if [[ $rrc == 0 && $src == 0 ]] && ! grep -qiE 'error|fail' /tmp/mc.rcv /tmp/mc.snd; then
		ok "$name$(_slow "$t0")"
		return 0
	fi
	not_ok "$name$(_slow "$t0")"
	diag "receiver ($rns, $rip) exit $rrc: $(tail -8 /tmp/mc.rcv)"
	diag "sender ($sns, $sip) exit $src: $(tail -8 /tmp/mc.snd)"
	return 1
}

# ptr NAME SRV_NS SRV_DEV CLI_NS CLI_DEV SRV_IP PROG ARGS...: perftest over
# rdma_cm (-R: no TCP side channel) completes
ptr() {
	local name=$1 sns=$2 sdev=$3 cns=$4 cdev=$5 sip=$6 prog=$7 spid src=0 crc=0 t0=$EPOCHREALTIME
	local port=$((20000 + RANDOM % 10000))
	shift 7
	in_ns "$sns" timeout 90 "$prog" -d "$sdev" -R -F -p $port "$@" > /tmp/pt.srv 2>&1 &
	spid=$!
	wait_until 20 _cm_listening $spid
	in_ns "$cns" timeout 90 "$prog" -d "$cdev" -R -F -p $port "$@" "$sip" > /tmp/pt.cli 2>&1 || crc=$?
	wait $spid || src=$?
	if [[ $crc == 0 && $src == 0 ]]; then
		ok "$name$(_slow "$t0")"
	else
		not_ok "$name$(_slow "$t0")"
		diag "$prog -R $* (client exit $crc, server exit $src; 124 = timed out)"
		diag "server: $(grep -v '^ [A-Z]' /tmp/pt.srv | tail -n 15)"
		diag "client: $(grep -v '^ [A-Z]' /tmp/pt.cli | tail -n 15)"
	fi
}

# (a) sroce <-> sroce in two namespaces
if topo_pair 2>/tmp/topo.err; then
	ok "topology (a)"
	cm "rping IPv4 -V -C $COUNT" $NS_A "rping -s -a $IP4_A -V -C $COUNT" \
		$NS_B "rping -c -a $IP4_A -V -C $COUNT"
	cm "rping IPv6 -V -C $COUNT" $NS_A "rping -s -a $IP6_A -V -C $COUNT" \
		$NS_B "rping -c -a $IP6_A -V -C $COUNT"
	cm "rping IPv4 -V, 60000 B x 20" $NS_B "rping -s -a $IP4_B -V -S 60000 -C 20" \
		$NS_A "rping -c -a $IP4_B -V -S 60000 -C 20"
	cm "ucmatose IPv4, 2 connections" $NS_A "ucmatose -b $IP4_A -c 2" \
		$NS_B "ucmatose -s $IP4_A -c 2"
	cm "ucmatose IPv6" $NS_A "ucmatose -b $IP6_A" $NS_B "ucmatose -s $IP6_A"
	cm "udaddy IPv4" $NS_A "udaddy -b $IP4_A" $NS_B "udaddy -s $IP4_A"
	cm "udaddy IPv6" $NS_A "udaddy -b $IP6_A" $NS_B "udaddy -s $IP6_A"
	mc "mckey IPv4 239.7.7.7" $NS_A $IP4_A $NS_B $IP4_B 239.7.7.7
	ptr "ib_send_bw -R 64 KiB" $NS_A $DEV_A $NS_B $DEV_B $IP4_A ib_send_bw -s 65536 -n 100
	ptr "ib_write_bw -R 64 KiB" $NS_A $DEV_A $NS_B $DEV_B $IP4_A ib_write_bw -s 65536 -n 100
	ptr "ib_send_bw -R -c UD" $NS_A $DEV_A $NS_B $DEV_B $IP4_A ib_send_bw -c UD -s 1024 -n 100
else
	not_ok "topology (a)"
	diag "$(< /tmp/topo.err)"
fi

# (b) interop with rdma_rxe (rdma_rxe in the initial namespace)
if topo_interop 2>/tmp/topo.err; then
	ok "topology (b)"
	cm "interop rping, sroce server <- rxe client" $NS_B "rping -s -a $IP4_B -V -C 30" \
		"" "rping -c -a $IP4_B -V -C 30"
	cm "interop rping, rxe server <- sroce client" "" "rping -s -a $IP4_A -V -C 30" \
		$NS_B "rping -c -a $IP4_A -V -C 30"
	cm "interop rping IPv6, rxe server <- sroce client" "" "rping -s -a $IP6_A -V -C 30" \
		$NS_B "rping -c -a $IP6_A -V -C 30"
	cm "interop ucmatose, sroce server <- rxe client" $NS_B "ucmatose -b $IP4_B" \
		"" "ucmatose -s $IP4_B"
	cm "interop udaddy, rxe server <- sroce client" "" "udaddy -b $IP4_A" \
		$NS_B "udaddy -s $IP4_A"
	cm "interop udaddy, sroce server <- rxe client" $NS_B "udaddy -b $IP4_B" \
		"" "udaddy -s $IP4_B"
	ptr "interop ib_write_bw -R, rxe server <- sroce client" "" $RXE_DEV $NS_B $DEV_B $IP4_A ib_write_bw -s 65536 -n 100
	ptr "interop ib_send_bw -R, sroce server <- rxe client" $NS_B $DEV_B "" $RXE_DEV $IP4_B ib_send_bw -s 65536 -n 100
	mc "interop mckey, rxe receives from sroce" "" $IP4_A $NS_B $IP4_B 239.7.7.8
	mc "interop mckey, sroce receives from rxe" $NS_B $IP4_B "" $IP4_A 239.7.7.9
else
	not_ok "topology (b)"
	diag "$(< /tmp/topo.err)"
fi
topo_cleanup
rmmod rdma_rxe 2>/dev/null

check_dmesg_clean "kernel log clean"
finish
