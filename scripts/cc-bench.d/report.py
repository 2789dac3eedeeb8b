#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""scripts/cc-bench.d/report.py: figures and chart from a cc-bench run.

Reads DIR/results.tsv and DIR/rates.tsv (written by scripts/cc-bench.d/guest)
and DIR/hostload.tsv (scripts/cc-bench), prints the table, writes
DIR/summary.txt and DIR/rates.png (gnuplot).

Usage: report.py DIR
       report.py --figures DIR   one "phase figure value" line per figure
                                 (for selftests/cc.sh; no chart)
"""
import os
import statistics
import subprocess
import sys

PHASES = [('free', 'no bottleneck'), ('dcqcn', 'sroce, DCQCN'), ('nocc', 'sroce, no CC'),
          ('rxe', 'rdma_rxe')]


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
    load = []
    try:
        with open(os.path.join(d, 'hostload.tsv')) as f:
            for line in f:
                p = line.split()
                if len(p) == 4:
                    load.append([float(x) for x in p])
    except OSError:
        pass
    qstats = {}
    try:
        with open(os.path.join(d, 'qstats.tsv')) as f:
            for line in f:
                p = line.split()
                if len(p) == 4:
                    qstats.setdefault(p[0], []).append([float(x) for x in p[1:]])
    except OSError:
        pass
    return res, rates, load, qstats


def host_load(load, r):
    """Mean 1-minute load average of the host during the phase (the
    guest's clock is the host's, set at boot), else over the whole run."""
    t0, t1 = num(r.get('t_start')), num(r.get('t_end'))
    xs = [s[1] for s in load if t0 is not None and t1 is not None and t0 <= s[0] <= t1]
    if not xs:
        xs = [s[1] for s in load]
    return statistics.mean(xs) if xs else None


def delta(r, key):
    """Counter difference over the phase: r1.key - r0.key (receiver) etc."""
    a, b = num(r.get(key.replace('@', '0'))), num(r.get(key.replace('@', '1')))
    return None if a is None or b is None else b - a


def jain(xs):
    xs = [x for x in xs if x is not None]
    if not xs or sum(x * x for x in xs) == 0:
        return None
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs))


def both_on(samples, rate):
    """The samples from the first to the last in which both senders
    transmitted, with their lengths."""
    both = [k for k, s in enumerate(samples)
            if k > 0 and s[1] > 0.01 * rate and s[2] > 0.01 * rate]
    if not both:
        return [], []
    span = samples[both[0]:both[-1] + 1]
    secs = [s[0] - samples[k - 1][0] for k, s in zip(range(both[0], both[-1] + 1), span)]
    return span, secs


def received(samples, rate):
    """Mean rate received behind the bottleneck while both flows ran."""
    span, secs = both_on(samples, rate)
    if sum(secs) <= 0:
        return None
    return sum(s[3] * t for s, t in zip(span, secs)) / sum(secs)


def utilisation(samples, rate):
    """Bytes received behind the bottleneck over its capacity, while both
    bulk flows run: from the first to the last sample in which both
    senders transmitted (a guest on a busy host takes seconds to connect
    them, and they end at different times).  Samples are weighted by
    their length: a late sampler makes long ones."""
    rx = received(samples, rate)
    return None if rx is None else rx / rate


def figures(res, rates, load, rate, duration):
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
        f['rx'] = received(rates.get(ph, []), rate)
        # Without a bottleneck there is no capacity to utilise.
        f['util'] = utilisation(rates.get(ph, []), rate) if ph != 'free' else None
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
        f['load'] = host_load(load, r)
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
        ('received behind the bottleneck (Mbit/s, both bulk flows on)', 'rx', '.2f'),
        ('link utilisation (of %g Mbit/s, both bulk flows on)' % rate, 'util', '.1%'),
        ('bottleneck drops (packets)', 'drops', '.0f'),
        ('bottleneck CE marks (packets)', 'marks', '.0f'),
        ('sender retransmitted packets', 'retx', '.0f'),
        ('duplicates seen by the receiver', 'dups', '.0f'),
        ('sequence NAKs sent by the receiver', 'seq_naks', '.0f'),
        ('CNPs sent by the receiver', 'cnps', '.0f'),
        ('DCQCN rate cuts at the senders', 'cuts', '.0f'),
        ('64 B send latency, typical (us)', 'lat_typ', '.0f'),
        ('64 B send latency, 99th percentile (us)', 'lat_p99', '.0f'),
        ('exit codes bulk1/bulk2/latency', 'exits', ''),
        ('host load average (1 min, mean over the phase)', 'load', '.1f'),
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


def chart(d, rates, qstats, rate):
    phases = [(p, n) for p, n in PHASES if p in rates]
    if not phases:
        return False
    data = os.path.join(d, 'rates.dat')
    with open(data, 'w') as f:
        for p, _ in phases:
            for s in rates[p]:
                f.write('%.2f %.3f %.3f %.3f\n' % tuple(s))
            f.write('\n\n')
    qdata = os.path.join(d, 'qstats.dat')
    with open(qdata, 'w') as f:
        for p, _ in phases:
            for s in qstats.get(p, []) or [[0, 0, 0]]:
                f.write('%.2f %d %d\n' % tuple(s))
            f.write('\n\n')
    gp = ['set terminal pngcairo noenhanced size 1200,%d font ",10"' % (300 * len(phases)),
          'set output "%s"' % os.path.join(d, 'rates.png'),
          'set multiplot layout %d,1' % len(phases),
          'set xlabel "time (s)"', 'set ylabel "Mbit/s"', 'set key outside right',
          'set y2label "packets dropped (total)"', 'set y2tics', 'set y2range [0:*]',
          'set grid']
    for i, (p, n) in enumerate(phases):
        if p == 'free':
            gp += ['set yrange [0:*]', 'set title "%s: per-flow rates, the guest\'s own limit"' % n]
        else:
            gp += ['set yrange [0:%g]' % (rate * 1.6),
                   'set title "%s: per-flow rates through a %g Mbit/s bottleneck"' % (n, rate)]
        gp += [
               'plot "%s" index %d using 1:2 with lines lw 2 title "sender 1 (bulk + 64 B flow)", '
               '"" index %d using 1:3 with lines lw 2 title "sender 2 (bulk)", '
               '"" index %d using 1:4 with lines lw 1 dt 2 title "received (bottleneck)", '
               '"%s" index %d using 1:2 axes x1y2 with steps lc "red" title "bottleneck drops"'
               % (data, i, i, i, qdata, i) +
               ('' if p == 'free' else ', %g with lines lc "black" dt 3 title "capacity"' % rate)]
    gp.append('unset multiplot')
    r = subprocess.run(['gnuplot'], input='\n'.join(gp) + '\n', text=True, capture_output=True)
    if r.returncode != 0:
        print('report: gnuplot failed: ' + r.stderr.strip(), file=sys.stderr)
        return False
    return True


def main():
    args = sys.argv[1:]
    only_figures = args[:1] == ['--figures']
    if only_figures:
        args = args[1:]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    d = args[0]
    res, rates, hload, qstats = load(d)
    rate = num(res.get('all', {}).get('rate_mbit')) or 20
    duration = num(res.get('all', {}).get('duration_s')) or 20
    figs = figures(res, rates, hload, rate, duration)
    if not figs:
        print('report: no phase completed', file=sys.stderr)
        return 1
    if only_figures:
        for ph, f in figs.items():
            for k, v in f.items():
                if isinstance(v, list):
                    v = '/'.join('-' if x is None else str(x) for x in v)
                print('%s %s %s' % (ph, k, '-' if v is None else v))
        return 0
    text = table(figs, rate, duration)
    with open(os.path.join(d, 'summary.txt'), 'w') as f:
        f.write(text + '\n')
    print(text)
    if chart(d, rates, qstats, rate):
        print('\nchart: ' + os.path.join(d, 'rates.png'))
    return 0


if __name__ == '__main__':
    sys.exit(main())
