# Known stacks for dlembed.c (python.t): run by a program embedding Python,
# with SECS set: <module> (line 19);settle (line 14);crunch, its loop at lines 8-9.
import time


def crunch(n):
    x = 0
    for i in range(n):
        x = (x * 31 + i) % 1000003
    return x


def settle(n):
    return crunch(n)


end = time.monotonic() + SECS
while time.monotonic() < end:
    settle(20000)
