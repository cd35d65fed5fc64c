-- A full scan of a table over three 1 MB extents after FLUSH BUFFER_CACHE: every block
-- below the high-water mark is read once; a multiblock read never crosses an extent and
-- reads at most db_file_multiblock_read_count blocks. With 305 blocks (header + 127 in
-- the first extent, 128 in the second, 49 in the third):
--   MBRC 128: 1 header read + 3 multiblock reads (127, 128, 49)
--   MBRC 100: 1 header read + 5 multiblock reads (100+27, 100+28, 49)
CREATE TABLE big (id INTEGER, pad VARCHAR2(100));
INSERT INTO big SELECT LEVEL, RPAD('x', 100, 'x') FROM dual CONNECT BY LEVEL <= 20000;
SELECT blocks_below_hwm, blocks, extents FROM user_segments;
ALTER SYSTEM FLUSH BUFFER_CACHE;
SET AUTOTRACE STATISTICS
SELECT COUNT(*) FROM big;
-- As in SQL*Plus, AUTOTRACE prints no statistics after ALTER SESSION / ALTER SYSTEM.
ALTER SESSION SET db_file_multiblock_read_count = 100;
SET AUTOTRACE OFF
ALTER SYSTEM FLUSH BUFFER_CACHE;
SET AUTOTRACE STATISTICS
SELECT COUNT(*) FROM big;
SET AUTOTRACE OFF
