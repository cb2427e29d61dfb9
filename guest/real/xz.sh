# xz: compress and decompress round trip, integrity test.
# needs: xz
i=0
while [ $i -lt 2000 ]; do echo "xz line $i $((i * i % 977))"; i=$((i + 1)); done > data.txt
xz -6 -c data.txt > data.xz
xz -dc data.xz | cmp - data.txt && echo "round trip ok"
xz -c -0 data.txt | xz -dc | wc -l
xz -t data.xz; echo "test $?"
cksum < data.xz
