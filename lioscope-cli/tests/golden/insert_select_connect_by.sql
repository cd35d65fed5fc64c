-- INSERT ... SELECT from the CONNECT BY generator, GENERATE_SERIES and the target table
-- itself (which reads the table as it was when the statement began).
CREATE TABLE t (id INTEGER, name VARCHAR2(20), grp CHAR(2), amt NUMBER(10,2), d DATE);
INSERT INTO t SELECT LEVEL, 'row ' || LEVEL, MOD(LEVEL, 3), LEVEL * 1.5, NULL FROM dual CONNECT BY LEVEL <= 10;
SELECT * FROM t ORDER BY id;
INSERT INTO t (id, name) SELECT id + 100, UPPER(name) FROM t WHERE id <= 2;
SELECT COUNT(*), SUM(id), COUNT(grp), MIN(name), MAX(name) FROM t;
INSERT INTO t SELECT * FROM t;
SELECT COUNT(*), SUM(id), SUM(amt) FROM t;
INSERT INTO t (id) SELECT n FROM generate_series(1, 5) g(n);
SELECT COUNT(*), COUNT(name), COUNT(DISTINCT id) FROM t;
INSERT INTO t (id, d) SELECT LEVEL, TO_DATE('2024-01-01', 'YYYY-MM-DD') + LEVEL FROM dual CONNECT BY LEVEL <= 3;
SELECT id, d FROM t WHERE d IS NOT NULL ORDER BY d;
INSERT INTO t (id, name) SELECT id, name FROM t WHERE 1 = 0;
INSERT INTO t (id) SELECT COUNT(*) FROM t;
SELECT MAX(id) FROM t;
-- errors: the statement's rows are all removed again
INSERT INTO t (id, name) VALUES (1);
INSERT INTO t (id, nosuch) VALUES (1, 2);
INSERT INTO nosuch VALUES (1);
INSERT INTO t (id, id) VALUES (1, 2);
INSERT INTO t SELECT LEVEL FROM dual CONNECT BY LEVEL <= 3;
-- the column count is checked even when the query returns no rows
INSERT INTO t (id, name) SELECT id FROM t WHERE 1 = 0;
INSERT INTO t (id, name) SELECT LEVEL, RPAD('x', LEVEL * 5, 'x') FROM dual CONNECT BY LEVEL <= 5;
SELECT COUNT(*) FROM t;
