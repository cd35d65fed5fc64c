-- Constructs lioscope does not implement are errors that name the construct and, where
-- the parser knows it, its position.
CREATE TABLE a (id INTEGER, v VARCHAR2(5));
CREATE TABLE b (id INTEGER, w VARCHAR2(5));
INSERT INTO a SELECT LEVEL, 'v' FROM dual CONNECT BY LEVEL <= 5;
SELECT * FROM a JOIN b ON a.id = b.id;
SELECT * FROM a
  LEFT JOIN b ON a.id = b.id;
SELECT id FROM a a1 JOIN a a2 USING (id);
SELECT * FROM a, b;
WITH x AS (SELECT 1 n FROM dual) SELECT n FROM x;
SELECT * FROM (SELECT id FROM a);
SELECT id FROM a WHERE id IN (SELECT id FROM b);
SELECT (SELECT 1 FROM dual) FROM dual;
SELECT id FROM a WHERE EXISTS (SELECT 1 FROM b);
SELECT id FROM a UNION SELECT id FROM b;
SELECT id FROM a UNION ALL SELECT id FROM b;
SELECT id FROM a MINUS SELECT id FROM b;
SELECT id FROM a INTERSECT SELECT id FROM b;
SELECT id FROM a FOR UPDATE;
SELECT ROW_NUMBER() OVER (ORDER BY id) FROM a;
SELECT id FROM a GROUP BY ROLLUP (id);
SELECT id FROM a WHERE id > 1 GROUP BY ALL;
SELECT CAST(id AS VARCHAR2(10)) FROM a;
SELECT id FROM a WHERE v LIKE ANY ('a%');
SELECT 1 FROM dual WHERE 1 IS NOT DISTINCT FROM 1;
SELECT id FROM a WHERE (id, v) IN ((1, 'a'));
SELECT INTERVAL '1' DAY FROM dual;
SELECT id FROM TABLE(x);
SELECT :1 FROM dual;
SELECT x'41' FROM dual;
SELECT ~1 FROM dual;
SELECT id FROM a WHERE REGEXP_LIKE(v, 'a');
SELECT LISTAGG(v, ',') WITHIN GROUP (ORDER BY id) FROM a;
SELECT COUNT(DISTINCT id, v) FROM a;
SELECT p FROM a x(p, q);
UPDATE a SET v = 'x';
DELETE FROM a;
MERGE INTO a USING b ON (a.id = b.id) WHEN MATCHED THEN UPDATE SET v = 'y';
CREATE INDEX ai ON a (id);
CREATE VIEW av AS SELECT * FROM a;
CREATE TABLE c AS SELECT * FROM a;
COMMIT;
ROLLBACK;
GRANT SELECT ON a TO bob;
DROP VIEW av;
DROP INDEX ai;
DROP TABLE a CASCADE;
ALTER SYSTEM KILL SESSION '1,2';
ALTER SYSTEM SWITCH LOGFILE;
EXPLAIN PLAN FOR INSERT INTO a VALUES (1, 'x');
EXPLAIN ANALYZE SELECT 1 FROM dual;
-- hints are accepted and reported as ignored
EXPLAIN PLAN FOR SELECT /*+ INDEX(a) */ id FROM a;
SELECT COUNT(*) FROM a;
-- BUG: analytic functions are silently evaluated as plain aggregates: Oracle returns 5
-- rows each holding 5 (one per row of A); lioscope returns 1 row.
SELECT COUNT(*) OVER () FROM a;
SELECT SUM(id) OVER (PARTITION BY v) FROM a;
-- BUG: the SAMPLE clause is silently ignored (all 5 rows are counted); it should be
-- rejected as not supported.
SELECT COUNT(*) FROM a SAMPLE (10);
-- BUG: TOP n (not Oracle syntax) is accepted and ignored: all 5 rows are returned.
SELECT TOP 2 id FROM a ORDER BY id;
-- BUG: TEMPORARY is ignored: a permanent table is created.
CREATE GLOBAL TEMPORARY TABLE gt (id INTEGER);
SELECT table_name FROM user_tables ORDER BY 1;
-- BUG (minor): INSERT ... RETURNING and SELECT ... INTO are accepted and the clause ignored.
INSERT INTO a VALUES (6, 'w') RETURNING id;
SELECT id INTO y FROM a WHERE id = 1;
