#!/usr/bin/env python3
"""pftrace.py TRACE > JSON — decode a Perfetto trace written by marple-perfetto
with `protoc --decode` against tests/perfetto/trace.proto (our own statement of
Perfetto's published field numbers) and print it as JSON: every message a dict,
every field a list of its values (so repeated and optional read the same).
protoc's exit status is kept; a field protoc does not know (a number instead of
a name in its output) is an error, so a wrong field number cannot pass unseen."""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def parse(lines):
    root, stack = {}, []
    cur = root
    for ln in lines:
        s = ln.strip()
        if not s:
            continue
        if s == "}":
            cur = stack.pop()
            continue
        m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*) \{$", s)
        if m:
            child = {}
            cur.setdefault(m.group(1), []).append(child)
            stack.append(cur)
            cur = child
            continue
        m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*): (.*)$", s)
        if not m:
            sys.exit("pftrace.py: field protoc does not know, or unreadable line: %r" % s)
        v = m.group(2)
        if v.startswith('"'):
            v = bytes(v[1:-1], "latin-1").decode("unicode_escape").encode("latin-1").decode("utf-8", "replace")
        else:
            v = int(v)
        cur.setdefault(m.group(1), []).append(v)
    return root


def main():
    with open(sys.argv[1], "rb") as f:
        p = subprocess.run(["protoc", "--decode=marple.Trace", "-I", HERE, os.path.join(HERE, "trace.proto")],
                           stdin=f, capture_output=True)
    if p.returncode != 0:
        sys.exit("pftrace.py: protoc failed: " + p.stderr.decode(errors="replace"))
    json.dump(parse(p.stdout.decode("utf-8", "replace").splitlines()), sys.stdout)


main()
