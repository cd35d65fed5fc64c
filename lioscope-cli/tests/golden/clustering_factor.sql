-- block_size: 2048
-- CLUSTERING_FACTOR of user_indexes is the number of times the table block changes
-- between consecutive entries in index order, the first entry counting one: the number of
-- table blocks an index full scan with TABLE ACCESS BY INDEX ROWID visits one after
-- another. It lies between the table's blocks (entries in the rows' order) and the
-- index's rows (every entry in another block than the one before).
--
-- Layout: PCTFREE 0 and rows of about 185 bytes fill each 2 KiB block with exactly ten
-- rows, in insert order, so the row inserted at position POS lives in the table's data
-- block number BLK = FLOOR(POS / 10). The table is loaded with 201 rows first: ANALYZE
-- finds them in 21 blocks, ten a block (nine would take 23 blocks, eleven 19); deleting
-- the 201st row leaves POS 0..199 in 20 blocks of ten.
CREATE TABLE t (pos INTEGER NOT NULL, blk INTEGER NOT NULL, ordered INTEGER, reversed INTEGER, strided INTEGER, halves INTEGER, sparse INTEGER, pad CHAR(155)) PCTFREE 0;
-- ordered:  POS itself, the rows' order.
-- reversed: 199 - POS, the rows' order backwards.
-- strided:  MOD(POS, 10) * 1000 + POS: the first row of every block, then the second
--           row of every block, ...
-- halves:   MOD(POS, 2) * 1000 + POS: the even positions in order, then the odd ones.
-- sparse:   POS on every third row (POS divisible by 3), NULL elsewhere.
INSERT INTO t SELECT LEVEL - 1, FLOOR((LEVEL - 1) / 10), LEVEL - 1, 200 - LEVEL, MOD(LEVEL - 1, 10) * 1000 + LEVEL - 1, MOD(LEVEL - 1, 2) * 1000 + LEVEL - 1, CASE WHEN MOD(LEVEL - 1, 3) = 0 THEN LEVEL - 1 END, 'x' FROM dual CONNECT BY LEVEL <= 201;
ANALYZE TABLE t COMPUTE STATISTICS;
SELECT num_rows, blocks, avg_row_len FROM user_tables;
DELETE FROM t WHERE pos = 200;
COMMIT;
SELECT COUNT(*), COUNT(DISTINCT blk), MIN(blk), MAX(blk) FROM t;
-- Expected, from the layout:
--   t_ordered   20: entries visit blocks 0, 0, ... (ten times), 1, ...: one change a block.
--   t_reversed  20: the same blocks backwards, still ten entries a block in a row.
--   t_blk       20: the key is BLK itself; equal keys are in rowid order.
--   t_strided  200: consecutive entries are ten rows apart, always in another block (and
--                   the last block of one round is not the first of the next).
--   t_halves    40: the even positions visit the 20 blocks once (five entries each),
--                   then the odd positions visit them again.
--   t_sparse    20: 67 entries; every block holds three or four of them, in order.
--   t_pos_blk   20: a two-column key in the rows' order.
CREATE INDEX t_ordered ON t (ordered);
CREATE INDEX t_reversed ON t (reversed);
CREATE INDEX t_blk ON t (blk);
CREATE INDEX t_strided ON t (strided);
CREATE INDEX t_halves ON t (halves);
CREATE INDEX t_sparse ON t (sparse);
CREATE UNIQUE INDEX t_pos_blk ON t (pos, blk);
SELECT index_name, num_rows, distinct_keys, clustering_factor FROM user_indexes ORDER BY index_name;
-- ANALYZE computes the same figures again from the index itself.
ANALYZE TABLE t COMPUTE STATISTICS;
SELECT index_name, num_rows, distinct_keys, clustering_factor FROM user_indexes ORDER BY index_name;
-- Changes after the build: deleting the rows of blocks 10..19 leaves 100 rows in 10
-- blocks: 10 block changes for ordered, 20 for halves (each block visited twice), 100
-- for strided. The statistics move at the next ANALYZE only.
DELETE FROM t WHERE blk >= 10;
SELECT index_name, num_rows, clustering_factor FROM user_indexes WHERE index_name IN ('T_ORDERED', 'T_HALVES', 'T_STRIDED') ORDER BY index_name;
ANALYZE TABLE t COMPUTE STATISTICS;
SELECT index_name, num_rows, clustering_factor FROM user_indexes WHERE index_name IN ('T_ORDERED', 'T_HALVES', 'T_STRIDED') ORDER BY index_name;
-- Moving keys: reversing ordered within the remaining 100 rows keeps it one change a
-- block; giving strided the row's position makes it ordered (10 blocks).
UPDATE t SET ordered = 99 - ordered, strided = pos;
ANALYZE TABLE t COMPUTE STATISTICS;
SELECT index_name, num_rows, clustering_factor FROM user_indexes WHERE index_name IN ('T_ORDERED', 'T_HALVES', 'T_STRIDED') ORDER BY index_name;
-- A key random with respect to the rows: 30 rows in 3 blocks of ten (3 blocks hold 30
-- rows, so ten a block at least; a 31st row takes a 4th block, so ten at most; it is
-- deleted again). The listing in key order (equal keys in rowid order) shows the block of
-- each entry; counting the changes down the BLK column, the first entry counting one,
-- gives 23.
CREATE TABLE r (pos INTEGER NOT NULL, blk INTEGER NOT NULL, k INTEGER, pad CHAR(167)) PCTFREE 0;
INSERT INTO r SELECT LEVEL - 1, FLOOR((LEVEL - 1) / 10), ORA_HASH(LEVEL, 99, 3), 'x' FROM dual CONNECT BY LEVEL <= 30;
ANALYZE TABLE r COMPUTE STATISTICS;
SELECT num_rows, blocks FROM user_tables WHERE table_name = 'R';
INSERT INTO r VALUES (30, 3, 0, 'x');
ANALYZE TABLE r COMPUTE STATISTICS;
SELECT num_rows, blocks FROM user_tables WHERE table_name = 'R';
DELETE FROM r WHERE pos = 30;
COMMIT;
CREATE INDEX r_k ON r (k);
SELECT k, pos, blk FROM r ORDER BY k, pos;
SELECT index_name, num_rows, distinct_keys, clustering_factor FROM user_indexes WHERE table_name = 'R';
