<?php
// Known stacks for tests/collectors/php.t and tests/bench/php.sh: php
// phpchain.php SECONDS [MODE [READY_FILE (made as the loop starts)]]
// MODE chain (default): {main};settle;crunch, crunch's loop at line 12;
// sort: {main};settle_sorted;usort (internal);Order::by_size at line 21;
// recurse: {main};descend x 9;crunch;
// wait: {main};settle_waiting;usleep (internal), off the CPU.
function crunch($n)
{
	$x = 0;
	for ($i = 0; $i < $n; $i++) {
		$x = ($x * 31 + $i) % 1000003;
	}
	return $x;
}

class Order
{
	static function by_size($a, $b)
	{
		return ($a % 97) <=> ($b % 97);
	}
}

function settle($n)
{
	return crunch($n);
}

function settle_sorted($items)
{
	usort($items, ['Order', 'by_size']);
	return $items[0];
}

function descend($depth)
{
	return $depth > 0 ? descend($depth - 1) : crunch(20000);
}

function settle_waiting()
{
	usleep(2000);
}

$secs = isset($argv[1]) ? (float)$argv[1] : 2.0;
$mode = $argv[2] ?? 'chain';
$items = range(1, 3000);
$end = microtime(true) + $secs;
if (isset($argv[3]))
	touch($argv[3]);
while (microtime(true) < $end) {
	if ($mode === 'sort')
		settle_sorted($items);
	elseif ($mode === 'recurse')
		descend(8);
	elseif ($mode === 'wait')
		settle_waiting();
	else
		settle(20000);
}
