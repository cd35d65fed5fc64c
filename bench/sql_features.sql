-- The cost of correlated UPDATE and DELETE, MERGE, a top-N by ROW_NUMBER and a view
-- filtered by a pushed predicate, each timed
-- beside the same work done another way in the same run. Run on a new database:
--   lioscope create /tmp/features && lioscope sql /tmp/features -f bench/sql_features.sql
CREATE TABLE big (id NUMBER PRIMARY KEY, k NUMBER, x NUMBER, pad VARCHAR2(50));
INSERT INTO big SELECT LEVEL, MOD(LEVEL, 1000), 0, RPAD('x', 50, 'x') FROM dual CONNECT BY LEVEL <= 200000;
CREATE TABLE small (k NUMBER, w NUMBER);
INSERT INTO small SELECT LEVEL - 1, LEVEL * 2 FROM dual CONNECT BY LEVEL <= 1000;
CREATE TABLE src (id NUMBER, x NUMBER);
INSERT INTO src SELECT LEVEL * 3000, 7 FROM dual CONNECT BY LEVEL <= 100;
CREATE TABLE t (id NUMBER, g NUMBER, v NUMBER);
INSERT INTO t SELECT LEVEL, MOD(LEVEL, 100), MOD(LEVEL * 7919, 1000003) FROM dual CONNECT BY LEVEL <= 300000;
COMMIT;
SET TIMING ON
-- MERGE of 100 source rows (66 matched, 34 inserted) into 200,000: by the primary key's
-- index, then with the key hidden from it (a full scan).
MERGE INTO big USING src ON (big.id = src.id) WHEN MATCHED THEN UPDATE SET x = src.x WHEN NOT MATCHED THEN INSERT (id, k, x) VALUES (src.id, 0, src.x);
ROLLBACK;
MERGE INTO big USING src ON (big.id + 0 = src.id) WHEN MATCHED THEN UPDATE SET x = src.x WHEN NOT MATCHED THEN INSERT (id, k, x) VALUES (src.id, 0, src.x);
ROLLBACK;
-- Every row updated: from a correlated subquery (1,000 distinct keys), then from an
-- expression giving the same values.
UPDATE big SET x = (SELECT w FROM small WHERE small.k = big.k);
ROLLBACK;
UPDATE big SET x = k * 2 + 2;
ROLLBACK;
UPDATE big SET x = (SELECT w FROM small WHERE small.k = big.k);
ROLLBACK;
UPDATE big SET x = k * 2 + 2;
ROLLBACK;
-- Half the rows deleted by NOT EXISTS.
DELETE FROM big WHERE NOT EXISTS (SELECT 1 FROM small WHERE small.k = big.k AND small.w > 1000);
ROLLBACK;
-- Top 10 of 300,000 by ROW_NUMBER: the bound pushed into the window (WINDOW SORT PUSHED
-- RANK), then hidden from it (`rn + 0`); and the top 10 of each of 100 groups.
SELECT COUNT(*) FROM (SELECT id, ROW_NUMBER() OVER (ORDER BY v DESC) rn FROM t) WHERE rn <= 10;
SELECT COUNT(*) FROM (SELECT id, ROW_NUMBER() OVER (ORDER BY v DESC) rn FROM t) WHERE rn + 0 <= 10;
SELECT COUNT(*) FROM (SELECT id, ROW_NUMBER() OVER (ORDER BY v DESC) rn FROM t) WHERE rn <= 10;
SELECT COUNT(*) FROM (SELECT id, ROW_NUMBER() OVER (ORDER BY v DESC) rn FROM t) WHERE rn + 0 <= 10;
SELECT COUNT(*) FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY g ORDER BY v DESC) rn FROM t) WHERE rn <= 10;
SELECT COUNT(*) FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY g ORDER BY v DESC) rn FROM t) WHERE rn + 0 <= 10;
-- A WHERE conjunct on a view's columns pushed into the view (the primary key's probe,
-- the scan's filter below the aggregation), then kept above it (the same value from a
-- subquery, which is never pushed): a full scan of the view's rows, every group made.
CREATE VIEW big_v AS SELECT id, k, x * 2 x2 FROM big WHERE k > 0;
CREATE VIEW big_k AS SELECT k, COUNT(*) n, SUM(x) sx FROM big GROUP BY k;
SELECT * FROM big_v WHERE id = 4242;
SELECT * FROM big_v WHERE id = (SELECT 4242 FROM dual);
SELECT * FROM big_v WHERE id = 4242;
SELECT * FROM big_v WHERE id = (SELECT 4242 FROM dual);
SELECT * FROM big_k WHERE k = 42;
SELECT * FROM big_k WHERE k = (SELECT 42 FROM dual);
SELECT * FROM big_k WHERE k = 42;
SELECT * FROM big_k WHERE k = (SELECT 42 FROM dual);
