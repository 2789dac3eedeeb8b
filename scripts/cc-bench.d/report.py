#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""scripts/cc-bench.d/report.py: figures and chart from a cc-bench run.

Reads DIR/results.tsv and DIR/rates.tsv (written by scripts/cc-bench.d/guest),
prints the table, writes DIR/summary.txt and DIR/rates.png (gnuplot).

Usage: report.py DIR
"""
import os
import statistics
import subprocess
import sys

PHASES = [('dcqcn', 'sroce, DCQCN'), ('nocc', 'sroce, no CC'), ('rxe', 'rdma_rxe')]


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def load(d):
    res, rates = {}, {}
    with open(os.path.join(d, 'results.tsv')) as f:
        for line in f:
            p = line.rstrip('\n').split('\t')
            if len(p) == 3:
                res.setdefault(p[0], {})[p[1]] = p[2]
    with open(os.path.join(d, 'rates.tsv')) as f:
        for line in f:
            p = line.split()
            if len(p) == 5:
                rates.setdefault(p[0], []).append([float(x) for x in p[1:]])
    return res, rates


def delta(r, key):
    """Counter difference over the phase: r1.key - r0.key (receiver) etc."""
    a, b = num(r.get(key.replace('@', '0'))), num(r.get(key.replace('@', '1')))
    return None if a is None or b is None else b - a


def jain(xs):
    xs = [x for x in xs if x is not None]
    if not xs or sum(x * x for x in xs) == 0:
        return None
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs))


def utilisation(samples, rate):
    """Bytes received behind the bottleneck over its capacity, while both
    bulk flows run: from the first to the last sample in which both
    senders transmitted (a guest on a busy host takes seconds to connect
    them, and they end at different times).  Samples are weighted by
    their length: a late sampler makes long ones."""
    both = [k for k, s in enumerate(samples)
            if k > 0 and s[1] > 0.01 * rate and s[2] > 0.01 * rate]
    if not both:
        return None
    span = samples[both[0]:both[-1] + 1]
    secs = [s[0] - samples[k - 1][0] for k, s in zip(range(both[0], both[-1] + 1), span)]
    if sum(secs) <= 0:
        return None
    return sum(s[3] * t for s, t in zip(span, secs)) / sum(secs) / rate


def figures(res, rates, rate, duration):
    out = {}
    for ph, _ in PHASES:
        r = res.get(ph)
        if not r:
            continue
        f = {}
        # perftest BW average is MiB/s of payload
        good = [num(r.get(f'bulk{i}.MBps')) for i in (1, 2)]
        good = [g * 8 * 1.048576 if g is not None else None for g in good]
        f['goodput'] = good
        f['jain'] = jain(good)
        f['util'] = utilisation(rates.get(ph, []), rate)
        f['drops'] = num(r.get('q.dropped'))
        f['marks'] = num(r.get('q.marked'))
        retx = [delta(r, f's{i}@.req_retransmits') for i in (1, 2)]
        f['retx'] = sum(retx) if None not in retx else None
        f['dups'] = delta(r, 'r@.resp_duplicates')
        f['seq_naks'] = delta(r, 'r@.resp_seq_naks')
        f['cnps'] = delta(r, 'r@.tx_cnp')
        cuts = [delta(r, f's{i}@.cc_rate_cuts') for i in (1, 2)]
        f['cuts'] = sum(cuts) if None not in cuts else None
        f['lat_typ'] = num(r.get('lat.typ_us'))
        f['lat_p99'] = num(r.get('lat.p99_us'))
        f['exits'] = [r.get('bulk1.exit'), r.get('bulk2.exit'), r.get('lat.exit')]
        out[ph] = f
    return out


def fmt(v, spec='.0f'):
    if v is None:
        return '-'
    if isinstance(v, list):
        return '/'.join(fmt(x, spec) for x in v)
    return format(v, spec)


def table(figs, rate, duration):
    rows = [
        ('goodput per bulk flow (Mbit/s)', 'goodput', '.2f'),
        ("Jain's fairness index", 'jain', '.3f'),
        ('link utilisation (of %g Mbit/s, both bulk flows on)' % rate, 'util', '.1%'),
        ('bottleneck drops (packets)', 'drops', '.0f'),
        ('bottleneck CE marks (packets)', 'marks', '.0f'),
        ('sender retransmitted packets', 'retx', '.0f'),
        ('duplicates seen by the receiver', 'dups', '.0f'),
        ('sequence NAKs sent by the receiver', 'seq_naks', '.0f'),
        ('CNPs sent by the receiver', 'cnps', '.0f'),
        ('DCQCN rate cuts at the senders', 'cuts', '.0f'),
        ('64 B write latency, typical (us)', 'lat_typ', '.0f'),
        ('64 B write latency, 99th percentile (us)', 'lat_p99', '.0f'),
        ('exit codes bulk1/bulk2/latency', 'exits', ''),
    ]
    phases = [(p, n) for p, n in PHASES if p in figs]
    w0 = max(len(r[0]) for r in rows)
    ws = [max(len(n), 14) for _, n in phases]
    lines = ['%-*s  %s' % (w0, 'figure', '  '.join('%-*s' % (w, n) for (_, n), w in zip(phases, ws)))]
    lines.append('-' * len(lines[0]))
    for name, key, spec in rows:
        cells = []
        for (p, _), w in zip(phases, ws):
            v = figs[p][key]
            cells.append('%-*s' % (w, '/'.join(str(x) for x in v) if key == 'exits' else fmt(v, spec)))
        lines.append('%-*s  %s' % (w0, name, '  '.join(cells)))
    return '\n'.join(lines)


def chart(d, rates, rate):
    phases = [(p, n) for p, n in PHASES if p in rates]
    if not phases:
        return False
    data = os.path.join(d, 'rates.dat')
    with open(data, 'w') as f:
        for p, _ in phases:
            for s in rates[p]:
                f.write('%.2f %.3f %.3f %.3f\n' % tuple(s))
            f.write('\n\n')
    gp = ['set terminal pngcairo size 1200,%d font ",10"' % (300 * len(phases)),
          'set output "%s"' % os.path.join(d, 'rates.png'),
          'set multiplot layout %d,1' % len(phases),
          'set xlabel "time (s)"', 'set ylabel "Mbit/s"', 'set key outside right',
          'set yrange [0:%g]' % (rate * 1.6), 'set grid']
    for i, (p, n) in enumerate(phases):
        gp += ['set title "%s: per-flow rates through a %g Mbit/s bottleneck"' % (n, rate),
               'plot "%s" index %d using 1:2 with lines lw 2 title "sender 1 (bulk + 64 B flow)", '
               '"" index %d using 1:3 with lines lw 2 title "sender 2 (bulk)", '
               '"" index %d using 1:4 with lines lw 1 dt 2 title "received (bottleneck)", '
               '%g with lines lc "black" dt 3 title "capacity"' % (data, i, i, i, rate)]
    gp.append('unset multiplot')
    r = subprocess.run(['gnuplot'], input='\n'.join(gp) + '\n', text=True, capture_output=True)
    if r.returncode != 0:
        print('report: gnuplot failed: ' + r.stderr.strip(), file=sys.stderr)
        return False
    return True


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    d = sys.argv[1]
    res, rates = load(d)
    rate = num(res.get('all', {}).get('rate_mbit')) or 20
    duration = num(res.get('all', {}).get('duration_s')) or 20
    figs = figures(res, rates, rate, duration)
    if not figs:
        print('report: no phase completed', file=sys.stderr)
        return 1
    text = table(figs, rate, duration)
    with open(os.path.join(d, 'summary.txt'), 'w') as f:
        f.write(text + '\n')
    print(text)
    if chart(d, rates, rate):
        print('\nchart: ' + os.path.join(d, 'rates.png'))
    return 0


if __name__ == '__main__':
    sys.exit(main())
