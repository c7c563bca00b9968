#!/usr/bin/env python3
"""config.py — mutational fuzzing of the driver's config parser (marple-config,
which `marple config`, `collect` and `display` run).

Every mutated config file is read by `marple config` as the user's config
($XDG_CONFIG_HOME/marple/config).  What must hold:
  - exit 0 and the effective configuration on stdout, which read back as a
    config file gives the same configuration (what marple prints, it accepts);
  - or exit 2 and exactly one line on stderr, "marple: FILE:LINE: reason",
    naming the file and a line that exists;
  - never another exit status, a hang (10 s), or a command run from the file:
    the mutations insert $(...), `...`, ;, | and & around a command that
    would create a sentinel file, which must never appear.
A failing input is kept in build/fuzz/crashes/config/.

  python3 tests/fuzz/config.py SECONDS [BINDIR]
Prints "config  EXECUTIONS  -  FAILURES" like run-all; exit 1 on a failure."""
import os, random, re, shutil, subprocess, sys, tempfile, time, hashlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mutate import mutate_bytes

top = os.environ.get('MARPLE_TOP') or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
secs = float(sys.argv[1]) if len(sys.argv) > 1 else 60
bindir = sys.argv[2] if len(sys.argv) > 2 else os.path.join(top, 'build')
out = os.environ.get('FUZZ_OUT', os.path.join(top, 'build/fuzz'))
marple = os.path.join(bindir, 'marple')
if not os.access(marple, os.X_OK):
    print('config: %s is not built' % marple, file=sys.stderr)
    sys.exit(1)

work = tempfile.mkdtemp(prefix='marple-config-fuzz.')
sentinel = os.path.join(work, 'INJECTED')
cfgdir = os.path.join(work, 'xdg', 'marple')
os.makedirs(cfgdir)
cfgfile = os.path.join(cfgdir, 'config')
env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(work, 'xdg'), XDG_STATE_HOME=os.path.join(work, 'state'),
           HOME=work, LC_ALL='C')

def run_config(data):
    with open(cfgfile, 'wb') as f:
        f.write(data)
    return subprocess.run([marple, 'config'], env=env, capture_output=True, timeout=10)

base = run_config(b'')
if base.returncode != 0:
    print('config: `marple config` with an empty file failed: %r' % base.stderr[:300], file=sys.stderr)
    sys.exit(1)
defaults = base.stdout
def body(stdout):	# the configuration without the two comment lines naming the files read
    return b'\n'.join(l for l in stdout.split(b'\n') if not l.startswith(b'#'))

inject = sentinel.encode()
TOKENS = [b'\n', b'[', b']', b'=', b':', b'#', b';', b',', b' ', b'\t', b'\r\n', b'\x00', b'\xff', b'-1', b'0',
          b'99999999999', b'1.5', b'500ms', b'2m', b'0s', b'[General]\n', b'[DisplayInterfaces]\n', b'[Aliases]\n',
          b'[heatmap]\n', b'[g2]\n', b'path = ', b'time = ', b'callstack = ', b'boot = ', b'flamegraph', b'heatmap',
          b'$(touch ' + inject + b')', b'`touch ' + inject + b'`', b'; touch ' + inject, b'| touch ' + inject,
          b'& touch ' + inject + b' &', b'"', b"'", b'\\', b'*', b'?', b'%s%n', b'../../', b'-o', b'--help']
seeds = [defaults, b'[General]\ntime = 5\n[callstack]\nfrequency = 999\n',
         b'[Aliases]\nmine = callstack, offcpu\n[DisplayInterfaces]\noffcpu = treemap\n',
         b'[g2]\ntrack = cpu\npath = /tmp/x y\n[heatmap]\nmode = offset\nrows = 40\n']

def mutate_value(rng, data):
    """Replace the value of one key = value line: keeps most of the file valid."""
    lines = data.split(b'\n')
    idx = [i for i, l in enumerate(lines) if b'=' in l]
    if not idx:
        return data
    i = rng.choice(idx)
    key = lines[i].split(b'=', 1)[0]
    lines[i] = key + b'= ' + b''.join(rng.choice(TOKENS) for _ in range(rng.randint(1, 3)))
    return b'\n'.join(lines)

def mutate(rng, data):
    if rng.randrange(2):
        return mutate_value(rng, data)
    return mutate_bytes(rng, data, TOKENS, seeds, rounds=6)

line_re = re.compile(rb'^marple: ' + re.escape(cfgfile.encode()) + rb':([0-9]+): .+\n$')
accepted = rejected = 0
def check(data):
    """None if the properties hold, else why not."""
    global accepted, rejected
    try:
        r = run_config(data)
    except subprocess.TimeoutExpired:
        return 'hang (10 s)'
    if os.path.exists(sentinel):
        return 'a command in the config was run'
    if r.returncode == 0:
        if not r.stdout.startswith(b'# marple: effective configuration\n'):
            return 'exit 0 without the configuration'
        again = run_config(body(r.stdout))
        if again.returncode != 0 or body(again.stdout) != body(r.stdout):
            return 'the printed configuration does not read back the same: %r' % again.stderr[:200]
        accepted += 1
        return None
    if r.returncode == 2:
        m = line_re.match(r.stderr)
        if not m:
            return 'exit 2 without one "marple: FILE:LINE: reason" line: %r' % r.stderr[:200]
        if int(m.group(1)) < 1 or int(m.group(1)) > data.count(b'\n') + 1:
            return 'exit 2 naming line %s of a %d-line file' % (m.group(1).decode(), data.count(b'\n') + 1)
        rejected += 1
        return None
    return 'exit status %d: %r' % (r.returncode, r.stderr[:200])

rng = random.Random(int(os.environ.get('FUZZ_SEED', time.time())))
end = time.time() + secs
runs = failures = 0
crashdir = os.path.join(out, 'crashes', 'config')
try:
    for s in seeds:	# the seeds themselves first
        why = check(s)
        runs += 1
        if why:
            failures += 1
            print('config: seed: %s' % why, file=sys.stderr)
    while time.time() < end:
        data = mutate(rng, rng.choice(seeds))
        why = check(data)
        runs += 1
        if why:
            failures += 1
            os.makedirs(crashdir, exist_ok=True)
            path = os.path.join(crashdir, hashlib.sha1(data).hexdigest()[:16])
            with open(path, 'wb') as f:
                f.write(data)
            print('config: %s (input kept in %s)' % (why, path), file=sys.stderr)
            if os.path.exists(sentinel):
                os.unlink(sentinel)
            if failures >= 5:
                break
finally:
    shutil.rmtree(work, ignore_errors=True)
print('%-10s %14d %10s %8d  (%d accepted, %d rejected with FILE:LINE)' % ('config', runs, '-', failures, accepted, rejected))
sys.exit(1 if failures else 0)
