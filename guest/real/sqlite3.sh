# sqlite3: a recursive CTE, joins, aggregates and window functions.
# needs: sqlite3
sqlite3 db.sqlite <<'END'
CREATE TABLE dept(id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE emp(id INTEGER PRIMARY KEY, name TEXT, dept INTEGER REFERENCES dept(id), pay INTEGER);
INSERT INTO dept VALUES (1, 'eng'), (2, 'ops'), (3, 'sales');
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 60)
INSERT INTO emp SELECT i, 'emp' || i, 1 + i % 3, 1000 + (i * 7919) % 5000 FROM n;
SELECT d.name, count(*), sum(e.pay), round(avg(e.pay), 2) FROM emp e JOIN dept d ON d.id = e.dept GROUP BY d.name ORDER BY d.name;
SELECT name, pay, rank() OVER (PARTITION BY dept ORDER BY pay DESC) AS r FROM emp WHERE id <= 12 ORDER BY dept, r;
SELECT id, sum(pay) OVER (ORDER BY id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM emp WHERE id <= 6;
WITH RECURSIVE fib(a, b, k) AS (SELECT 0, 1, 0 UNION ALL SELECT b, a + b, k + 1 FROM fib WHERE k < 30) SELECT max(a) FROM fib;
SELECT d.name, e.name FROM dept d LEFT JOIN emp e ON e.dept = d.id AND e.pay > 5900 ORDER BY 1, 2;
SELECT group_concat(name, ',') FROM (SELECT name FROM emp ORDER BY pay DESC LIMIT 4);
SELECT printf('%.3f', 22.0 / 7), hex('aarchx'), length(zeroblob(10)), upper('x') || lower('Y');
END
sqlite3 db.sqlite 'SELECT count(*) FROM emp WHERE pay BETWEEN 2000 AND 4000'
sqlite3 db.sqlite 'SELECT * FROM nosuch'; echo "status $?"
