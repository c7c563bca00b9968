# generate.py — the lines each CPython itself gives the instructions of a
# sample's code objects, for tests/unit/test_pylayout.c: run under each
# interpreter (python3.X generate.py > 3.X.txt).  Per code object a line
# "code MINOR FIRSTLINENO HEX" (its line table: co_lnotab to 3.9, then
# co_linetable), then "LASTI LINE" per instruction (lasti as marple's BPF
# side stores it: a byte offset to 3.9, a code unit from 3.10; line 0 when
# the instruction has none).
import dis, sys

SOURCE = '''
def simple(a):
    b = a + 1
    return b * 2

def loop(n):
    total = 0
    for i in range(n):
        if i % 3:
            total += i
        else:
            total -= 1
    return total

def far_apart(x):
    y = x
''' + "\n" * 300 + '''    y += 1
''' + "\n" * 40 + '''    return (y +
            x +
            1)

def long_body(v):
''' + "".join("    v = v + %d\n" % i for i in range(200)) + '''    return v

class Tree:
    def walk(self, kids):
        total = 0
        for k in kids:
            total += k.walk([])
        return total

def gen(n):
    for i in range(n):
        yield i * i
'''

def codes(code):
    yield code
    for c in code.co_consts:
        if hasattr(c, "co_code"):
            yield from codes(c)

def lines_of(code):
    n = len(code.co_code)
    out = [0] * (n // 2)
    if hasattr(code, "co_lines"):
        for start, end, line in code.co_lines():
            for off in range(start, end, 2):
                if off // 2 < len(out):
                    out[off // 2] = line or 0
    else:
        line = 0
        starts = dict(dis.findlinestarts(code))
        for off in range(0, n, 2):
            line = starts.get(off, line)
            out[off // 2] = line
    return out

minor = sys.version_info[1]
for code in codes(compile(SOURCE, "sample.py", "exec")):
    table = code.co_lnotab if minor <= 9 else code.co_linetable
    print("code %d %d %s" % (minor, code.co_firstlineno, table.hex()))
    for unit, line in enumerate(lines_of(code)):
        print("%d %d" % (unit * 2 if minor <= 9 else unit, line))
