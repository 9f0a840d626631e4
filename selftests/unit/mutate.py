#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""mutate.py - mutation testing of the decision core against the unit suite.

For each file of kmod/core (every .c of sources.mk, plus ewma.h, whose
helpers are all inline), list the places where a one-token change alters
the logic:

  cmp    a comparison moved across its boundary (< <=, > >=) or negated
         (== !=)
  arith  an arithmetic, shift or bitwise operator swapped (+ -, * /, % *,
         << >>, & |, ^ |, += -=, ++ --)
  logic  && and || swapped, a logical ! dropped
  const  an integer constant plus or minus one
  stmt   an assignment or a call statement on a line of its own removed

then draw at most --per-file of them in a fixed pseudo-random order (the
seed and the file name make the order, so two runs draw the same mutants),
build each mutant against the unit tests (a copy of kmod/core with the one
change, compiled at -O1 without -Werror, linked with the test objects that
were compiled once) and run the unit binaries, the file's own test first,
until one fails (the mutant is killed) or all pass (it survived).  A mutant
that does not compile is not a mutant: it is skipped and the next one in
the order is drawn instead.  A binary that runs longer than its timeout
counts as a failure (a mutant that loops forever is caught).

A survivor listed in selftests/unit/mutate-equivalent.txt (reviewed: it
changes nothing a caller can reach) is reported as equivalent and not
counted.  Prints killed/total per file and writes a JSON report (every
mutant drawn: file, line, operator, original and mutated text, outcome,
the binary that killed it, its equivalence key).  Exit status 0 when every
file reaches --threshold, 1 when one does not, 2 on a setup error (the
unmutated suite must pass).

