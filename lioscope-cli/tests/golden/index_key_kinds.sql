-- Index key ranges respect SQL's comparison of each type: LIKE bounds only text keys,
-- a string compared with a DATE is a date, CHAR compares blank-padded; estimates use the
-- column's own scale.
CREATE TABLE k (id INTEGER NOT NULL, d DATE, c CHAR(5), v VARCHAR2(10));
INSERT INTO k SELECT LEVEL, TO_DATE('2020-01-01', 'YYYY-MM-DD') + MOD(LEVEL, 30), 'x' || MOD(LEVEL, 7), 'v' || MOD(LEVEL, 50) FROM dual CONNECT BY LEVEL <= 3000;
CREATE INDEX k_d ON k (d);
CREATE INDEX k_c ON k (c);
CREATE INDEX k_v ON k (v);
ANALYZE TABLE k COMPUTE STATISTICS;
-- LIKE on a DATE compares the date's text: no index range.
SELECT COUNT(*) FROM k WHERE d LIKE '2020-01-1%';
SELECT /*+ FULL(k) */ COUNT(*) FROM k WHERE d LIKE '2020-01-1%';
EXPLAIN PLAN FOR SELECT COUNT(*) FROM k WHERE d LIKE '2020-01-1%';
-- A string against a DATE column is a date, for the range and for the estimate.
SELECT COUNT(*) FROM k WHERE d < '2020-01-29';
EXPLAIN PLAN FOR SELECT COUNT(*) FROM k WHERE d < '2020-01-29';
-- CHAR(5) compared with a shorter string: blank-padded, on every path.
SELECT COUNT(*) FROM k WHERE c = 'x1';
SELECT /*+ FULL(k) */ COUNT(*) FROM k WHERE c = 'x1';
SELECT /*+ INDEX(k k_c) */ COUNT(*) FROM k WHERE c BETWEEN 'x1' AND 'x2';
SELECT /*+ FULL(k) */ COUNT(*) FROM k WHERE c BETWEEN 'x1' AND 'x2';
-- A number against a VARCHAR2 column compares numbers: no index range on the text.
EXPLAIN PLAN FOR SELECT COUNT(*) FROM k WHERE v > 5;
-- LIKE with a prefix bounds a text index and is checked again.
SELECT /*+ INDEX(k k_v) */ COUNT(*) FROM k WHERE v LIKE 'v1%';
SELECT /*+ FULL(k) */ COUNT(*) FROM k WHERE v LIKE 'v1%';
