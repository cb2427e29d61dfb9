# grep: basic and extended regexps, counts, context, recursion, exit codes.
mkdir -p src/sub
i=0
while [ $i -lt 200 ]; do
  echo "int f$i(void) { return $i; } // TODO $((i % 13))" >> src/a.c
  echo "line $i: error=$((i % 5)) warn=$((i % 3))" >> src/sub/log.txt
  i=$((i + 1))
done
grep -c 'error=0' src/sub/log.txt
grep -E 'f1[0-9]\(' src/a.c | head -3
grep -n -A1 'line 17:' src/sub/log.txt
grep -rl 'TODO 12' src | sort
grep -o -E 'warn=[0-9]' src/sub/log.txt | sort | uniq -c
grep -v -i 'ERROR=[0-3]' src/sub/log.txt | wc -l
grep -w 'f5' src/a.c
grep -q nothing-here src/a.c; echo "status $?"
grep -F -e 'return 199' -e 'return 7;' src/a.c
grep missing-file-arg nosuchfile; echo "status $?"
