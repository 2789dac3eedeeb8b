#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# limits.sh: verbs objects past the device's advertised maxima, with
# build/selftests/limits (limits.cpp): CQ, QP, SRQ and MR sizes past the
# limits (and absurd ones) fail with EINVAL/ENOMEM; SRQs and CQs are
# created up to max_srq/max_cq and the next one is refused
# (SELFTEST_LONG=1 adds AHs, PDs, QPs and MRs).  Then the device still moves
# data (ibv_rc_pingpong with its data check).

. "$(dirname "$0")/lib.sh"

LIMITS=$TOP/build/selftests/limits

if [[ $SROCE_DRIVER == sroce ]]; then
	sroce_ko > /dev/null || skip_all "no sroce.ko for $(uname -r) under build/kmod (make module)"
	lib=$(provider_lib) || skip_all "no provider under build/provider (make provider)"
	export RDMAV_DRIVERS=$lib
fi
[[ -x $LIMITS && $LIMITS -nt $ST_DIR/limits.cpp ]] || make -s -C "$ST_DIR" > /dev/null 2>&1 ||
	skip_all "cannot build $LIMITS (make -C selftests)"

trap 'topo_cleanup; sroce_unload' EXIT
dmesg_mark
sroce_load || { not_ok "load the module"; finish; }
if ! topo_pair 2>/tmp/topo.err; then
	not_ok "topology (a)"
	diag "$(< /tmp/topo.err)"
	finish
fi
ok "topology (a)"

ga=$(gid_index $DEV_A $IP4_A)
args=(-d $DEV_A -g "$ga")
[[ ${SELFTEST_LONG:-0} == 1 ]] && args+=(-a)
rc=0 t0=$EPOCHREALTIME
ulimit -l unlimited
out=$(timeout 150 "$LIMITS" "${args[@]}" 2>&1) || rc=$?
diag "$out"
case $rc in
0) ok "limits: every object past the maxima refused cleanly$(_slow "$t0")" ;;
*) not_ok "limits$(_slow "$t0") # exit $rc"
   diag "failed: $(grep '^not ok' <<< "$out" | tr '\n' ';')" ;;
esac

check "ibv_rc_pingpong after the limits" pingpong ibv_rc_pingpong $NS_B $DEV_B $IP4_B $NS_A $DEV_A $IP4_A -n 50 -s 4096 -c
topo_cleanup
check_dmesg_clean "kernel log clean"
finish
