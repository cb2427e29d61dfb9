# coreutils: wc, cut, tr, uniq, head, tail, od, paste, join, expr.
i=1; while [ $i -le 250 ]; do echo $i; i=$((i + 1)); done > n.txt
tac n.txt | paste -d, - - - | head -4
tr '0-9' 'a-j' < n.txt | tail -3
cut -c1-2 n.txt | sort | uniq -c | sort -k1,1nr -k2 | head -4
wc n.txt
printf 'b 2\na 1\nc 3\n' | sort > l.txt; printf 'a x\nb y\nd z\n' > r.txt
join l.txt r.txt
head -c 20 n.txt | od -c | head -3
expr 7 \* 6; expr length "hello world"
basename /a/b/c.txt .txt; dirname /a/b/c.txt
printf '%s %05d %x\n' word 42 255
