-- DDL commits the session's own transaction first, and refuses to run on a table with
-- another session's uncommitted changes (Oracle's ORA-00054).
CREATE TABLE t (id NUMBER NOT NULL);
INSERT INTO t SELECT LEVEL FROM dual CONNECT BY LEVEL <= 5;
CREATE TABLE u (id NUMBER);
ROLLBACK;
SELECT COUNT(*) FROM t;
DELETE FROM t WHERE id = 1;
-- session 2
TRUNCATE TABLE t;
DROP TABLE t;
SELECT COUNT(*) FROM t;
-- session 1
COMMIT;
-- session 2
TRUNCATE TABLE t;
SELECT COUNT(*) FROM t;
