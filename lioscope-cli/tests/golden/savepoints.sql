-- Savepoints, statement-level rollback of a failed statement, and ROLLBACK.
CREATE TABLE t (id NUMBER NOT NULL, name VARCHAR2(5));
INSERT INTO t VALUES (1, 'one');
SAVEPOINT a;
INSERT INTO t VALUES (2, 'two');
UPDATE t SET name = 'uno' WHERE id = 1;
SAVEPOINT b;
DELETE FROM t WHERE id = 2;
SELECT id, name FROM t ORDER BY id;
ROLLBACK TO SAVEPOINT b;
SELECT id, name FROM t ORDER BY id;
ROLLBACK TO a;
SELECT id, name FROM t ORDER BY id;
-- A multi-row update whose last row does not fit: the statement changes nothing.
INSERT INTO t VALUES (3, 'three');
UPDATE t SET name = CASE WHEN id = 3 THEN 'eleven' ELSE 'x' END;
SELECT id, name FROM t ORDER BY id;
ROLLBACK TO SAVEPOINT c;
COMMIT;
ROLLBACK;
SELECT id, name FROM t ORDER BY id;
SELECT name, value FROM v$mystat WHERE name IN ('user commits', 'user rollbacks') ORDER BY name;
