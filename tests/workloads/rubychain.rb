# Known stacks for tests/collectors/ruby.t and tests/bench/ruby.sh: ruby
# rubychain.rb SECONDS [MODE [READY_FILE (made as the loop starts)]]
# MODE chain (default): <main>;Object#settle;Object#crunch, crunch's loop
# at line 11; sort: <main>;Object#settle_sorted;Enumerable#sort_by (C);
# block in settle_sorted at line 23; recurse: <main>;Object#descend x 9;
# Object#crunch; wait: <main>;Object#settle_waiting;Kernel#sleep (C), off
# the CPU; class: <main>;Ledger.settle;Ledger#crunch, its block at line 41.
def crunch(n)
  x = 0
  n.times do |i|
    x = (x * 31 + i) % 1000003
  end
  x
end

def settle(n)
  crunch(n)
end

def settle_sorted(items)
  items.sort_by do |v|
    ((v * 31 + 7) ** 3 % 1000003 + (v * 17) ** 2 % 7919) % 97
  end.first
end

def descend(depth)
  depth > 0 ? descend(depth - 1) : crunch(20000)
end

def settle_waiting
  sleep 0.002
end

class Ledger
  def self.settle(n)
    new.crunch(n)
  end

  def crunch(n)
    total = 0
    n.times { |i| total += (i * i + 7) % 7919 }
    total
  end
end

secs = (ARGV[0] || 2).to_f
mode = ARGV[1] || 'chain'
items = (1..3000).to_a
finish = Process.clock_gettime(Process::CLOCK_MONOTONIC) + secs
File.write(ARGV[2], '') if ARGV[2]
while Process.clock_gettime(Process::CLOCK_MONOTONIC) < finish
  case mode
  when 'sort' then settle_sorted(items)
  when 'recurse' then descend(8)
  when 'wait' then settle_waiting
  when 'class' then Ledger.settle(20000)
  else settle(20000)
  end
end
