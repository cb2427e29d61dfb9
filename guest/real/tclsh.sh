# tclsh: procs, lists, dicts, string and regexp commands, format.
# needs: tclsh
cat > t.tcl <<'END'
proc fib {n} { if {$n < 2} { return $n }; expr {[fib [expr {$n - 1}]] + [fib [expr {$n - 2}]]} }
puts [fib 18]
set l {}; for {set i 0} {$i < 10} {incr i} { lappend l [expr {$i * $i}] }
puts [lsort -integer -decreasing $l]
set d [dict create a 1 b 2]; dict incr d a 5; puts [dict get $d a]
puts [string toupper [string range "hello world" 0 4]]
regexp {(\d+)-(\d+)} "range 10-20" -> lo hi; puts "$lo $hi"
puts [format "%5.2f|%-4s|%x" 3.14159 ab 255]
puts [join [lmap x {1 2 3} { expr {$x * 10} }] ,]
exit 5
END
tclsh t.tcl; echo "status $?"
