#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""memcg_qp.py DEV CGROUP WRS: in this process (limits.sh puts it in the
memory cgroup directory CGROUP), open DEV and create an RC QP with WRS send
work requests.  Prints the growth of the cgroup's kernel memory
(memory.stat "kernel") that the QP caused, in bytes.

Exit status: 0 created, 3 refused with ENOMEM, 2 no "kernel" line in
memory.stat, 1 anything else."""

import errno
import sys

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPCap, QPInitAttr


def kernel_bytes(cgroup):
    with open(f'{cgroup}/memory.stat') as f:
        for line in f:
            key, value = line.split()
            if key == 'kernel':
                return int(value)
    return None


def main():
    dev, cgroup, wrs = sys.argv[1], sys.argv[2], int(sys.argv[3])
    ctx = Context(name=dev)
    pd = PD(ctx)
    cq = CQ(ctx, 16)
    before = kernel_bytes(cgroup)
    if before is None:
        print(f'{cgroup}/memory.stat has no "kernel" line')
        return 2
    cap = QPCap(max_send_wr=wrs, max_recv_wr=1, max_send_sge=1,
                max_recv_sge=1)
    try:
        qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq,
                               cap=cap))
    except PyverbsRDMAError as err:
        print(f'create_qp with {wrs} send WRs: {err}')
        return 3 if err.error_code == errno.ENOMEM else 1
    print(f'created QP {qp.qp_num} with {wrs} send WRs: kernel memory '
          f'of the cgroup +{kernel_bytes(cgroup) - before}')
    qp.close()
    return 0


if __name__ == '__main__':
    sys.exit(main())
