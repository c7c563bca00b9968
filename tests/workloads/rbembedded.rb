# Known stacks for dlembed.c (ruby.t): loaded by a program embedding Ruby,
# with $secs set: <main> (line 15);Object#settle (line 11);Object#crunch,
# Integer#times, its block at line 6.
def crunch(n)
  x = 0
  n.times { |i| x = (x * 31 + i) % 1000003 }
  x
end

def settle(n)
  crunch(n)
end

finish = Process.clock_gettime(Process::CLOCK_MONOTONIC) + $secs
settle(20000) while Process.clock_gettime(Process::CLOCK_MONOTONIC) < finish