Not part of CI: `make mutate` runs it (Makefile); a full run (30 mutants
a file) takes 15 to 40 minutes on two cores, depending on the load.
"""
import argparse
import concurrent.futures
import json
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import time

TOP = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
CORE = os.path.join(TOP, 'kmod', 'core')
UNIT = os.path.join(TOP, 'selftests', 'unit')
HEADER_TARGETS = ['ewma.h']

# ---- tokens ---------------------------------------------------------------

TOKEN_RE = re.compile(r'''
    (?P<comment>/\*.*?\*/|//[^\n]*)
  | (?P<string>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
  | (?P<number>0[xX][0-9a-fA-F]+[uUlL]*|[0-9]+[uUlL]*)
  | (?P<ident>[A-Za-z_][A-Za-z_0-9]*)
  | (?P<op><<=|>>=|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||\+=|-=|\*=|/=|%=|&=|\|=|\^=|[-+*/%<>=!&|^~?:;,.(){}\[\]])
  | (?P<space>\s+)
  | (?P<other>.)
''', re.S | re.X)

KEYWORDS = {
    'if', 'else', 'for', 'while', 'do', 'return', 'switch', 'case', 'default',
    'break', 'continue', 'goto', 'sizeof', 'struct', 'union', 'enum', 'static',
    'const', 'inline', 'unsigned', 'signed', 'int', 'long', 'short', 'char',
    'void', 'bool', 'u8', 'u16', 'u32', 'u64', 's8', 's16', 's32', 's64',
    'typedef', 'extern', 'volatile', '__int128', '__uint128_t',
}

CMP = {'<': '<=', '<=': '<', '>': '>=', '>=': '>', '==': '!=', '!=': '=='}
ARITH = {'+': '-', '-': '+', '*': '/', '/': '*', '%': '*', '<<': '>>',
         '>>': '<<', '&': '|', '|': '&', '^': '|', '+=': '-=', '-=': '+=',
         '*=': '/=', '/=': '*=', '<<=': '>>=', '>>=': '<<=', '|=': '&=',
         '&=': '|=', '++': '--', '--': '++'}
LOGIC = {'&&': '||', '||': '&&'}

# a statement line that may be removed: an assignment or a call, alone on
# its line (not a declaration, not a return, not a control statement)
STMT_RE = re.compile(r'^(\s*)((?:[A-Za-z_][\w.\->\[\]* ]*?)\s*'
                     r'(?:=(?!=)|\+=|-=|\*=|/=|\|=|&=|<<=|>>=|\+\+|--)[^;]*'
                     r'|[A-Za-z_]\w*\s*\(.*\))\s*;\s*$')


def tokenize(src):
    """Tokens as (kind, start, end, text, preprocessor line?)."""
    toks = []
    pp_ends = []
    for m in re.finditer(r'^[ \t]*#(?:[^\n]*\\\n)*[^\n]*', src, re.M):
        pp_ends.append((m.start(), m.end(), m.group(0)))
    pi = 0
    for m in TOKEN_RE.finditer(src):
        kind = m.lastgroup
        if kind in ('space', 'comment'):
            continue
        s = m.start()
        while pi < len(pp_ends) and pp_ends[pi][1] <= s:
            pi += 1
        pp = None
        if pi < len(pp_ends) and pp_ends[pi][0] <= s < pp_ends[pi][1]:
            pp = pp_ends[pi][2]
        toks.append((kind, s, m.end(), m.group(0), pp))
    return toks


def is_operand_end(tok):
    kind, _, _, text, _ = tok
    if kind == 'number':
        return True
    if kind == 'ident':
        return text not in KEYWORDS
    return text in (')', ']', '++', '--')


def line_of(src, pos):
    return src.count('\n', 0, pos) + 1


def sites(src):
    """Every candidate mutant: dict(pos, end, op, old, new, line)."""
    out = []
    toks = tokenize(src)

    def add(start, end, op, new):
        bol = src.rfind('\n', 0, start) + 1
        eol = src.find('\n', start)
        # the line with its whitespace collapsed, and the token's place as
        # the count of non-blank characters before it: a key that survives
        # re-indentation and edits elsewhere in the file
        text = ' '.join(src[bol:eol if eol >= 0 else len(src)].split())
        col = len(re.sub(r'\s', '', src[bol:start]))
        out.append({'pos': start, 'end': end, 'op': op,
                    'old': src[start:end], 'new': new,
                    'line': line_of(src, start), 'text': text, 'col': col})

    for i, tok in enumerate(toks):
        kind, s, e, text, pp = tok
        prev = toks[i - 1] if i else None
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        if pp is not None:
            # constants of object-like #defines only
            if kind == 'number' and re.match(r'\s*#\s*define\s+\w+\s', pp):
                add_const(add, s, e, text)
            continue
        if kind == 'number':
            if prev and prev[3] == '[' and nxt and nxt[3] == ']':
                continue		# an array size or index: usually a compile error
            add_const(add, s, e, text)
        elif kind == 'op':
            if text in CMP:
                if text in ('<', '>') and not (prev and is_operand_end(prev)):
                    continue
                add(s, e, 'cmp', CMP[text])
            elif text in LOGIC:
                add(s, e, 'logic', LOGIC[text])
            elif text == '!' and nxt and (nxt[0] == 'ident' or nxt[3] == '('):
                add(s, e, 'logic', '')
            elif text in ('++', '--'):
                add(s, e, 'arith', ARITH[text])
            elif text in ARITH:
                binary = prev and is_operand_end(prev)
                if text in ('*', '&'):
                    binary = binary and nxt and nxt[3] not in (')', ',') and \
                        prev[3] not in ('++', '--')
                if binary or text.endswith('='):
                    add(s, e, 'arith', ARITH[text])
    # statement removal, line by line, outside preprocessor lines
    pos = 0
    for ln in src.split('\n'):
        m = STMT_RE.match(ln)
        if m and not ln.lstrip().startswith(('#', '*', '/')):
            head = re.match(r'\s*([A-Za-z_]\w*)', ln).group(1)
            if head not in KEYWORDS and not re.match(r'\s*[A-Za-z_]\w*\s+[A-Za-z_*]', ln):
                start = pos + len(m.group(1))
                end = pos + len(ln.rstrip())
                add(start, end, 'stmt', ';')
        pos += len(ln) + 1
    out.sort(key=lambda m: (m['pos'], m['op'], m['new']))
    return out


def add_const(add, s, e, text):
    m = re.match(r'(0[xX][0-9a-fA-F]+|[0-9]+)(.*)', text)
    digits, suffix = m.group(1), m.group(2)
    v = int(digits, 0)
    fmt = (lambda x: hex(x)) if digits[:2].lower() == '0x' else str
    add(s, e, 'const', fmt(v + 1) + suffix)
    if v > 0:
        add(s, e, 'const', fmt(v - 1) + suffix)


def apply(src, m):
    return src[:m['pos']] + m['new'] + src[m['end']:]

# ---- building and running -------------------------------------------------


def core_sources():
    srcs = []
    with open(os.path.join(CORE, 'sources.mk')) as f:
        for ln in f:
            m = re.match(r'\s*BLKISO_CORE_SRCS\s*\+=\s*(\S+)', ln)
            if m:
                srcs.append(m.group(1))
    return srcs


class Builder:
    def __init__(self, args):
        self.cc = args.cc
        self.work = os.path.abspath(args.workdir)
        self.ksrc = os.path.join(TOP, 'build', 'ksrc', 'tools', 'testing', 'selftests')
        self.srcs = core_sources()
        self.tests = sorted(f[:-2] for f in os.listdir(UNIT) if f.endswith('_test.c'))
        self.libs = sorted(f for f in os.listdir(UNIT)
                           if f.endswith('.c') and not f.endswith('_test.c'))
        self.timeouts = {}
        self.users = {}		# core header -> the sources that include it

    def cflags(self, core):
        return ['-O1', '-g0', '-std=gnu11', '-w', '-D_GNU_SOURCE', '-I' + core,
                '-I' + os.path.join(TOP, 'uapi'), '-I' + UNIT, '-isystem', self.ksrc]

    def run_cmd(self, cmd, cwd=None):
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        return p.returncode, p.stdout.decode(errors='replace')

    def compile_tree(self, core, objdir, what):
        """Compile core files (what: names) or test files from core/ into objdir."""
        os.makedirs(objdir, exist_ok=True)
        for name in what:
            src = os.path.join(core, name) if not name.endswith('_test.c') and \
                name not in self.libs else os.path.join(UNIT, name)
            rc, out = self.run_cmd([self.cc] + self.cflags(core) +
                                   ['-c', src, '-o', os.path.join(objdir, name[:-2] + '.o')])
            if rc:
                return out
        return None

    def link(self, core_objdir, test_objdir, bindir, tests=None):
        os.makedirs(bindir, exist_ok=True)
        core_objs = [os.path.join(core_objdir, s[:-2] + '.o') for s in self.srcs]
        lib_objs = [os.path.join(test_objdir, s[:-2] + '.o') for s in self.libs]
        for t in tests or self.tests:
            rc, out = self.run_cmd([self.cc, '-o', os.path.join(bindir, t),
                                    os.path.join(test_objdir, t + '.o')] +
                                   core_objs + lib_objs + ['-lpthread'])
            if rc:
                return out
        return None

    def baseline(self):
        base = os.path.join(self.work, 'base')
        shutil.rmtree(base, ignore_errors=True)
        err = self.compile_tree(CORE, os.path.join(base, 'core'), self.srcs) or \
            self.compile_tree(CORE, os.path.join(base, 'test'),
                              [t + '.c' for t in self.tests] + self.libs) or \
            self.link(os.path.join(base, 'core'), os.path.join(base, 'test'),
                      os.path.join(base, 'bin'))
        if err:
            sys.exit('mutate: the unmutated core does not build:\n' + err)
        for name in self.srcs + [t + '.c' for t in self.tests] + self.libs:
            src = os.path.join(CORE if name in self.srcs else UNIT, name)
            rc, out = self.run_cmd([self.cc] + self.cflags(CORE) + ['-MM', src])
            for dep in out.replace('\\\n', ' ').split()[1:]:
                dep = os.path.abspath(dep)
                if os.path.dirname(dep) == CORE and dep.endswith('.h'):
                    self.users.setdefault(os.path.basename(dep), set()).add(name)
        for t in self.tests:
            t0 = time.monotonic()
            rc = self.run_bin(os.path.join(base, 'bin', t), 600)
            dt = time.monotonic() - t0
            if rc != 0:
                print('mutate: %s fails on the unmutated core (status %s)' % (t, rc),
                      file=sys.stderr)
                sys.exit(2)
            self.timeouts[t] = max(10.0, 10 * dt)

    def tree(self, slot):
        """A directory that looks like the top of the tree to a test (some,
        like cli_test, run tools and write scratch files by relative path):
        links to everything but build/unit and build/results, which are its
        own, so that two mutants' tests never share a scratch file."""
        top = os.path.join(self.work, 'tree%s' % slot)
        if os.path.isdir(top):
            return top
        os.makedirs(os.path.join(top, 'build', 'unit'))
        os.makedirs(os.path.join(top, 'build', 'results'))
        for name in os.listdir(TOP):
            if name != 'build':
                os.symlink(os.path.join(TOP, name), os.path.join(top, name))
        for name in os.listdir(os.path.join(TOP, 'build')):
            if name not in ('unit', 'results', 'mutate'):
                os.symlink(os.path.join(TOP, 'build', name), os.path.join(top, 'build', name))
        return top

    @staticmethod
    def run_bin(path, timeout, cwd=TOP):
        """Exit status of one test binary, or 'timeout'.

        The harness runs each test in a child with a process group of its
        own, so a kill of the binary does not reach a test that loops: the
        CPU-time limit (inherited across fork) ends such a child, and every
        process still running this binary is killed by its pid at the end.
        """
        def limit():
            cpu = int(timeout) + 1
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        p = subprocess.Popen([path], cwd=cwd, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True,
                             preexec_fn=limit)
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            rc = 'timeout'
        kill_running(path)
        return rc

    def order(self, fname):
        """The file's own test first, then the others."""
        own = fname.split('.')[0] + '_test'
        return ([own] if own in self.tests else []) + [t for t in self.tests if t != own]

    def try_mutant(self, slot, fname, text):
        """Build and run one mutant in work/slot: 'invalid', 'survived' or killed by a test."""
        d = os.path.join(self.work, 'w%d' % slot)
        core = os.path.join(d, 'core')
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(CORE, core)
        with open(os.path.join(core, fname), 'w') as f:
            f.write(text)
        base = os.path.join(self.work, 'base')
        if fname.endswith('.c'):
            objdir = os.path.join(d, 'core-obj')
            os.makedirs(objdir)
            for s in self.srcs:
                if s != fname:
                    os.symlink(os.path.join(base, 'core', s[:-2] + '.o'),
                               os.path.join(objdir, s[:-2] + '.o'))
            if self.compile_tree(core, objdir, [fname]):
                return 'invalid', None
            testdir = os.path.join(base, 'test')
        else:		# a header: what includes it, the rest as built
            users = self.users.get(fname, set())
            objdir = os.path.join(d, 'core-obj')
            testdir = os.path.join(d, 'test-obj')
            for out, names, bdir in ((objdir, self.srcs, 'core'),
                                     (testdir, [t + '.c' for t in self.tests] + self.libs,
                                      'test')):
                os.makedirs(out)
                for n in names:
                    if n not in users:
                        os.symlink(os.path.join(base, bdir, n[:-2] + '.o'),
                                   os.path.join(out, n[:-2] + '.o'))
                if self.compile_tree(core, out, [n for n in names if n in users]):
                    return 'invalid', None
        # each binary is linked just before it runs: most mutants die in
        # the file's own test, and the others need not be linked at all
        for t in self.order(fname):
            if self.link(objdir, testdir, os.path.join(d, 'bin'), [t]):
                return 'invalid', None
            rc = self.run_bin(os.path.join(d, 'bin', t), self.timeouts[t], self.tree(slot))
            if rc != 0:
                return 'killed', t + ('' if rc != 'timeout' else ' (timeout)')
        return 'survived', None


