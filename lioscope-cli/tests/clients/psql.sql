-- psql against lioscope serve: plain SQL, transaction blocks, settings, \copy, errors.
\set ON_ERROR_STOP 0
CREATE TABLE emp (id NUMBER(6) PRIMARY KEY, name VARCHAR2(20), salary NUMBER(8,2), hired DATE);
INSERT INTO emp VALUES (1, 'KING', 5000, DATE '1981-11-17');
INSERT INTO emp VALUES (2, 'BLAKE', 2850.5, DATE '1981-05-01');
BEGIN;
INSERT INTO emp VALUES (3, 'CLARK', 2450, DATE '1981-06-09');
SELECT COUNT(*) AS in_block FROM emp;
ROLLBACK;
SELECT id, name, salary, hired FROM emp ORDER BY id;
\copy emp FROM 'clients/emp.tsv'
SELECT name, salary * 12 AS yearly FROM emp WHERE id > 2 ORDER BY id;
SELECT * FROM no_such_table;
INSERT INTO emp VALUES (1, 'DUPLICATE', 1, NULL);
SET application_name = 'payroll';
SHOW application_name;
SELECT program FROM v$session WHERE sid = (SELECT MAX(sid) FROM v$mystat);
BEGIN ISOLATION LEVEL SERIALIZABLE;
UPDATE emp SET salary = salary + 100 WHERE id = 1;
SELECT salary FROM emp WHERE id = 1;
COMMIT;
\x on
SELECT id, name FROM emp WHERE id = 1;
