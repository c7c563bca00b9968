# pyshapes.py — Python workloads of known shape, for Debian's own python3
# (3.11): the callers and callees of each are known, and so are the chains
# a profiler should show.  Imported by tests/bench/python.sh (each workload
# with the interpreter sampling itself beside marple), run by
# tests/collectors/python.t as
#   python3 pyshapes.py SECONDS NAME...
# which runs the named workloads in turn, at module level, until SECONDS
# have passed (a name given twice runs twice as often).
# - chain: one eval loop calling chain_a -> chain_b -> chain_c;
# - sort_with_key: a callback through C, sorted() calling a lambda calling keyfn;
# - generator: a generator driven by C, sum() resuming numbers;
# - threads: two worker threads running spin;
# - cheavy: C-heavy json encoding (encode) and regular expressions (match);
# - shares: share_1, share_2, share_3 doing 1, 2 and 3 units of the same work.
import json, re, sys, threading, time

def chain_c(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
def chain_b(n): return chain_c(n)
def chain_a(n): return chain_b(n)
def chain():
    chain_a(20000)

def keyfn(x):
    s = 0
    for i in range(30):
        s += (x * i) % 7
    return s
def sort_with_key():
    sorted(range(3000), key=lambda x: keyfn(x))

def numbers(n):
    for i in range(n):
        yield i * i % 13
def generator(n=20000):
    sum(numbers(n))

def spin(n):
    s = 0
    for i in range(n):
        s += i
    return s
def threads():
    ts = [threading.Thread(target=spin, args=(200000,)) for _ in range(2)]
    for t in ts: t.start()
    for t in ts: t.join()

WORDS = re.compile(r"(\w+)@(\w+)\.com")
TEXT = " ".join("user%d@host%d.com filler text" % (i, i) for i in range(2000))
def encode():
    data = [{"k%d" % i: [i, str(i), {"x": i * 1.5}] for i in range(50)} for _ in range(20)]
    return json.dumps(data)
def match():
    return WORDS.findall(TEXT)
def cheavy():
    encode(); match()

# the same loop, run 1, 2 and 3 times as long: 1/6, 2/6 and 3/6 of the time
def share_1(n):
    s = 0
    for i in range(n):
        s += i ^ 3
    return s
def share_2(n):
    s = 0
    for i in range(n):
        s += i ^ 3
    return s
def share_3(n):
    s = 0
    for i in range(n):
        s += i ^ 3
    return s
def shares():
    share_1(10000); share_2(20000); share_3(30000)

if __name__ == "__main__":
    shapes = [globals()[name] for name in sys.argv[2:]]
    end = time.time() + float(sys.argv[1])
    while time.time() < end:
        for shape in shapes:
            shape()
