# sort: numeric, key, unique, reverse and merge orders of generated lines.
i=0
while [ $i -lt 1500 ]; do
  echo "$(( (i * 7919) % 1009 )) w$(( (i * 31) % 97 )) line$i"
  i=$((i + 1))
done > in.txt
sort -n in.txt | head -5
sort -k2,2 -k1,1n in.txt | tail -5
sort -u -k2,2 in.txt | wc -l
sort -rn in.txt | cksum
sort -t' ' -k3 in.txt | sed -n '700,703p'
sort -n in.txt > a.txt
sort -m a.txt a.txt | uniq -c | sort -rn | head -3
