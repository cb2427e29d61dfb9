# perl: regexps, hashes, sort, sprintf, pack, local subs.
# needs: perl
perl -e '
  my %h; $h{$_ % 7} += $_ for 1 .. 100;
  print join(",", map { "$_=$h{$_}" } sort { $a <=> $b } keys %h), "\n";
  my $s = "The quick brown fox jumps over the lazy dog";
  my @w = ($s =~ /\b(\w{5})\b/g); print "@w\n";
  (my $t = $s) =~ s/(\w+)/\u$1/g; print "$t\n";
  printf "%.5f %e %08b %o\n", atan2(1, 1) * 4, 12345.678, 200, 64;
  print unpack("H*", pack("NnC", 0xCAFEBABE, 513, 7)), "\n";
  sub fact { my $n = shift; $n <= 1 ? 1 : $n * fact($n - 1) } print fact(20), "\n";
  my @sorted = sort { length($a) <=> length($b) or $a cmp $b } split / /, lc $s; print "@sorted\n";
'
printf 'a=1\nb=2\nc=3\n' | perl -ne 'chomp; my ($k, $v) = split /=/; $t += $v; END { print "sum $t\n" }'
perl -e 'die "dying\n"'; echo "status $?"
