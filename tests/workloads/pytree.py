# pytree.py - a recursive workload of known stacks and lines for the Python
# tests (tests/collectors/python.t, python-versions.t): python3 pytree.py
# SECONDS [nojson].  <module> calls main, main Tree.walk four deep, the
# leaves fib; main also encodes json (C under Python) unless "nojson".
# The tests assert the lines below: move nothing.
import json, sys, time

def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

class Tree:
    def __init__(self, depth):
        self.kids = [Tree(depth - 1) for _ in range(2)] if depth else []

    def walk(self):
        if not self.kids:
            return fib(17)
        total = 0
        for k in self.kids:
            total += k.walk()
        return total

def encode():
    data = [{"k%d" % i: [i, str(i), {"x": i * 1.5}] for i in range(50)} for _ in range(100)]
    return len(json.dumps(data))

def main():
    t = Tree(3)
    end = time.time() + float(sys.argv[1])
    json_too = sys.argv[2:] != ["nojson"]
    while time.time() < end:
        t.walk()
        if json_too:
            encode()

main()
