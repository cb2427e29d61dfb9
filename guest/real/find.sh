# find: names, types, depth, sizes, -exec, -prune.
mkdir -p t/x/y t/z t/skip
for d in t t/x t/x/y t/z t/skip; do
  for n in 1 2 3; do head -c $((n * 100)) /dev/zero > $d/file$n.dat; echo hi > $d/note$n.txt; done
done
find t -type f -name '*.txt' | sort
find t -type d | sort
find t -maxdepth 1 -type f -size +150c | sort
find t -path t/skip -prune -o -name 'file3*' -print | sort
find t -name 'note1.txt' -exec cat {} \; | wc -l
find t -newer t/z/note3.txt -name nothing | wc -l
find nowhere; echo "status $?"
