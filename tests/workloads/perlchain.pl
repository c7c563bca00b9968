# Known stacks for tests/collectors/perl.t and tests/bench/perl.sh: perl
# perlchain.pl SECONDS [MODE [READY_FILE (made as the loop starts)]]
# MODE chain (default): {main};main::settle;main::crunch, crunch's loop at
# lines 14-15; sort: {main};main::settle_sorted;[pp_sort's C];main::by_size at
# line 21; sortsub: the same through sort by_size (main::settle_sorted_by,
# line 34); recurse: {main};main::descend x 9;main::crunch;
# wait: {main};main::settle_waiting;[select's C], off the CPU.
use strict;
use warnings;
use Time::HiRes qw(time);

sub crunch {
	my ($n, $x) = (shift, 0);
	for my $i (0 .. $n - 1) {
		$x = ($x * 31 + $i) % 1000003;
	}
	return $x;
}

sub by_size {
	return ($a % 97) <=> ($b % 97);
}

sub settle {
	return crunch(20000);
}

sub settle_sorted {
	my @sorted = sort { by_size() } @_;
	return $sorted[0];
}

sub settle_sorted_by {
	my @sorted = sort by_size @_;
	return $sorted[0];
}

sub descend {
	my $depth = shift;
	return $depth > 0 ? descend($depth - 1) : crunch(20000);
}

sub settle_waiting {
	select(undef, undef, undef, 0.002);
}

my $secs = $ARGV[0] // 2;
my $mode = $ARGV[1] // 'chain';
my @items = (1 .. 3000);
my $end = time + $secs;
if (defined $ARGV[2]) {
	open(my $fh, '>', $ARGV[2]) or die "$ARGV[2]: $!";
	close($fh);
}
while (time < $end) {
	if ($mode eq 'sort') {
		settle_sorted(@items);
	} elsif ($mode eq 'sortsub') {
		settle_sorted_by(@items);
	} elsif ($mode eq 'recurse') {
		descend(8);
	} elsif ($mode eq 'wait') {
		settle_waiting();
	} else {
		settle();
	}
}
