-- block_size: 2048
-- Logical reads of TABLE ACCESS BY INDEX ROWID follow the clustering factor. PCTFREE 0 and
-- rows of about 185 bytes put exactly ten rows in each 2 KiB block, in insert order: 200
-- rows in 20 blocks (clustering_factor.sql shows how such a layout is checked; here the
-- clustering factor of t_seq, 20, says it too).
-- seq is the row's position: consecutive entries of its index point into the same block
-- ten times in a row. rnd = MOD(seq * 37, 200) is a permutation of the positions random
-- with respect to them: consecutive keys k and k + 1 are rows 173 positions apart
-- (37 * 173 = 6401 = 1 + 32 * 200), always in another block.
CREATE TABLE t (seq INTEGER NOT NULL, rnd INTEGER NOT NULL, pad CHAR(175)) PCTFREE 0;
INSERT INTO t SELECT LEVEL - 1, MOD((LEVEL - 1) * 37, 200), 'x' FROM dual CONNECT BY LEVEL <= 200;
CREATE INDEX t_seq ON t (seq);
CREATE INDEX t_rnd ON t (rnd);
ANALYZE TABLE t COMPUTE STATISTICS;
SELECT num_rows, blocks FROM user_tables;
SELECT index_name, blevel, leaf_blocks, num_rows, clustering_factor FROM user_indexes ORDER BY index_name;
SET AUTOTRACE ON
-- The full scan, for reference: the segment header and the 20 blocks.
SELECT /*+ FULL(t) */ COUNT(pad) FROM t WHERE seq >= 0;
-- Good clustering: one consistent get a table block (20) besides the index's root and
-- leaves; the other 180 rows are read from the block still pinned (buffer is pinned count).
SELECT /*+ INDEX(t t_seq) */ COUNT(pad) FROM t WHERE seq >= 0;
-- Bad clustering: one consistent get a row (200), nothing found pinned.
SELECT /*+ INDEX(t t_rnd) */ COUNT(pad) FROM t WHERE rnd >= 0;
-- A range of 30 keys: three table blocks for t_seq, thirty for t_rnd.
SELECT /*+ INDEX(t t_seq) */ COUNT(pad) FROM t WHERE seq BETWEEN 100 AND 129;
SELECT /*+ INDEX(t t_rnd) */ COUNT(pad) FROM t WHERE rnd BETWEEN 100 AND 129;
-- The index alone: its root and leaves, no table block.
SELECT /*+ INDEX(t t_rnd) */ COUNT(rnd) FROM t WHERE rnd >= 0;
SELECT /*+ INDEX_FFS(t t_rnd) */ COUNT(*) FROM t;
