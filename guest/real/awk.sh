# awk (mawk): fields, associative arrays, printf, functions, getline.
i=0
while [ $i -lt 400 ]; do echo "dept$((i % 7)) emp$i $(( (i * 37) % 1000 + 100 ))"; i=$((i + 1)); done > pay.txt
awk '{ sum[$1] += $3; n[$1]++ } END { for (d in sum) printf "%s %d %.2f\n", d, n[d], sum[d] / n[d] }' pay.txt | sort
awk 'function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2) } BEGIN { print fib(20) }'
awk -F' ' 'NR % 50 == 0 { print NR, toupper($2), length($0), substr($2, 2, 3) }' pay.txt
awk 'BEGIN { while ((getline line < "pay.txt") > 0) c++; print c; x = sprintf("%05.1f|%-6s|%x", 3.14159, "ab", 255); print x }'
awk '{ gsub(/[0-9]/, "#", $2); print $2 }' pay.txt | sort | uniq -c
echo "a:b:c" | awk -F: '{ $2 = "X"; print; print NF }' OFS=-
awk 'BEGIN { exit 3 }'; echo "status $?"
