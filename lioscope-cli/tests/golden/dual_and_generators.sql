-- DUAL, the CONNECT BY LEVEL <= n row generator and GENERATE_SERIES(start, stop) with
-- an alias naming its column.
SELECT 1 FROM dual;
SELECT 1 + 1, 'a' || 'b', NULL FROM dual;
SELECT 'x' FROM dual WHERE 1 = 0;
SELECT LEVEL FROM dual CONNECT BY LEVEL <= 3;
SELECT LEVEL, ROWNUM FROM dual CONNECT BY LEVEL <= 3;
SELECT LEVEL FROM dual CONNECT BY LEVEL < 3;
SELECT LEVEL FROM dual CONNECT BY LEVEL <= 2 + 1;
SELECT LEVEL FROM dual d CONNECT BY LEVEL <= 2;
SELECT LEVEL FROM dual WHERE LEVEL > 1 CONNECT BY LEVEL <= 4;
SELECT LEVEL l, LEVEL * LEVEL sq FROM dual CONNECT BY LEVEL <= 5 ORDER BY l DESC;
SELECT MOD(LEVEL, 3) m, COUNT(*) FROM dual CONNECT BY LEVEL <= 10 GROUP BY MOD(LEVEL, 3) ORDER BY m;
SELECT COUNT(*), SUM(LEVEL) FROM dual CONNECT BY LEVEL <= 20000;
SELECT * FROM generate_series(1, 3) g(n);
SELECT * FROM generate_series(1, 3);
SELECT n * 2 AS d FROM generate_series(1, 3) AS g(n) ORDER BY d DESC;
SELECT * FROM generate_series(-2, 2) AS s(v) WHERE v <> 0;
SELECT g.n FROM generate_series(1, 3) g(n) WHERE g.n = 2;
SELECT * FROM generate_series(5, 1);
SELECT SUM(n), COUNT(*), MIN(n), MAX(n) FROM generate_series(1, 20000) g(n);
SELECT n FROM generate_series(1, 10) g(n) WHERE ROWNUM <= 2;
EXPLAIN PLAN FOR SELECT 1 FROM dual;
EXPLAIN PLAN FOR SELECT LEVEL FROM dual CONNECT BY LEVEL <= 3;
EXPLAIN PLAN FOR SELECT n FROM generate_series(1, 3) g(n);
-- errors and unsupported forms
SELECT LEVEL FROM dual;
SELECT LEVEL FROM dual CONNECT BY LEVEL <= NULL;
SELECT LEVEL FROM dual CONNECT BY LEVEL <= 'abc';
SELECT LEVEL FROM dual CONNECT BY LEVEL > 3;
SELECT LEVEL FROM dual CONNECT BY PRIOR x = y;
SELECT LEVEL FROM dual START WITH 1 = 1 CONNECT BY LEVEL <= 2;
SELECT * FROM generate_series(1, 3, 1);
SELECT * FROM unknown_fn(1, 2);
-- DUAL has one column, DUMMY = 'X'.
SELECT * FROM dual;
SELECT dummy FROM dual;
-- The root row is always returned: CONNECT BY LEVEL <= 0 gives LEVEL 1.
SELECT LEVEL FROM dual CONNECT BY LEVEL <= 0;
-- GENERATE_SERIES has one column: a second alias is an error.
SELECT n FROM generate_series(1, 3) g(n, m);
