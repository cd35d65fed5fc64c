-- v$sql: one row per statement text with its totals over every execution: executions,
-- rows processed (rows fetched, or changed), buffer gets and disk reads. Times vary from
-- run to run and are not shown here; the performance-counter columns are NULL until an
-- execution runs with counters on (SET AUTOTRACE ... CPU).
CREATE TABLE vs (id INTEGER, name VARCHAR2(20));
INSERT INTO vs SELECT LEVEL, 'n' || LEVEL FROM dual CONNECT BY LEVEL <= 500;
SELECT COUNT(*) FROM vs;
SELECT COUNT(*) FROM vs;
SELECT id FROM vs WHERE id <= 3;
-- Another text is another statement, even when only a literal differs.
SELECT id FROM vs WHERE id <= 4;
SELECT sql_id, sql_text, executions, rows_processed, buffer_gets, disk_reads, counted_executions, instructions FROM v$sql WHERE sql_text LIKE '%vs%' AND sql_text NOT LIKE '%v$sql%' ORDER BY sql_text;
