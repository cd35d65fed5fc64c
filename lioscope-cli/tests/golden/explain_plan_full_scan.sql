-- EXPLAIN PLAN of full scans: the WHERE clause runs inside the scan and shows as the
-- filter(...) of TABLE ACCESS FULL, with names in double quotes as DBMS_XPLAN prints
-- them; a literal on the left is moved to the right.
CREATE TABLE e (id INTEGER, name VARCHAR2(20), amt NUMBER(8,2), d DATE);
EXPLAIN PLAN FOR SELECT * FROM e;
EXPLAIN PLAN FOR SELECT name FROM e WHERE id = 5 AND name LIKE 'a%';
EXPLAIN PLAN FOR SELECT id FROM e WHERE 5 < id;
EXPLAIN PLAN FOR SELECT id FROM e WHERE id BETWEEN 1 AND 5 OR name IS NULL;
EXPLAIN PLAN FOR SELECT id FROM e WHERE id IN (1, 2, 3) AND NOT (name = 'x') AND d > TO_DATE('2024-01-01', 'YYYY-MM-DD');
EXPLAIN PLAN FOR SELECT id FROM e WHERE UPPER(name) = 'A' AND amt * 2 > 10 AND name || 'x' <> 'yx';
EXPLAIN PLAN FOR SELECT id FROM e WHERE name = 'it''s' AND id NOT BETWEEN 1 AND 2 AND name NOT LIKE '%z';
explain plan for select id from e where id = -1 and amt = -0.25 and amt is not null;
EXPLAIN PLAN FOR SELECT id FROM e WHERE CASE WHEN id > 1 THEN 1 ELSE 0 END = 1;
EXPLAIN PLAN FOR SELECT id FROM e WHERE 1 = 1;
EXPLAIN PLAN FOR SELECT * FROM v$mystat WHERE value > 0;
EXPLAIN PLAN FOR SELECT /*+ FULL(e) PARALLEL(4) */ id FROM e;
EXPLAIN PLAN FOR SELECT * FROM nosuch;
-- AUTOTRACE ON shows rows, plan and statistics; TRACEONLY leaves out the rows
INSERT INTO e VALUES (1, 'a', 1, NULL), (2, 'b', 2, NULL);
SET AUTOTRACE ON
SELECT id FROM e WHERE id > 1;
SET AUTOTRACE TRACEONLY
SELECT id FROM e WHERE id > 0;
SELECT id FROM e WHERE id > 1;
SET AUTOTRACE OFF
