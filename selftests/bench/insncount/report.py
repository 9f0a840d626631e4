#!/usr/bin/env python3
"""report.py - guest instructions per read from insncount runs (profile.sh).

Each run directory holds counts (the plugin's "<hex address> <count>"
lines), kallsyms and modules.  Prints the kernel's instructions and
blkiso's own functions per read (--per write: per buffered write) for each
run, every function's difference to the --base run (default ovh-linear) if
there is one, and the requested module functions instruction by
instruction with their calls (objdump of blkiso.ko, aligned by the
function's kallsyms address)."""
import argparse
import bisect
import collections
import os
import re
import subprocess

OWN = ('dm_per_bio_data', 'bio_blkcg_css')


def load(run):
    syms = []
    with open(os.path.join(run, 'kallsyms')) as f:
        for line in f:
            p = line.split()
            if int(p[0], 16):
                syms.append((int(p[0], 16), p[2], '[blkiso]' in line))
    syms.sort()
    addrs = [a for a, _, _ in syms]
    per = collections.Counter()
    ins = {}
    with open(os.path.join(run, 'counts')) as f:
        for line in f:
            va, c = line.split()
            va, c = int(va, 16), int(c)
            i = bisect.bisect_right(addrs, va) - 1
            per[syms[i][1] if i >= 0 else '?'] += c
            ins[va] = c
    return syms, per, ins


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--reads', type=int, default=20000)
    ap.add_argument('--per', default='read')
    ap.add_argument('--base', default='ovh-linear')
    ap.add_argument('--ko')
    ap.add_argument('--func', action='append', default=[])
    ap.add_argument('runs', nargs='+')
    a = ap.parse_args()
    n = a.reads
    data = {r: load(r) for r in a.runs}
    for r, (syms, per, _) in data.items():
        mod = {s for _, s, m in syms if m}
        own = {k: v / n for k, v in per.items()
               if (k in mod or k in OWN) and v >= n}
        print('%s: kernel %.0f per %s; blkiso own %.1f per %s: %s' % (
            os.path.basename(r), sum(per.values()) / n, a.per, sum(own.values()), a.per,
            ' '.join('%s=%.1f' % kv for kv in
                     sorted(own.items(), key=lambda kv: -kv[1]))))
    base = [r for r in a.runs if os.path.basename(r) == a.base]
    for r in a.runs:
        if not base or r == base[0]:
            continue
        lp, rp = data[base[0]][1], data[r][1]
        rows = sorted(((rp[k] - lp[k]) / n, k) for k in set(lp) | set(rp))
        rows.sort(key=lambda x: -abs(x[0]))
        print('%s - %s, per %s (boot noise included):' %
              (os.path.basename(r), a.base, a.per))
        for d, k in rows[:25]:
            print('  %8.1f %s' % (d, k))
    for r, (syms, per, ins) in data.items():
        where = {s: addr for addr, s, m in syms if m}
        for fn in a.func:
            calls = ins.get(where.get(fn), 0)
            print('%s %s: %.2f per %s; %d calls, %.1f per call' % (
                os.path.basename(r), fn, per[fn] / n, a.per, calls,
                per[fn] / calls if calls else 0))
    if not a.func or not a.ko:
        return
    dis = subprocess.run(['objdump', '-d', '--no-show-raw-insn', a.ko],
                         capture_output=True, text=True, check=True).stdout
    for r, (syms, _, ins) in data.items():
        if os.path.basename(r).endswith('-before'):
            continue	# another module: the objdump above is not its code
        where = {s: addr for addr, s, m in syms if m}
        for fn in a.func:
            m = re.search(r'^([0-9a-f]+) <%s>:\n(.*?)\n\n' % re.escape(fn),
                          dis, re.S | re.M)
            if not m or fn not in where:
                continue
            base_off, tot, calls = int(m.group(1), 16), 0.0, None
            print('== %s %s' % (os.path.basename(r), fn))
            for line in m.group(2).split('\n'):
                mm = re.match(r'\s+([0-9a-f]+):\s+(.*)', line)
                if not mm:
                    continue
                c = ins.get(where[fn] + int(mm.group(1), 16) - base_off, 0) / n
                if calls is None:
                    calls = c * n	# the entry instruction's count
                tot += c
                if c:
                    print('  %6.2f %5x  %s' % (c, int(mm.group(1), 16) - base_off,
                                             mm.group(2)))
            print('  total %.1f per %s; %d calls, %.1f per call' % (
                tot, a.per, calls or 0, tot * n / calls if calls else 0))


if __name__ == '__main__':
    main()
