CREATE TABLE t (id INTEGER, name VARCHAR2(20), price NUMBER(8,2));
INSERT INTO t VALUES (1, 'one', 1.5), (2, 'two', NULL), (3, 'three', 10.255);
SELECT * FROM t ORDER BY id;
SELECT COUNT(*), COUNT(price), SUM(price), AVG(id) FROM t;
SELECT name FROM t WHERE price IS NULL;
SELECT id FROM t WHERE name IN ('one', 'three') AND id BETWEEN 1 AND 3 ORDER BY id DESC;
