-- EXPLAIN PLAN FOR shows the plan as DBMS_XPLAN.DISPLAY prints it, one PLAN_TABLE_OUTPUT
-- row per line, without running the query. Row sources stack in SQL's logical order.
CREATE TABLE e (id INTEGER, name VARCHAR2(20), amt NUMBER(8,2));
EXPLAIN PLAN FOR SELECT 1 FROM dual;
EXPLAIN PLAN FOR SELECT COUNT(*) FROM e;
EXPLAIN PLAN FOR SELECT name, COUNT(*) FROM e GROUP BY name;
EXPLAIN PLAN FOR SELECT DISTINCT name FROM e;
EXPLAIN PLAN FOR SELECT DISTINCT name FROM e ORDER BY name;
EXPLAIN PLAN FOR SELECT id FROM e ORDER BY name FETCH FIRST 5 ROWS ONLY;
EXPLAIN PLAN FOR SELECT id FROM e OFFSET 10 ROWS;
EXPLAIN PLAN FOR SELECT id FROM e WHERE ROWNUM <= 10;
EXPLAIN PLAN FOR SELECT LEVEL FROM dual WHERE LEVEL > 2 CONNECT BY LEVEL <= 5;
EXPLAIN PLAN FOR SELECT n FROM generate_series(1, 10) g(n) WHERE n > 5;
EXPLAIN PLAN FOR SELECT name FROM v$statname WHERE class = 64 ORDER BY name;
-- the statement is not run: no rows, no error for a division by zero in a row
EXPLAIN PLAN FOR SELECT 1 / 0 FROM e;
EXPLAIN PLAN FOR INSERT INTO e VALUES (1, 'x', 1);
-- The HAVING filter names the aggregate.
EXPLAIN PLAN FOR SELECT name, SUM(amt) FROM e WHERE amt > 0 GROUP BY name HAVING COUNT(*) > 1 ORDER BY 2 DESC;
-- BUG (minor): with ROWNUM both in the select list and in a stopkey, Oracle shows one
-- COUNT STOPKEY; lioscope adds a second row source, COUNT, above it.
EXPLAIN PLAN FOR SELECT id, ROWNUM FROM e WHERE ROWNUM <= 10;
