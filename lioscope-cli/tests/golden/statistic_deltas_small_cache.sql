-- db_cache_size: 1M
-- A table larger than the buffer cache (305 blocks, 128 buffers of 8 KB): every full scan
-- reads the whole table from disk again, in multiblock reads limited to a quarter of the
-- cache (32 blocks): 4 + 4 + 2 reads for the three extents, plus the segment header
-- (still cached by the first scan, right after the load). Scans of such a table count as
-- "table scans (long tables)".
CREATE TABLE big (id INTEGER, pad VARCHAR2(100));
INSERT INTO big SELECT LEVEL, RPAD('x', 100, 'x') FROM dual CONNECT BY LEVEL <= 20000;
SELECT blocks_below_hwm FROM user_segments;
SELECT name, value FROM v$parameter WHERE name = 'db_cache_size';
SET AUTOTRACE STATISTICS
SELECT COUNT(*), SUM(id) FROM big;
SELECT COUNT(*), SUM(id) FROM big;
SELECT id FROM big WHERE id IN (1, 20000) ORDER BY id;
SET AUTOTRACE OFF
SELECT name, value FROM v$mystat WHERE name IN ('table scans (long tables)', 'table scans (short tables)') ORDER BY name;
