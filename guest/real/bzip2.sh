# bzip2: compress and decompress round trip, integrity test.
# needs: bzip2
i=0
while [ $i -lt 2000 ]; do echo "bz line $i $((i * 7 % 311))"; i=$((i + 1)); done > data.txt
bzip2 -9 -c data.txt > data.bz2
bzip2 -dc data.bz2 | cmp - data.txt && echo "round trip ok"
bzip2 -t data.bz2; echo "test $?"
cksum < data.bz2
bzip2 -dc < data.txt; echo "status $?"
