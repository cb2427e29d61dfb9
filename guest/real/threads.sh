# threads: programs that start threads: xz and zstd with two worker
# threads (round trips), sort with four, python3's thread pool, lock and
# queue.
# needs: xz zstd sort python3
i=0
while [ $i -lt 6000 ]; do echo "thread line $i $((i * 7919 % 1009)) $((i * i % 977))"; i=$((i + 1)); done > data.txt
xz -T2 --block-size=32KiB -c data.txt > data.xz
xz -T2 -dc data.xz | cmp - data.txt && echo "xz -T2 round trip ok"
zstd -q -T2 -c data.txt > data.zst
zstd -q -T2 -dc data.zst | cmp - data.txt && echo "zstd -T2 round trip ok"
sort --parallel=4 -S 64K -k4,4n -k1 data.txt | cksum
python3 - <<'PY'
from concurrent.futures import ThreadPoolExecutor
import threading, queue
lock = threading.Lock()
total = 0
def work(n):
    global total
    s = sum(i * i for i in range(n))
    with lock:
        total += s
    return s
with ThreadPoolExecutor(max_workers=4) as ex:
    results = list(ex.map(work, range(100, 140)))
q = queue.Queue()
def produce():
    for i in range(500):
        q.put(i)
    q.put(None)
t = threading.Thread(target=produce)
t.start()
got = 0
while (x := q.get()) is not None:
    got += x
t.join()
print("pool", sum(results), "locked", total, "queue", got)
PY
