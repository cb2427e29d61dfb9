# tar: create with fixed metadata, list, extract, compare; gzip filter.
mkdir -p tree/a/b tree/c
i=0
while [ $i -lt 30 ]; do echo "file $i" > tree/a/f$i.txt; i=$((i + 1)); done
echo deep > tree/a/b/deep.txt; echo top > tree/c/top.txt
tar --sort=name --mtime=2020-01-01 --owner=0 --group=0 --numeric-owner -cf t.tar tree
cksum < t.tar
tar -tf t.tar | head -5
tar -tvf t.tar tree/c/top.txt
mkdir out && tar -xf t.tar -C out && diff -r tree out/tree && echo "extract ok"
tar --sort=name --mtime=2020-01-01 --owner=0 --group=0 -czf t.tgz tree && tar -tzf t.tgz | wc -l
tar -xf missing.tar; echo "status $?"
