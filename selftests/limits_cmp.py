#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""limits_cmp.py SROCE_DEVINFO RXE_DEVINFO: every limit sroce advertises
(``ibv_devinfo -v`` output, device and port) must be at least rdma_rxe's.
Prints one line per attribute and exits 1 if any is lower, 2 if an
attribute is missing from either output."""
import re
import sys

# Every count and size limit of ibv_query_device() and ibv_query_port()
# that rdma_rxe sets.
KEYS = """max_pkeys max_mr_size max_qp max_qp_wr max_sge max_sge_rd max_cq max_cqe max_mr
max_pd max_qp_rd_atom max_res_rd_atom max_qp_init_rd_atom max_mw
max_mcast_grp max_mcast_qp_attach max_total_mcast_qp_attach max_ah max_srq
max_srq_wr max_srq_sge max_msg_sz gid_tbl_len pkey_tbl_len""".split()


def parse(path):
    vals = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"\s*(\w+):\s+(0x[0-9a-fA-F]+|\d+)\b", line)
            # Only the limits: other lines (node_guid: 0036:...) are not
            # numbers int(x, 0) takes.
            if m and m.group(1) in KEYS and m.group(1) not in vals:
                vals[m.group(1)] = int(m.group(2), 0)
    return vals


def main():
    if len(sys.argv) != 3:
        print("usage: limits_cmp.py SROCE_DEVINFO RXE_DEVINFO", file=sys.stderr)
        return 2
    ours, rxe = parse(sys.argv[1]), parse(sys.argv[2])
    rc = 0
    for key in KEYS:
        if key not in ours or key not in rxe:
            print(f"{key}: missing (sroce {ours.get(key)}, rxe {rxe.get(key)})")
            rc = 2
        elif ours[key] < rxe[key]:
            print(f"{key}: LOWER sroce {ours[key]:#x} < rxe {rxe[key]:#x}")
            rc = rc or 1
        else:
            print(f"{key}: ok sroce {ours[key]} >= rxe {rxe[key]}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
