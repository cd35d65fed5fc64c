-- psql against lioscope serve: plain SQL, transaction blocks, settings, \copy, errors,
-- and the meta-commands that read the catalogs (\dt, \d, \di, \l, ...).
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
CREATE TABLE dept (deptno NUMBER(2) PRIMARY KEY, dname VARCHAR2(14) NOT NULL);
CREATE TABLE staff (id NUMBER GENERATED ALWAYS AS IDENTITY, name VARCHAR2(20) NOT NULL, deptno NUMBER(2) CONSTRAINT staff_dept_fk REFERENCES dept, CONSTRAINT staff_pk PRIMARY KEY (id), CONSTRAINT staff_name_ck CHECK (name <> 'nobody'));
CREATE INDEX staff_dept ON staff (deptno);
CREATE VIEW dept_staff AS SELECT d.dname, s.name FROM dept d JOIN staff s ON s.deptno = d.deptno;
CREATE SEQUENCE invoice_seq;
\dt
\dt+ emp
\d staff
\d dept
\di
\dv
\ds
\d staff_dept
\d dept_staff
\dt s*
\d no_such_thing
\l
\dn
\du
SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns WHERE table_name = 'staff' ORDER BY ordinal_position;
\x on
SELECT id, name FROM emp WHERE id = 1;
