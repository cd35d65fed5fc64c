-- ANALYZE TABLE: table and column statistics, the views that show them, and the
-- estimates EXPLAIN PLAN then prints.
CREATE TABLE s (id INTEGER NOT NULL, grp VARCHAR2(10), val NUMBER(6,2), born DATE);
INSERT INTO s SELECT LEVEL, CASE WHEN MOD(LEVEL, 4) = 0 THEN NULL ELSE 'g' || MOD(LEVEL, 7) END, MOD(LEVEL, 100) / 4, TO_DATE('2001-01-01', 'YYYY-MM-DD') + MOD(LEVEL, 30) FROM dual CONNECT BY LEVEL <= 2000;
SELECT table_name, num_rows, blocks, avg_row_len, sample_size FROM user_tables;
EXPLAIN PLAN FOR SELECT COUNT(*) FROM s WHERE id > 1000;
ANALYZE TABLE s COMPUTE STATISTICS;
SELECT table_name, num_rows, blocks, avg_row_len, sample_size FROM user_tables;
SELECT column_name, num_distinct, low_value, high_value, num_nulls, avg_col_len, sample_size FROM user_tab_columns ORDER BY column_id;
EXPLAIN PLAN FOR SELECT COUNT(*) FROM s WHERE id > 1500;
EXPLAIN PLAN FOR SELECT COUNT(*) FROM s WHERE id BETWEEN 101 AND 300 AND grp = 'g1';
EXPLAIN PLAN FOR SELECT grp, COUNT(*) FROM s GROUP BY grp;
EXPLAIN PLAN FOR SELECT * FROM s WHERE grp IS NULL AND ROWNUM <= 5;
-- Hints: those that do not apply, and words that are not hints, are reported.
EXPLAIN PLAN FOR SELECT /*+ FULL(s) INDEX(x) PARALLEL(s 4) */ COUNT(*) FROM s;
-- A sample: the row and block counts stay exact; the column figures are estimated.
ANALYZE TABLE s ESTIMATE STATISTICS SAMPLE 50 PERCENT;
SELECT table_name, num_rows, blocks, sample_size FROM user_tables;
SELECT column_name, num_distinct, num_nulls, sample_size FROM user_tab_columns ORDER BY column_id;
ANALYZE TABLE s ESTIMATE STATISTICS SAMPLE 100 ROWS;
SELECT column_name, num_distinct, sample_size FROM user_tab_columns ORDER BY column_id;
-- Errors.
ANALYZE TABLE nosuch COMPUTE STATISTICS;
ANALYZE TABLE s COMPUTE;
ANALYZE TABLE s ESTIMATE STATISTICS SAMPLE 0 PERCENT;
ANALYZE TABLE s ESTIMATE STATISTICS SAMPLE 10 BLOCKS;
-- Statistics survive in the dictionary; DML does not change them until the next ANALYZE.
INSERT INTO s SELECT 2000 + LEVEL, 'new', 1, NULL FROM dual CONNECT BY LEVEL <= 10;
SELECT num_rows FROM user_tables;
ANALYZE TABLE s COMPUTE STATISTICS;
SELECT num_rows FROM user_tables;
