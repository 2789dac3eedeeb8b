#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# pyverbs.sh: rdma-core's own verbs test suite (python3-pyverbs ships it under
# /usr/share/doc/rdma-core/tests) against an sroce device, loopback on one
# port as the suite does it.  Each test module is one KTAP line; a module
# passes when unittest reports no failure and no error and at least one of
# its tests passed (skips are fine beside that: they are the suite's own
# "not supported by this device" cases and are counted in the diagnostics;
# a module whose tests all skip fails, with the reasons).
#
# Modules run: the device, PD, MR, CQ, QP and RC traffic ones, shared PDs
# (test_shared_pd: RC WRITE traffic through a context, PD and MR imported
# with ibv_import_device(), ibv_import_pd(), ibv_import_mr()) and parent
# domains (test_parent_domain: RC and UD traffic, an SRQ and an extended CQ
# of a parent domain, custom allocators; its huge page cases skip without
# 2 MiB huge pages) and on-demand paging (test_odp: RC and UD traffic,
# atomics, SRQ, prefetch, on ODP MRs; its implicit, XRC and huge page
# cases skip: not offered).  Left out, with the reason: vendor modules
# (mlx5, efa), raw packet and flow steering (need a NIC), CUDA and tag
# matching (not advertised; every test of those modules skips).  The XRC
# cases run in test_qpex, test_atomic, test_cqex and
# test_relaxed_ordering.

. "$(dirname "$0")/lib.sh"

PYTHON=/usr/bin/python3		# Debian's interpreter: the one with pyverbs
SUITE=/usr/share/doc/rdma-core/tests
MODULES=(test_device test_pd test_mr test_cq test_cqex test_cq_events
	 test_qp test_qpex test_atomic test_addr
	 test_relaxed_ordering test_rdmacm test_shared_pd test_parent_domain
	 test_odp)
# PYVERBS_MODULES="test_qp test_rdmacm" runs only those (for debugging; through
# scripts/vm: -- env PYVERBS_MODULES=... selftests/run pyverbs.sh).
[[ -n ${PYVERBS_MODULES:-} ]] && read -ra MODULES <<< "$PYVERBS_MODULES"

[[ -d $SUITE ]] || skip_all "no pyverbs test suite at $SUITE (install python3-pyverbs)"
$PYTHON -c 'import pyverbs' 2>/dev/null || skip_all "$PYTHON cannot import pyverbs"
if [[ $SROCE_DRIVER == sroce ]]; then
	require_sroce_provider
fi

work=$(mktemp -d)
trap 'topo_cleanup; sroce_unload; rm -rf "$work"' EXIT
dmesg_mark
# The suite is installed half gzipped; it imports itself as the package "tests".
cp -r "$SUITE" "$work/tests"
gunzip -f "$work"/tests/*.gz

sroce_load || { not_ok "load the module"; finish; }
topo_loopback 2>"$work/topo.err" || { not_ok "topology (c)"; diag "$(< "$work/topo.err")"; finish; }
ok "topology (c)"
gid=$(gid_index "$DEV_A" "$IP4_A")
[[ -n $gid ]] || { not_ok "IPv4 GID of $DEV_A"; diag "$(gid_table "$DEV_A")"; finish; }

# The suite finds a device's IP address (which its rdma_cm tests connect
# to) through /sys/class/infiniband/DEV/device/net/, a directory only
# devices with a bus parent (PCI NICs) have; rdma_rxe and siw have none
# either, so test_rdmacm skips every test on them.  The suite therefore
# runs in the device's namespace (rdma_cm binds the address there) with a
# shim over /sys/class/infiniband: the real entries, plus DEV/device/net/
# naming the netdev.  Nothing else reads the shim.
shim_and_run() {
	local shim d f
	shim=$(mktemp -d) || return 1
	mount -t tmpfs none "$shim" && mkdir "$shim/$DEV_A" || return 1
	for f in "$IB/$DEV_A"/*; do ln -s "$(readlink -f "$f")" "$shim/$DEV_A/" || return 1; done
	mkdir -p "$shim/$DEV_A/device/net/$VETH_A" || return 1
	for d in "$IB"/*; do
		[[ ${d##*/} == "$DEV_A" ]] || ln -s "$(readlink -f "$d")" "$shim/" || return 1
	done
	mount --bind "$shim" "$IB" || return 1
	"$@"
}

# One interpreter for the whole suite: under TCG each python3 start with
# pyverbs costs about 15 s.  unittest -v prints one result per test,
# "name (tests.MODULE.Class.name) ... ok|skipped '...'|ERROR|FAIL", where a
# test with a docstring has the docstring and " ... RESULT" on a second
# line; the tracebacks follow all of them.
t0=$EPOCHREALTIME
export -f shim_and_run
(cd "$work" && DEV_A=$DEV_A VETH_A=$VETH_A IB=$IB ip netns exec "$NS_A" bash -c \
	'shim_and_run "$@"' shim timeout 1200 $PYTHON tests/run_tests.py --dev "$DEV_A" \
	--gid "$gid" -v "${MODULES[@]/#/tests.}" > "$work/out" 2>&1)
rc=$?
diag "run_tests.py exit $rc$(_slow "$t0"): $(grep -E '^(Ran [0-9]+ tests|OK|FAILED)' "$work/out" | tr '\n' ' ')"
# One line per test: "MODULE NAME RESULT..."
awk 'match($0, /^[a-zA-Z0-9_]+ \(tests\.[a-zA-Z0-9_]+\./) {
		split(substr($0, RSTART, RLENGTH), w, /[ (.]+/); mod = w[3]; name = w[1]
	}
	mod != "" && / \.\.\. / { sub(/.* \.\.\. /, ""); print mod, name, $0; mod = "" }' \
	"$work/out" > "$work/results"
for m in "${MODULES[@]}"; do
	lines=$(grep -E "^$m " "$work/results")
	pass=$(grep -cE '^[^ ]+ [^ ]+ ok$' <<< "$lines")
	skipped=$(grep -cE '^[^ ]+ [^ ]+ skipped' <<< "$lines")
	bad=$(grep -E '^[^ ]+ [^ ]+ (ERROR|FAIL)$' <<< "$lines")
	if [[ -z $lines ]]; then
		not_ok "pyverbs $m"
		diag "no result for $m: the run stopped early (exit $rc)"
	elif [[ -n $bad ]]; then
		not_ok "pyverbs $m"
		diag "$bad"
		# The tracebacks of this module's failures.
		diag "$(awk -v m="tests.$m." '/^(ERROR|FAIL): / { show = index($0, m) > 0 }
			show && NF { print }' "$work/out" | head -n 60)"
	else
		# A module that passed nothing tested nothing: a failure, with
		# the suite's reasons for its skips.
		if ((pass > 0)); then
			ok "pyverbs $m"
		else
			not_ok "pyverbs $m: no test passed"
		fi
		diag "$pass passed, $skipped skipped"
		# Why, in the suite's words (its "device does not support" cases).
		[[ $skipped == 0 ]] || diag "$(grep -E '^[^ ]+ [^ ]+ skipped' <<< "$lines" |
			cut -d' ' -f2- | sort | head -n 20)"
	fi
done
[[ $rc == 0 || -n $(grep -E '^FAILED' "$work/out") ]] || { not_ok "run_tests.py completed"; diag "$(tail -n 20 "$work/out")"; }
check_dmesg_clean "kernel log clean"
finish
