-- Hybrid Columnar Compression: CREATE TABLE ... AS SELECT at each level gives back the
-- rows it was given, in fewer blocks; a scan's EHCC statistics; DELETE marks rows in
-- their unit, UPDATE moves them out to row blocks; INSERT /*+ APPEND */ loads new units
-- inside the transaction (gone on rollback); ALTER TABLE ... MOVE recompresses or
-- uncompresses; what is refused.
CREATE TABLE src (id NUMBER NOT NULL, name VARCHAR2(30), grp NUMBER, note VARCHAR2(20));
INSERT INTO src SELECT LEVEL, 'name-' || MOD(LEVEL, 50), MOD(LEVEL, 7), CASE WHEN MOD(LEVEL, 5) = 0 THEN NULL ELSE 'n' || MOD(LEVEL, 3) END FROM dual CONNECT BY LEVEL <= 4000;
COMMIT;
CREATE TABLE ql COMPRESS FOR QUERY LOW AS SELECT * FROM src;
CREATE TABLE qh COMPRESS FOR QUERY HIGH AS SELECT * FROM src;
CREATE TABLE al COMPRESS FOR ARCHIVE LOW AS SELECT * FROM src;
CREATE TABLE ah COLUMN STORE COMPRESS FOR ARCHIVE HIGH AS SELECT * FROM src;
CREATE TABLE plain NOCOMPRESS AS SELECT * FROM src;
SELECT table_name, compression, compress_for FROM user_tables ORDER BY table_name;
SELECT segment_name, blocks_below_hwm FROM user_segments ORDER BY segment_name;
-- Every level gives back the same rows.
SELECT COUNT(*), SUM(id), COUNT(note), MIN(name), MAX(name), SUM(grp) FROM src;
SELECT COUNT(*), SUM(id), COUNT(note), MIN(name), MAX(name), SUM(grp) FROM ql;
SELECT COUNT(*), SUM(id), COUNT(note), MIN(name), MAX(name), SUM(grp) FROM qh;
SELECT COUNT(*), SUM(id), COUNT(note), MIN(name), MAX(name), SUM(grp) FROM al;
SELECT COUNT(*), SUM(id), COUNT(note), MIN(name), MAX(name), SUM(grp) FROM ah;
SELECT id, name, grp, note FROM ah WHERE id IN (1, 5, 3999, 4000) ORDER BY id;
-- The EHCC statistics of one scan of the QUERY HIGH copy (cumulative in the session:
-- before, then after).
SELECT name, value FROM v$mystat WHERE name LIKE 'EHCC%' ORDER BY name;
SELECT COUNT(name) FROM qh WHERE grp = 3;
SELECT name, value FROM v$mystat WHERE name LIKE 'EHCC%' ORDER BY name;
-- A statement that reads no column decompresses nothing: its rows are counted from the
-- units' heads (EHCC Rows Not Decompressed).
SELECT COUNT(*) FROM al;
SELECT name, value FROM v$mystat WHERE name IN ('EHCC CUs Decompressed', 'EHCC Rows Not Decompressed') ORDER BY name;
-- DELETE marks rows deleted in their units; UPDATE moves the new versions to row blocks.
DELETE FROM ql WHERE MOD(id, 10) = 0;
UPDATE ql SET name = 'updated' WHERE id BETWEEN 1 AND 5;
SELECT name, value FROM v$mystat WHERE name = 'HCC rows moved out by update';
COMMIT;
SELECT COUNT(*), SUM(id), COUNT(note) FROM ql;
SELECT id, name FROM ql WHERE id <= 11 ORDER BY id;
-- INSERT /*+ APPEND */ ... SELECT: new units above the high-water mark, invisible to
-- others until commit, gone after a rollback.
INSERT /*+ APPEND */ INTO qh SELECT id + 4000, name, grp, note FROM src WHERE id <= 1500;
-- session 2
SELECT COUNT(*) FROM qh;
-- session 1
ROLLBACK;
SELECT COUNT(*), MAX(id) FROM qh;
INSERT /*+ APPEND */ INTO qh SELECT id + 4000, name, grp, note FROM src WHERE id <= 1500;
COMMIT;
-- session 2
SELECT COUNT(*), MAX(id), SUM(id) FROM qh;
-- session 1
SELECT name, value FROM v$mystat WHERE name LIKE 'HCC load direct%' ORDER BY name;
-- ALTER TABLE ... MOVE: the live rows into a new segment, at another level or as rows.
ALTER TABLE ql MOVE COMPRESS FOR ARCHIVE HIGH;
SELECT table_name, compression, compress_for FROM user_tables WHERE table_name = 'QL';
SELECT COUNT(*), SUM(id), COUNT(note) FROM ql;
ALTER TABLE ql MOVE NOCOMPRESS;
SELECT table_name, compression, compress_for FROM user_tables WHERE table_name = 'QL';
SELECT COUNT(*), SUM(id), COUNT(note) FROM ql;
ALTER TABLE qh MOVE;
SELECT table_name, compress_for FROM user_tables WHERE table_name = 'QH';
SELECT COUNT(*), SUM(id) FROM qh;
-- Refused: row-level compression, and the column store on a compressed table.
CREATE TABLE bad COMPRESS AS SELECT * FROM src;
CREATE TABLE bad COMPRESS FOR OLTP AS SELECT * FROM src;
CREATE TABLE bad COMPRESS BASIC AS SELECT * FROM src;
ALTER TABLE ah INMEMORY;
-- NO INMEMORY on a compressed table changes nothing and is allowed; compressing a table
-- marked INMEMORY is refused, as INMEMORY on a compressed table is.
ALTER TABLE ah NO INMEMORY;
ALTER TABLE plain INMEMORY;
ALTER TABLE plain MOVE COMPRESS FOR QUERY LOW;
ALTER TABLE plain NO INMEMORY;
ALTER TABLE plain MOVE COMPRESS FOR QUERY LOW;
SELECT table_name, compress_for, inmemory FROM user_tables WHERE table_name IN ('AH', 'PLAIN') ORDER BY table_name;
SELECT COUNT(*), SUM(id) FROM plain;
