-- parameter undo_tablespace_size: 72K
-- parameter undo_tablespace_maxsize: 72K
-- A read-only transaction keeps its snapshot while another session changes and commits
-- the same rows again and again. The tiny undo tablespace (one segment of six undo
-- blocks, not allowed to grow) is reused, so the undo the old snapshot needs is overwritten: the query fails
-- with "snapshot too old" instead of returning a wrong answer.
CREATE TABLE t (id NUMBER NOT NULL, v NUMBER NOT NULL, pad VARCHAR2(20));
INSERT INTO t SELECT LEVEL, 1, RPAD('p', 20, 'p') FROM dual CONNECT BY LEVEL <= 300;
COMMIT;
-- session 2
SET TRANSACTION READ ONLY;
SELECT SUM(v) FROM t;
-- session 1
UPDATE t SET v = v + 1;
COMMIT;
UPDATE t SET v = v + 1;
COMMIT;
UPDATE t SET v = v + 1;
COMMIT;
UPDATE t SET v = v + 1;
COMMIT;
UPDATE t SET v = v + 1;
COMMIT;
UPDATE t SET v = v + 1;
COMMIT;
-- session 2
SELECT SUM(v) FROM t;
COMMIT;
SELECT SUM(v) FROM t;
SELECT ssolderrcnt FROM v$undostat;
