-- PCTFREE n keeps n% of each block free for later growth: the same 2000 rows need
-- 28 blocks at PCTFREE 0, 31 at the default 10 and 56 at 50 (plus the segment header).
CREATE TABLE p0 (id INTEGER, pad VARCHAR2(100)) PCTFREE 0;
CREATE TABLE p50 (id INTEGER, pad VARCHAR2(100)) PCTFREE 50;
CREATE TABLE pd (id INTEGER, pad VARCHAR2(100));
INSERT INTO p0 SELECT LEVEL, RPAD('x', 100, 'x') FROM dual CONNECT BY LEVEL <= 2000;
INSERT INTO p50 SELECT * FROM p0;
INSERT INTO pd SELECT * FROM p0;
SELECT segment_name, blocks_below_hwm, blocks, extents FROM user_segments ORDER BY segment_name;
SELECT table_name, pct_free FROM user_tables ORDER BY table_name;
SELECT COUNT(*), SUM(id) FROM p50;
SET AUTOTRACE STATISTICS
SELECT COUNT(*) FROM p0;
SELECT COUNT(*) FROM p50;
SET AUTOTRACE OFF
-- errors
CREATE TABLE bad (id INTEGER) PCTFREE 100;
CREATE TABLE bad (id INTEGER) PCTFREE -1;
CREATE TABLE bad (id INTEGER) PCTFREE x;
CREATE TABLE bad (id INTEGER) PCTFREE;
SELECT * FROM p0 PCTFREE 10;
-- PCTFREE keeps room in blocks that hold rows; an empty block takes any row that fits.
CREATE TABLE p99 (id INTEGER, pad VARCHAR2(100)) PCTFREE 99;
INSERT INTO p99 VALUES (1, 'x');
INSERT INTO p99 VALUES (2, 'y');
SELECT segment_name, blocks_below_hwm FROM user_segments WHERE segment_name = 'P99';
-- CREATE TABLE w (a VARCHAR2(4000), b VARCHAR2(4000));
-- INSERT INTO w VALUES (RPAD('a', 4000, 'a'), RPAD('b', 3500, 'b'));
