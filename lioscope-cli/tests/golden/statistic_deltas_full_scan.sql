-- SET AUTOTRACE STATISTICS around full scans. A full scan's consistent gets are the
-- segment header plus every block below the high-water mark; right after the load the
-- blocks are cached (0 physical reads); after FLUSH BUFFER_CACHE the scan reads them all:
-- the header with a single-block read, the rest with multiblock reads of at most
-- db_file_multiblock_read_count blocks.
CREATE TABLE empty_t (id INTEGER);
CREATE TABLE big (id INTEGER, pad VARCHAR2(100));
INSERT INTO big SELECT LEVEL, RPAD('x', 100, 'x') FROM dual CONNECT BY LEVEL <= 2000;
SELECT segment_name, blocks_below_hwm, blocks, extents FROM user_segments ORDER BY segment_name;
SET AUTOTRACE STATISTICS
SELECT COUNT(*) FROM empty_t;
SELECT COUNT(*) FROM big;
SELECT COUNT(*) FROM big WHERE id > 1990;
SET AUTOTRACE OFF
ALTER SYSTEM FLUSH BUFFER_CACHE;
SET AUTOTRACE STATISTICS
SELECT COUNT(*) FROM big;
SELECT COUNT(*) FROM big;
SET AUTOTRACE OFF
ALTER SESSION SET db_file_multiblock_read_count = 8;
ALTER SYSTEM FLUSH BUFFER_CACHE;
SET AUTOTRACE STATISTICS
SELECT COUNT(*) FROM big;
-- a sort counts its rows
SELECT id FROM big ORDER BY id DESC FETCH FIRST 2 ROWS ONLY;
-- a stopkey stops after the first block.
-- A scan that stops early counts only the blocks it visited: the segment header and one
-- block (the block it had got ahead of time is not counted).
SELECT id FROM big WHERE ROWNUM <= 3;
SET AUTOTRACE OFF
