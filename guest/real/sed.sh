# sed: substitutions with groups, addresses, hold space, in-place editing.
i=0
while [ $i -lt 300 ]; do echo "key$i = value $((i * i)) # comment $i"; i=$((i + 1)); done > conf.txt
sed -n 's/^key\([0-9]*\) = value \([0-9]*\).*/\2:\1/p' conf.txt | tail -3
sed '/key1[0-9]\{2\}/d' conf.txt | wc -l
sed -n '10,20{s/#.*//;p}' conf.txt
sed -n '1!G;h;$p' conf.txt | head -3
sed -i.bak -e 's/value/VAL/g' -e '$a\' -e 'end' conf.txt
tail -2 conf.txt; cmp -s conf.txt conf.txt.bak; echo "cmp $?"
printf 'a,b,c\n1,2,3\n' | sed -E 's/([^,]*),([^,]*),(.*)/\3|\2|\1/'
sed 's/x/y/;q5' conf.txt; echo "status $?"
