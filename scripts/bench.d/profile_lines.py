#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Where in a module's source the samples of a perf profile fall.

Reads `perf script -G -F ip,sym,symoff` on stdin (one line per sample,
"address symbol+0xoffset"), keeps the samples of the functions of MODULE.ko (as nm lists its
.text), and maps each to its source line with addr2line, inlined frames
included: the function a profile names (sroce_req_run, say) is usually
many inlined steps, and this says which of them the samples are in.

Usage: profile_lines.py MODULE.ko [TOP]
The shares printed are of the samples outside the idle loop (the busy
CPU), as scripts/bench-guest's profile_split gives them.
"""
import collections
import re
import subprocess
import sys

IDLE = {'native_safe_halt', 'default_idle'}


def text_symbols(ko):
    """Function name -> start address in .text (relocatable: 0-based)."""
    out = subprocess.run(['nm', '--defined-only', ko], capture_output=True,
                         text=True, check=True).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in 'tT':
            syms[parts[2]] = int(parts[0], 16)
    return syms


def source_lines(ko, addrs):
    """Address -> (innermost function, file:line, outermost function)."""
    if not addrs:
        return {}
    proc = subprocess.run(['addr2line', '-e', ko, '-j', '.text', '-a', '-f',
                           '-i', '-C'], input=''.join('%x\n' % a for a in addrs),
                          capture_output=True, text=True, check=True)
    result, cur, frames = {}, None, []

    def close():
        if cur is not None and frames:
            inner_fn, inner_at = frames[0]
            result[cur] = (inner_fn, inner_at, frames[-1][0])

    lines = proc.stdout.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith('0x'):
            close()
            cur, frames = int(lines[i], 16), []
            i += 1
            continue
        fn = lines[i]
        at = lines[i + 1] if i + 1 < len(lines) else '??:0'
        at = re.sub(r' \(discriminator \d+\)', '', at)
        at = at.split('/kernel/')[-1] if '/kernel/' in at else at
        frames.append((fn, at))
        i += 2
    close()
    return result


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    ko = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 25
    syms = text_symbols(ko)
    samples = collections.Counter()
    busy = 0
    for line in sys.stdin:
        if not line.strip():
            continue
        m = re.search(r'(\S+)\+0x([0-9a-f]+)', line)
        if m and m.group(1) in IDLE:
            continue
        busy += 1
        if m and m.group(1) in syms:
            samples[syms[m.group(1)] + int(m.group(2), 16)] += 1
    if not samples or busy <= 0:
        print('# no samples in %s' % ko)
        return
    where = source_lines(ko, list(samples))
    by_line = collections.Counter()
    by_inline = collections.Counter()
    for addr, n in samples.items():
        inner, at, outer = where.get(addr, ('??', '??:0', '??'))
        by_line['%s  %s (in %s)' % (at, inner, outer)] += n
        by_inline[inner] += n
    total = sum(samples.values())
    print('# %s: %d samples, %.1f %% of the busy samples' %
          (ko.rsplit('/', 1)[-1], total, 100.0 * total / busy))
    print('# by function, inlined ones counted apart (% of the busy samples):')
    for fn, n in by_inline.most_common(top):
        print('#   %6.2f %%  %s' % (100.0 * n / busy, fn))
    print('# by source line:')
    for key, n in by_line.most_common(top):
        print('#   %6.2f %%  %s' % (100.0 * n / busy, key))


if __name__ == '__main__':
    main()
