#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Sum an ftrace function_graph trace into a call tree per message.

Usage: call_tree.py TRACE MESSAGES [MIN_US]

TRACE is /sys/kernel/tracing/trace of a function_graph run (graph rooted at
the command's entry, e.g. set_graph_function=ib_uverbs_write, irqs not
traced) during which MESSAGES messages were posted.  Prints each call path
(indented by depth) whose inclusive time per message is at least MIN_US
(default 0.8) microseconds, with its calls per message, children sorted by
time.  Each CPU's trace lines are nested on their own stack; a function is
counted where it returns ("}" with its duration) or, for a leaf, on its
one-line entry "name();" with a duration.
"""
import collections
import re
import sys

LINE = re.compile(r'^\s*(\d+)\)\s*(?:[+!#*@$]\s*)?([0-9.]+) us\s*\|(.*)$')
LINE_NODUR = re.compile(r'^\s*(\d+)\)\s*(?:[+!#*@$]\s*)?\|(.*)$')
LEAF = re.compile(r'([A-Za-z0-9_.]+)\(\);')


def parse(path):
    stacks = collections.defaultdict(list)  # CPU -> names of open calls
    total = collections.defaultdict(float)  # call path -> us
    calls = collections.Counter()           # call path -> count
    with open(path, errors='replace') as f:
        for line in f:
            m = LINE.match(line)
            if m:
                cpu, dur, body = m.group(1), float(m.group(2)), m.group(3).strip()
            else:
                m = LINE_NODUR.match(line)
                if not m:
                    continue
                cpu, dur, body = m.group(1), None, m.group(2).strip()
            stack = stacks[cpu]
            if body.endswith('() {'):
                stack.append(body[:-4])
            elif body.startswith('}'):
                if not stack:
                    continue  # the trace began inside this call
                key = tuple(stack)
                stack.pop()
                if dur is not None:
                    total[key] += dur
                    calls[key] += 1
            else:
                leaf = LEAF.match(body)
                if leaf and dur is not None:
                    key = tuple(stack + [leaf.group(1)])
                    total[key] += dur
                    calls[key] += 1
    return total, calls


def show(total, calls, msgs, min_us, prefix=(), depth=0):
    kids = [p for p in total if len(p) == len(prefix) + 1 and p[:-1] == prefix]
    for p in sorted(kids, key=lambda p: -total[p]):
        if total[p] / msgs < min_us:
            continue
        print('%-50s %7.2f calls/msg %9.2f us/msg' %
              ('  ' * depth + p[-1], calls[p] / msgs, total[p] / msgs))
        show(total, calls, msgs, min_us, p, depth + 1)


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__.split('\n\n')[1])
    msgs = int(sys.argv[2])
    min_us = float(sys.argv[3]) if len(sys.argv) == 4 else 0.8
    if msgs <= 0:
        sys.exit('call_tree.py: MESSAGES must be positive')
    total, calls = parse(sys.argv[1])
    if not total:
        sys.exit('call_tree.py: no function_graph lines in ' + sys.argv[1])
    show(total, calls, msgs, min_us)


if __name__ == '__main__':
    main()
