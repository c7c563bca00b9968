#!/usr/bin/env python3
"""progs.py — mutational fuzzing of whole programs: every filter and renderer
in a sanitizer build (build/sanitize, `make SANITIZE=1`), fed mutated copies
of the bad-input corpus and the fuzz seeds.  Covers the parsers that live in
programs rather than in lib/ (marple-import's original-MARPLE reader, the
renderers' own input handling).  A crash is a signal, a sanitizer report, a
hang (10 s) or an undocumented exit status; its input is kept in
build/fuzz/crashes/prog-NAME/.

  python3 tests/fuzz/progs.py SECONDS [BINDIR]
Prints "progs  EXECUTIONS  -  CRASHES" like run-all; exit 1 on a crash.

A crash, once fixed, is kept as tests/fuzz/regress/prog-NAME/INPUT: every run
replays those first, and

  python3 tests/fuzz/progs.py --replay [BINDIR]

replays only them (tests/fuzz/fuzz.t, in every make check: a sanitizer build
catches what a plain one cannot), printing "replay N" and why each failed."""
import os, random, subprocess, sys, time, hashlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mutate import mutate_bytes

top = os.environ.get('MARPLE_TOP') or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
replay_only = len(sys.argv) > 1 and sys.argv[1] == '--replay'
secs = 0 if replay_only else float(sys.argv[1]) if len(sys.argv) > 1 else 60
bindir = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else os.path.join(top, 'build/sanitize'))
out = os.environ.get('FUZZ_OUT', os.path.join(top, 'build/fuzz'))
regress = os.path.join(top, 'tests/fuzz/regress')

# the programs that read inputs: the registry's filters and renderers (not
# marple-config, a helper whose operand is no input: a usage error, exit 2)
progs = []
for line in open(os.path.join(bindir, 'marple-registry')):
    fields = dict(f.split('=', 1) for f in line.rstrip('\n').split('\t') if '=' in f)
    name = fields.get('program', '')
    if fields.get('kind') in ('filter', 'renderer') and os.access(os.path.join(bindir, name), os.X_OK):
        progs.append(name)
progs.sort()
seeds = []
for d in ('tests/bad-input', 'tests/data', 'tests/fuzz/corpus/stream', 'tests/fuzz/corpus/folded', 'tests/fuzz/corpus/cpel',
          'tests/import', 'tests/driver'):
    p = os.path.join(top, d)
    if os.path.isdir(p):
        for f in sorted(os.listdir(p)):
            fp = os.path.join(p, f)
            if os.path.isfile(fp) and not f.endswith(('.t', '.py', '.js', '.sh')) and os.path.getsize(fp) < 200000:
                seeds.append(open(fp, 'rb').read())
if not progs or not seeds:
    print('progs: no build in %s (make SANITIZE=1) or no seeds' % bindir, file=sys.stderr)
    sys.exit(1)

TOKENS = [b'\n', b'#', b';', b',', b'=', b'%', b'%0A', b'%zz', b'{', b'}', b'"', b'\x00', b'\xff', b'-1', b'18446744073709551616',
          b'1e308', b'nan', b'{"marple":1,"interface":"x","datatype":"stack"}\n', b'{"trailer":1,"records":1}\n',
          b'{"marple":1,"interface":"x","datatype":"event"}\n', b'{"marple":1,"interface":"x","datatype":"point"}\n',
          b'\t', b' ', b'\r\n', b'<script>', b']]>', b'9' * 30]

def mutate(rng, data):
    return mutate_bytes(rng, data, TOKENS, seeds)

def documented(prog):
    return {0, 1, 2} if prog == 'marple-flamegraph' else {0, 1}

env = dict(os.environ)
env['ASAN_OPTIONS'] = 'exitcode=86:detect_leaks=1'
env['UBSAN_OPTIONS'] = 'exitcode=86:halt_on_error=1:print_stacktrace=1'
os.makedirs(os.path.join(out, 'tmp'), exist_ok=True)

def run(prog, inp):
    """Why PROG on the file INP is a crash, or None; and its stderr."""
    if not os.access(os.path.join(bindir, prog), os.X_OK):
        return 'not in %s' % bindir, b''
    try:
        r = subprocess.run([os.path.join(bindir, prog), inp], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           env=env, timeout=10, cwd=os.path.join(out, 'tmp'))
    except subprocess.TimeoutExpired:
        return 'hang', b''
    rc, err = r.returncode, r.stderr
    if rc < 0: return 'signal %d' % -rc, err
    if rc == 86 or b'Sanitizer' in err: return 'sanitizer report', err
    if rc not in documented(prog): return 'exit %d' % rc, err
    if rc != 0 and not err.startswith(prog.encode() + b': '): return 'exit %d without a message' % rc, err
    return None, err

# The saved crashes first: each through the program it crashed.
replayed = replay_failed = 0
for d in sorted(os.listdir(regress)) if os.path.isdir(regress) else []:
    if not d.startswith('prog-'):
        continue
    prog = d[len('prog-'):]
    for f in sorted(os.listdir(os.path.join(regress, d))):
        why, err = run(prog, os.path.join(regress, d, f))
        replayed += 1
        if why:
            replay_failed += 1
            print('progs: %s: %s: regression input %s: %s' % (prog, why, os.path.join(regress, d, f),
                  err[:600].decode(errors='replace')), file=sys.stderr)
if replay_only:
    print('replay %d' % replayed)
    sys.exit(1 if replay_failed or not replayed else 0)

rng = random.Random(int(os.environ.get('FUZZ_SEED', time.time())))
end = time.time() + secs
execs = crashes = 0
inp = os.path.join(out, 'tmp', 'progs-input')
while time.time() < end:
    prog = rng.choice(progs)
    data = mutate(rng, rng.choice(seeds))
    with open(inp, 'wb') as f:
        f.write(data)
    why, err = run(prog, inp)
    execs += 1
    if why:
        crashes += 1
        d = os.path.join(out, 'crashes', 'prog-' + prog)
        os.makedirs(d, exist_ok=True)
        name = os.path.join(d, hashlib.sha1(data).hexdigest()[:16])
        open(name, 'wb').write(data)
        open(name + '.why', 'wb').write(why.encode() + b'\n' + err[:4000])
        print('progs: %s: %s: input %s' % (prog, why, name), file=sys.stderr)
print('%-10s %14d %10d %8d %8s  %s' % ('progs', execs, execs / secs, crashes, '-', int(secs)))
sys.exit(1 if crashes or replay_failed else 0)
