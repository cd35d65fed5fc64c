-- TRUNCATE empties a table and brings its segment back to one extent with the
-- high-water mark just above the segment header; DROP removes table and segment.
CREATE TABLE t (id INTEGER, pad VARCHAR2(100));
INSERT INTO t SELECT LEVEL, RPAD('x', 100, 'x') FROM dual CONNECT BY LEVEL <= 20000;
SELECT segment_name, blocks, extents, blocks_below_hwm FROM user_segments;
TRUNCATE TABLE t;
SELECT COUNT(*) FROM t;
SELECT segment_name, blocks, extents, blocks_below_hwm FROM user_segments;
SET AUTOTRACE STATISTICS
SELECT COUNT(*) FROM t;
SET AUTOTRACE OFF
INSERT INTO t VALUES (1, 'again');
SELECT * FROM t;
SELECT segment_name, blocks, extents, blocks_below_hwm FROM user_segments;
TRUNCATE t;
SELECT COUNT(*) FROM t;
TRUNCATE TABLE nosuch;
DROP TABLE t;
SELECT COUNT(*) FROM t;
INSERT INTO t VALUES (1, 'x');
SELECT COUNT(*) FROM user_tables;
SELECT COUNT(*) FROM user_segments;
DROP TABLE t;
DROP TABLE IF EXISTS t;
-- the name can be used again, with new columns
CREATE TABLE t (x VARCHAR2(5));
INSERT INTO t VALUES ('new');
SELECT * FROM t;
CREATE TABLE u (a INTEGER);
CREATE TABLE v (a INTEGER);
DROP TABLE u, v;
SELECT table_name FROM user_tables ORDER BY 1;
DROP TABLE t PURGE;
SELECT table_name FROM user_tables ORDER BY 1;
DROP TABLE v$statname;
DROP TABLE dual;
