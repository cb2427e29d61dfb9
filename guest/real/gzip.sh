# gzip: compress and decompress round trip at several levels.
i=0
while [ $i -lt 3000 ]; do echo "record $i $(( (i * 2654435761) % 100000 ))"; i=$((i + 1)); done > data.txt
for level in 1 6 9; do
  gzip -n -$level -c data.txt > data.$level.gz
  gzip -dc data.$level.gz | cmp - data.txt && echo "level $level ok"
done
gzip -n -9 -c data.txt | cksum
gzip -l data.9.gz | tail -1 | awk '{ print $1, $2 }'
gzip -t data.6.gz; echo "test $?"
echo garbage > bad.gz; gzip -dc bad.gz; echo "status $?"
