#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""scripts/cc-bench.d/model.py: a packet-level model of the cc-bench incast.

N senders paced by DCQCN as kernel/cc.c does it (cut with alpha, alpha
timer, rate timer and byte counter with fast recovery, additive and hyper
increase, 4 KB pacing credit) share one bottleneck: a FIFO drained at RATE,
RED with ECN on the average queue (weight 1/8 per packet, as tc computes it
for burst 8), CNPs at most one per sender per CNP interval, a fixed
one-way delay for marks and CNPs.  No CPU limit, no guest stalls: it shows
what the parameters themselves allow, which is how the packet times of
scripts/cc-bench.d/guest were chosen.

Usage: model.py [--rate MBIT] [--senders N] [--seconds S] [--delay-ms D]
                [--cnp-pt N] [--timer-pt N] [--alpha-pt N] [--g G]
Prints utilisation, Jain's index, drops, marks and CNPs.
"""
import argparse
import random


def run(a):
    random.seed(1)
    c = a.rate * 1e6                       # bit/s
    pkt = 1100                             # bytes on the wire
    pt = pkt * 8 / c                       # packet time, s
    cnp_int, t_rate, k_alpha = a.cnp_pt * pt, a.timer_pt * pt, a.alpha_pt * pt
    r_ai, r_hai, r_min, line = c / 100, c / 40, c / 100, c
    byte_counter, f_rec, g = 32768, 5, a.g
    q_min, q_max, q_limit, p_max, w = 5000, 25000, 64000, 0.1, 1 / 8
    n, dt = a.senders, 20e-6
    rc, rt = [line] * n, [line] * n
    alpha, ts, bs, by = [1.0] * n, [0] * n, [0] * n, [0] * n
    a_stamp, r_stamp, nxt, last_cnp = [None] * n, [0.0] * n, [0.0] * n, [None] * n
    queue, qbytes, avg, credit = [], 0, 0.0, 0.0
    cnps_in, marks_in = [], []
    delivered, drops, marks, cnps = [0] * n, 0, 0, 0

    def increase(i):
        if max(ts[i], bs[i]) > f_rec:
            rt[i] += r_hai if min(ts[i], bs[i]) > f_rec else r_ai
        rt[i] = min(rt[i], line)
        rc[i] = min((rt[i] + rc[i]) / 2, line)

    def decay(i, t):
        k = int((t - a_stamp[i]) / k_alpha)
        if k:
            alpha[i] *= (1 - g) ** min(k, 4096)
            a_stamp[i] += k * k_alpha

    for s in range(int(a.seconds / dt)):
        t = s * dt
        while cnps_in and cnps_in[0][0] <= t:
            i = cnps_in.pop(0)[1]
            if a_stamp[i] is not None:
                decay(i, t)
            rt[i] = rc[i]
            rc[i] = max(rc[i] * (1 - alpha[i] / 2), r_min)
            alpha[i] = (1 - g) * alpha[i] + g
            ts[i] = bs[i] = by[i] = 0
            a_stamp[i] = r_stamp[i] = t
        while marks_in and marks_in[0][0] <= t:
            i = marks_in.pop(0)[1]
            if last_cnp[i] is None or t - last_cnp[i] >= cnp_int:
                last_cnp[i] = t
                cnps += 1
                cnps_in.append((t + a.delay_ms / 1e3, i))
        for i in range(n):
            if a_stamp[i] is not None:
                decay(i, t)
                k = int((t - r_stamp[i]) / t_rate)
                r_stamp[i] += k * t_rate
                for _ in range(k):
                    if rc[i] >= line:
                        break
                    ts[i] += 1
                    increase(i)
            if nxt[i] > t:
                continue
            nxt[i] = max(nxt[i], t - 4096 * 8 / rc[i]) + pkt * 8 / rc[i]
            by[i] += pkt
            while by[i] >= byte_counter and rc[i] < line:
                by[i] -= byte_counter
                bs[i] += 1
                increase(i)
            avg = (1 - w) * avg + w * qbytes
            if qbytes + pkt > q_limit:
                drops += 1
                continue
            mark = avg >= q_max or (avg >= q_min and
                                    random.random() < p_max * (avg - q_min) / (q_max - q_min))
            marks += mark
            queue.append((i, mark))
            qbytes += pkt
        credit = min(credit + c / 8 * dt, 2 * pkt) if queue else 0.0
        while queue and credit >= pkt:
            i, mark = queue.pop(0)
            qbytes -= pkt
            credit -= pkt
            delivered[i] += pkt
            if mark:
                marks_in.append((t + a.delay_ms / 1e3, i))
    rates = [b * 8 / a.seconds for b in delivered]
    jain = sum(rates) ** 2 / (n * sum(r * r for r in rates))
    print('utilisation %.1f %%  Jain %.3f  drops %d  marks %d  CNPs %d' %
          (100 * sum(rates) / c, jain, drops, marks, cnps))


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--rate', type=float, default=10, help='bottleneck, Mbit/s')
    p.add_argument('--senders', type=int, default=2)
    p.add_argument('--seconds', type=float, default=6)
    p.add_argument('--delay-ms', type=float, default=2, help='one-way delay of marks and CNPs')
    p.add_argument('--cnp-pt', type=float, default=27, help='CNP interval, packet times')
    p.add_argument('--timer-pt', type=float, default=14, help='rate timer T, packet times')
    p.add_argument('--alpha-pt', type=float, default=30, help='alpha timer K, packet times')
    p.add_argument('--g', type=float, default=1 / 256)
    run(p.parse_args())


if __name__ == '__main__':
    main()
