#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# pyverbs.sh: rdma-core's own verbs test suite (python3-pyverbs ships it under
# /usr/share/doc/rdma-core/tests) against an sroce device, loopback on one
# port as the suite does it.  Each test module is one KTAP line; a module
# passes when unittest reports no failure and no error (skips are fine: they
# are the suite's own "not supported by this device" cases and are counted
# in the diagnostics).
#
# Modules run: the device, PD, MR, CQ, QP and RC traffic ones.  Left out, with
# the reason: vendor modules (mlx5, efa), raw packet and flow steering (need
# a NIC), CUDA, ODP and parent domains (not advertised), rdma_cm (needs UD and
# QP1: issue 4), SRQ/XRC (issue 5).

. "$(dirname "$0")/lib.sh"

PYTHON=/usr/bin/python3		# Debian's interpreter: the one with pyverbs
SUITE=/usr/share/doc/rdma-core/tests
MODULES=(test_device test_pd test_mr test_cq test_cqex test_cq_events
	 test_qp test_qpex test_atomic test_addr test_shared_pd
	 test_relaxed_ordering)

[[ -d $SUITE ]] || skip_all "no pyverbs test suite at $SUITE (install python3-pyverbs)"
$PYTHON -c 'import pyverbs' 2>/dev/null || skip_all "$PYTHON cannot import pyverbs"
if [[ $SROCE_DRIVER == sroce ]]; then
	sroce_ko > /dev/null || skip_all "no sroce.ko for $(uname -r) under build/kmod (make module)"
	lib=$(provider_lib) || skip_all "no provider under build/provider (make provider)"
	export RDMAV_DRIVERS=$lib
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
gid=$(gid_index "$DEV_A" "$IP4_A") || { not_ok "IPv4 GID of $DEV_A"; finish; }

# One interpreter for the whole suite: under TCG each python3 start with
# pyverbs costs about 15 s.  unittest -v prints one line per test,
# "name (tests.MODULE.Class.name) ... ok|skipped ...|ERROR|FAIL", and the
# tracebacks after all of them.
t0=$EPOCHREALTIME
(cd "$work" && timeout 1200 $PYTHON tests/run_tests.py --dev "$DEV_A" --gid "$gid" -v \
	"${MODULES[@]/#/tests.}" > "$work/out" 2>&1)
rc=$?
diag "run_tests.py exit $rc$(_slow "$t0"): $(grep -E '^(Ran [0-9]+ tests|OK|FAILED)' "$work/out" | tr '\n' ' ')"
for m in "${MODULES[@]}"; do
	lines=$(grep -E "^[a-zA-Z0-9_]+ \(tests\.$m\." "$work/out")
	pass=$(grep -cE '\.\.\. ok$' <<< "$lines")
	skipped=$(grep -cE '\.\.\. skipped' <<< "$lines")
	bad=$(grep -E '\.\.\. (ERROR|FAIL)$' <<< "$lines")
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
		ok "pyverbs $m"
		diag "$pass passed, $skipped skipped"
	fi
done
[[ $rc == 0 || -n $(grep -E '^FAILED' "$work/out") ]] || { not_ok "run_tests.py completed"; diag "$(tail -n 20 "$work/out")"; }
check_dmesg_clean "kernel log clean"
finish
