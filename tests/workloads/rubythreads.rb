# Known stacks for tests/collectors/ruby.t: ruby rubythreads.rb SECONDS
# [READY_FILE (made once both threads are named)].  Two Ruby threads besides the
# main one, named (their native names too) and each in its own method:
# "left" runs block in <main>;Object#spin_left, "right" block in
# <main>;Object#spin_right; the main thread waits in Thread#join, off the
# CPU.  One holds the GVL at a time: the other waits for it off the CPU.
def spin_left(finish)
  x = 0
  x = (x * 31 + 7) % 1000003 while Process.clock_gettime(Process::CLOCK_MONOTONIC) < finish
  x
end

def spin_right(finish)
  y = 1
  y = (y * 17 + 3) % 999983 while Process.clock_gettime(Process::CLOCK_MONOTONIC) < finish
  y
end

finish = Process.clock_gettime(Process::CLOCK_MONOTONIC) + (ARGV[0] || 2).to_f
named = Queue.new
left = Thread.new { Thread.current.name = 'left'; named << 1; spin_left(finish) }
right = Thread.new { Thread.current.name = 'right'; named << 1; spin_right(finish) }
2.times { named.pop }
File.write(ARGV[1], '') if ARGV[1]
left.join
right.join
