-- Fixed views: their columns (headings of an empty selection) and deterministic content.
SELECT * FROM v$statname ORDER BY 1;
SELECT name, value, isdefault, isses_modifiable, issys_modifiable FROM v$parameter ORDER BY name;
SELECT name, description FROM v$parameter WHERE name LIKE 'db%' ORDER BY name;
SHOW PARAMETERS
SHOW PARAMETER cache
SHOW PARAMETER nosuch
SELECT COUNT(*) FROM v$mystat;
SELECT statistic#, name FROM v$mystat WHERE name LIKE '%consistent%' ORDER BY statistic#;
SELECT COUNT(*) FROM v$sysstat;
SELECT stat_name FROM v$sys_time_model ORDER BY 1;
SELECT COUNT(DISTINCT stat_name) FROM v$sess_time_model;
SELECT name FROM v$latch;
SELECT type, program, status FROM v$session WHERE type = 'USER';
-- headings
SELECT * FROM v$mystat WHERE 1 = 0;
SELECT * FROM v$sesstat WHERE 1 = 0;
SELECT * FROM v$sysstat WHERE 1 = 0;
SELECT * FROM v$session WHERE 1 = 0;
SELECT * FROM v$session_event WHERE 1 = 0;
SELECT * FROM v$system_event WHERE 1 = 0;
SELECT * FROM v$event_histogram WHERE 1 = 0;
SELECT * FROM v$event_histogram_micro WHERE 1 = 0;
SELECT * FROM v$latch WHERE 1 = 0;
SELECT * FROM v$osstat WHERE 1 = 0;
SELECT * FROM user_tables WHERE 1 = 0;
SELECT * FROM user_segments WHERE 1 = 0;
-- undo: no transaction has begun yet
SELECT * FROM v$transaction;
SELECT * FROM v$undostat;
SELECT * FROM v$rollstat;
-- dictionary views
CREATE TABLE t1 (id INTEGER NOT NULL, name VARCHAR2(30), price NUMBER(8,2), qty NUMBER, code CHAR(4), born DATE);
CREATE TABLE t2 (x NUMBER(5)) PCTFREE 25;
SELECT table_name, tablespace_name, pct_free FROM user_tables ORDER BY table_name;
SELECT * FROM user_tab_columns ORDER BY table_name, column_id;
SELECT segment_name, segment_type, tablespace_name, bytes, blocks, extents, blocks_below_hwm FROM user_segments ORDER BY segment_name;
EXPLAIN PLAN FOR SELECT name FROM v$statname WHERE class = 64;
SELECT * FROM v$nosuch;
