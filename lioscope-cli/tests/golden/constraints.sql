-- Table constraints: NOT NULL, CHECK, PRIMARY KEY and UNIQUE, inline and out of line,
-- named or named by the system (SYS_C...); Oracle's errors name the constraint; ALTER
-- TABLE adds, disables, enables and drops them; user_constraints and user_cons_columns.
CREATE TABLE dept (deptno INTEGER PRIMARY KEY, dname VARCHAR2(14) NOT NULL, loc VARCHAR2(13), CONSTRAINT dept_dname_uk UNIQUE (dname));
CREATE TABLE emp (empno INTEGER CONSTRAINT emp_pk PRIMARY KEY, ename VARCHAR2(10), sal NUMBER(7,2) CONSTRAINT emp_sal_ck CHECK (sal > 0), comm NUMBER(7,2), deptno INTEGER, CHECK (comm <= sal));
SELECT constraint_name, constraint_type, table_name, search_condition, status, generated, index_name FROM user_constraints ORDER BY table_name, constraint_name;
SELECT constraint_name, table_name, column_name, position FROM user_cons_columns ORDER BY table_name, constraint_name, position;
SELECT index_name, table_name, uniqueness FROM user_indexes ORDER BY index_name;
INSERT INTO dept VALUES (10, 'ACCOUNTING', 'NEW YORK');
INSERT INTO dept VALUES (20, 'RESEARCH', 'DALLAS');
INSERT INTO dept VALUES (10, 'SALES', 'CHICAGO');
INSERT INTO dept VALUES (30, 'RESEARCH', 'BOSTON');
INSERT INTO dept VALUES (NULL, 'OPERATIONS', 'BOSTON');
INSERT INTO dept (deptno, loc) VALUES (40, 'BOSTON');
INSERT INTO emp VALUES (7369, 'SMITH', 800, NULL, 20);
INSERT INTO emp VALUES (7499, 'ALLEN', 1600, 300, 30);
INSERT INTO emp VALUES (7521, 'WARD', 0, NULL, 30);
INSERT INTO emp VALUES (7654, 'MARTIN', 1250, 1400, 30);
INSERT INTO emp VALUES (7698, 'BLAKE', NULL, 100, 30);
UPDATE emp SET sal = -1 WHERE empno = 7369;
UPDATE dept SET dname = NULL WHERE deptno = 10;
INSERT INTO emp SELECT empno + 1, ename, sal - 1000, NULL, deptno FROM emp;
SELECT empno, ename, sal, comm FROM emp ORDER BY empno;
ALTER TABLE emp ADD CONSTRAINT emp_ename_uk UNIQUE (ename);
INSERT INTO emp VALUES (7700, 'SMITH', 900, NULL, 10);
ALTER TABLE emp DISABLE CONSTRAINT emp_sal_ck;
INSERT INTO emp VALUES (7900, 'JAMES', -5, NULL, 30);
ALTER TABLE emp ENABLE CONSTRAINT emp_sal_ck;
DELETE FROM emp WHERE empno = 7900;
ALTER TABLE emp ENABLE CONSTRAINT emp_sal_ck;
ALTER TABLE emp DROP CONSTRAINT emp_ename_uk;
ALTER TABLE emp ADD PRIMARY KEY (ename);
ALTER TABLE emp ADD CONSTRAINT emp_pk CHECK (empno > 0);
ALTER TABLE emp DROP CONSTRAINT no_such;
-- A CHECK condition must give a row the same answer whenever it is evaluated: the date,
-- the user, ROWNUM and subqueries are refused, naming what and where.
ALTER TABLE emp ADD CONSTRAINT emp_hired_ck CHECK (ename <> USER);
CREATE TABLE hist (d DATE CHECK (d <= SYSDATE));
CREATE TABLE hist (d DATE, n INTEGER, CONSTRAINT hist_n_ck CHECK (n IN (SELECT empno FROM emp)));
DROP INDEX emp_pk;
SELECT constraint_name, constraint_type, status, index_name FROM user_constraints WHERE table_name = 'EMP' ORDER BY constraint_name;
DROP TABLE emp;
SELECT COUNT(*) FROM user_constraints WHERE table_name = 'EMP';
SELECT index_name FROM user_indexes ORDER BY index_name;