def kill_running(path):
    """Kill (by pid) every process whose program is path: test children."""
    for pid in os.listdir('/proc'):
        if not pid.isdigit():
            continue
        try:
            exe = os.readlink('/proc/%s/exe' % pid)
        except OSError:
            continue
        if exe == path or exe == path + ' (deleted)':
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass


def equivalence_key(fname, m):
    return '\t'.join((fname, m['text'], str(m['col']), m['new']))


def load_equivalent(path):
    """Reviewed equivalent mutants: file, source line (stripped), column in
    it, replacement, reason; tab-separated, '#' comments."""
    keys = {}
    if not path or not os.path.exists(path):
        return keys
    with open(path) as f:
        for ln in f:
            if not ln.strip() or ln.startswith('#'):
                continue
            parts = ln.rstrip('\n').split('\t')
            if len(parts) != 5:
                sys.exit('mutate: %s: want 5 tab-separated fields: %r' % (path, ln))
            keys['\t'.join(parts[:4])] = parts[4]
    return keys


def run_file(builder, fname, args, pool):
    path = os.path.join(CORE, fname)
    with open(path) as f:
        src = f.read()
    cands = sites(src)
    rng = random.Random('%s:%s' % (args.seed, fname))
    rng.shuffle(cands)
    chosen, invalid, i = [], 0, 0
    while len(chosen) < args.per_file and i < len(cands):
        batch = cands[i:i + args.jobs]
        futs = [pool.submit(builder.try_mutant, k, fname, apply(src, m))
                for k, m in enumerate(batch)]
        for m, fut in zip(batch, futs):
            outcome, by = fut.result()
            if outcome == 'invalid':
                invalid += 1
                continue
            if len(chosen) < args.per_file:
                key = equivalence_key(fname, m)
                if outcome == 'survived' and key in args.equivalent:
                    outcome, by = 'equivalent', args.equivalent[key]
                m = dict(m, outcome=outcome, killed_by=by)
                chosen.append(m)
                if args.verbose:
                    print('  %s:%d %s %r -> %r: %s%s' % (
                        fname, m['line'], m['op'], m['old'], m['new'], outcome,
                        ' by ' + by if by else ''), flush=True)
        i += len(batch)
    killed = sum(1 for m in chosen if m['outcome'] == 'killed')
    equiv = sum(1 for m in chosen if m['outcome'] == 'equivalent')
    for m in chosen:
        m['equivalence_key'] = equivalence_key(fname, m)
        del m['pos'], m['end'], m['text'], m['col']
    counted = len(chosen) - equiv
    return {'file': 'kmod/core/' + fname, 'sites': len(cands), 'drawn': len(chosen),
            'equivalent': equiv, 'total': counted, 'killed': killed,
            'invalid_skipped': invalid,
            'score': killed / counted if counted else 1.0,
            'mutants': chosen}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--per-file', type=int, default=30,
                    help='mutants drawn per file (default 30)')
    ap.add_argument('--seed', default='17', help='order of the draw (default 17)')
    ap.add_argument('--jobs', type=int, default=2, help='mutants built at once (default 2)')
    ap.add_argument('--threshold', type=float, default=0.9,
                    help='fraction of killed mutants each file must reach (default 0.9)')
    ap.add_argument('--cc', default=os.environ.get('CC', 'gcc'))
    ap.add_argument('--workdir', default=os.path.join(TOP, 'build', 'mutate'))
    ap.add_argument('--json', default=None,
                    help='report path (default WORKDIR/report.json)')
    ap.add_argument('--equivalent', default=os.path.join(UNIT, 'mutate-equivalent.txt'),
                    help='reviewed equivalent mutants, not counted (default '
                    'selftests/unit/mutate-equivalent.txt)')
    ap.add_argument('--list', action='store_true', help='print the candidate sites and exit')
    ap.add_argument('-v', '--verbose', action='store_true', help='print every mutant')
    ap.add_argument('files', nargs='*', help='core files (default: sources.mk and ewma.h)')
    args = ap.parse_args()

    args.equivalent = load_equivalent(args.equivalent)
    builder = Builder(args)
    files = args.files or builder.srcs + HEADER_TARGETS
    files = [os.path.basename(f) for f in files]
    if args.list:
        for fname in files:
            with open(os.path.join(CORE, fname)) as f:
                src = f.read()
            for m in sites(src):
                print('%s:%d %s %r -> %r' % (fname, m['line'], m['op'], m['old'], m['new']))
        return 0
    os.makedirs(builder.work, exist_ok=True)
    t0 = time.monotonic()
    builder.baseline()
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for fname in files:
            r = run_file(builder, fname, args, pool)
            results.append(r)
            print('%-26s %3d/%-3d killed  %5.1f %%  (%d sites, %d not compiling skipped, '
                  '%d listed equivalent)' % (
                      r['file'], r['killed'], r['total'], 100 * r['score'], r['sites'],
                      r['invalid_skipped'], r['equivalent']), flush=True)
            for m in r['mutants']:
                if m['outcome'] == 'survived':
                    print('    survived %s:%d %s %r -> %r' % (
                        fname, m['line'], m['op'], m['old'], m['new']), flush=True)
                    if args.verbose:
                        print('      key: %s' % m['equivalence_key'].replace('\t', '<TAB>'))
    tot_k = sum(r['killed'] for r in results)
    tot_n = sum(r['total'] for r in results)
    below = [r['file'] for r in results if r['score'] < args.threshold]
    report = {'seed': args.seed, 'per_file': args.per_file, 'threshold': args.threshold,
              'seconds': round(time.monotonic() - t0, 1), 'killed': tot_k, 'total': tot_n,
              'below_threshold': below, 'files': results}
    out = args.json or os.path.join(builder.work, 'report.json')
    with open(out, 'w') as f:
        json.dump(report, f, indent=1)
    print('total %d/%d killed (%.1f %%), %d file(s) below %.0f %%, %.0f s; report %s' % (
        tot_k, tot_n, 100.0 * tot_k / max(tot_n, 1), len(below), 100 * args.threshold,
        report['seconds'], out))
    return 1 if below else 0


if __name__ == '__main__':
    sys.exit(main())
