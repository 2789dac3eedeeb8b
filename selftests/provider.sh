#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# provider.sh: the sroce provider seen through libibverbs, on topology (a)
# (two devices on a veth pair between two namespaces).  Runs
# build/selftests/sroce_verbs (query device/port, GIDs, PD, MR and their
# errors) and ibv_devices/ibv_devinfo twice: with RDMAV_DRIVERS pointing at
# the build tree, and with the provider installed into the (guest-local)
# libibverbs directory and /etc/libibverbs.d, as `make install` does.
# Then the provider's own live tests (build/provider/sroce_tests
# --gtest_filter='Live*', provider/tests/test_live.cpp) on DEV_A: they
# skip on a host without a device, so this is where they run, and a skip
# here fails like a failure.

. "$(dirname "$0")/lib.sh"

VERBS=$TOP/build/selftests/sroce_verbs
GTESTS=$TOP/build/provider/sroce_tests
LIBDIR=/usr/lib/x86_64-linux-gnu/libibverbs

if [[ $SROCE_DRIVER == sroce ]]; then
	sroce_ko > /dev/null || skip_all "no sroce.ko for $(uname -r) under build/kmod (make module)"
	lib=$(provider_lib) || skip_all "no provider under build/provider (make provider)"
fi
[[ -x $VERBS ]] || make -s -C "$ST_DIR" > /dev/null 2>&1 || skip_all "cannot build $VERBS (make -C selftests)"

trap 'topo_cleanup; sroce_unload; rm -f $LIBDIR/libsroce-rdmav34.so /etc/libibverbs.d/sroce.driver' EXIT
dmesg_mark
sroce_load || { not_ok "load the module"; finish; }
if ! topo_pair 2>/tmp/topo.err; then
	not_ok "topology (a): $DEV_A and $DEV_B on a veth pair"
	diag "$(< /tmp/topo.err)"
	finish
fi
ok "topology (a): $DEV_A and $DEV_B on a veth pair"

# verbs_suite LABEL [MTU]: run sroce_verbs on DEV_A, its KTAP as diagnostics
verbs_suite() {
	local out rc=0
	out=$(SROCE_DEV=$DEV_A SROCE_EXPECT_MTU=${2:-1024} SROCE_EXPECT_IP4=$IP4_A \
		SROCE_EXPECT_IP6=$IP6_A timeout 120 "$VERBS" 2>&1) || rc=$?
	if [[ $rc == 0 ]]; then
		ok "sroce_verbs ($1)"
		diag "$(grep -E '^(ok|not ok|# (PASSED|FAILED))' <<< "$out" | tr '\n' ';')"
	else
		not_ok "sroce_verbs ($1) exit $rc"
		diag "$out"
	fi
}

# live_tests: sroce_tests --gtest_filter='Live*' on DEV_A.  Passes only if
# gtest exited 0, ran at least one test and every test it ran passed:
# none failed, none skipped (a skip names its reason, a device it did not
# find or no IPv4 GID on it, and both are there here).  The gtest output
# is the diagnostics.
live_tests() {
	local out rc=0 name="sroce_tests Live* on $DEV_A (provider/tests/test_live.cpp)"
	local t0=$EPOCHREALTIME ran passed skipped failed
	if [[ ! -x $GTESTS ]]; then
		not_ok "$name"
		diag "$GTESTS is missing: make provider builds it with the provider"
		return
	fi
	out=$(SROCE_DEV=$DEV_A timeout "$(scaled 150)" "$GTESTS" --gtest_filter='Live*' \
		--gtest_color=no 2>&1) || rc=$?
	ran=$(sed -nE 's/^\[==========\] ([0-9]+) tests? from .* ran\..*/\1/p' <<< "$out")
	# one line per test that ended so: "[       OK ] Live.Name (N ms)"
	passed=$(grep -cE '^\[       OK \] [^ ]+ \(' <<< "$out")
	skipped=$(grep -cE '^\[  SKIPPED \] [^ ]+ \(' <<< "$out")
	failed=$(grep -cE '^\[  FAILED  \] [^ ]+ \(' <<< "$out")
	if [[ $rc == 0 && ${ran:-0} -gt 0 && $passed == "$ran" && $skipped == 0 && $failed == 0 ]]; then
		ok "$name: $ran passed$(_slow "$t0")"
		diag "$(grep -E '^\[       OK \]' <<< "$out")"
	else
		not_ok "$name$(_slow "$t0") # exit $rc, ${ran:-no} tests ran, $passed passed, $failed failed, $skipped skipped"
		diag "$out"
	fi
}

# tools LABEL: ibv_devices lists both devices; ibv_devinfo -v shows DEV_A
tools() {
	local out rc=0
	out=$(ibv_devices 2>&1) || rc=$?
	if [[ $rc == 0 && $out == *"$DEV_A"* && $out == *"$DEV_B"* ]]; then
		ok "ibv_devices lists $DEV_A and $DEV_B ($1)"
	else
		not_ok "ibv_devices lists $DEV_A and $DEV_B ($1)"; diag "exit $rc: $out"
	fi
	rc=0
	out=$(ibv_devinfo -v -d $DEV_A 2>&1) || rc=$?
	if [[ $rc == 0 && $out == *PORT_ACTIVE* && $out =~ link_layer:[[:space:]]+Ethernet &&
	      $out =~ GID\[[[:space:]]*[0-9]+\]:.*::ffff:$IP4_A ]]; then
		ok "ibv_devinfo -v -d $DEV_A: active, Ethernet, IPv4 GID ($1)"
	else
		not_ok "ibv_devinfo -v -d $DEV_A: active, Ethernet, IPv4 GID ($1)"; diag "exit $rc: $out"
	fi
}

if [[ $SROCE_DRIVER == sroce ]]; then
	export RDMAV_DRIVERS=$lib
	tools "RDMAV_DRIVERS=$lib"
	verbs_suite "RDMAV_DRIVERS build tree"
	live_tests
	unset RDMAV_DRIVERS
	install -D -m 0755 "$lib-rdmav34.so" $LIBDIR/libsroce-rdmav34.so &&
	install -D -m 0644 "$TOP/provider/sroce.driver" /etc/libibverbs.d/sroce.driver
	check "provider installed into $LIBDIR" [ -f $LIBDIR/libsroce-rdmav34.so ]
	tools "installed provider"
	verbs_suite "installed provider"
else
	tools "rxe"
	verbs_suite "rxe"
	skip "sroce_tests Live*" "the sroce provider's own tests; SROCE_DRIVER=rxe has no sroce device"
fi

# The verbs view of the MTU follows the netdev too.
ip -n $NS_A link set $VETH_A mtu 9000
ip -n $NS_B link set $VETH_B mtu 9000
if wait_until 5 eval '[[ $(port_mtu $DEV_A) == 4096 ]]'; then
	verbs_suite "MTU 9000" 4096
else
	not_ok "active_mtu 4096 at MTU 9000"; diag "active_mtu $(port_mtu $DEV_A)"
fi

check_dmesg_clean "kernel log clean"
finish
