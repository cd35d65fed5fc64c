-- Foreign keys: REFERENCES inline and out of line, named or named by the system, in
-- CREATE TABLE and ALTER TABLE; ORA-02291 for a child key without a parent, ORA-02292
-- for a parent key with children; ON DELETE CASCADE over two levels and ON DELETE SET
-- NULL (a cascade that reaches a NO ACTION key with children fails as a whole); a
-- self-referencing table; the parent's key and table kept while referred to;
-- user_constraints and user_cons_columns.
CREATE TABLE dept (deptno INTEGER CONSTRAINT dept_pk PRIMARY KEY, dname VARCHAR2(14));
CREATE TABLE emp (empno INTEGER CONSTRAINT emp_pk PRIMARY KEY, ename VARCHAR2(10), mgr INTEGER CONSTRAINT emp_mgr_fk REFERENCES emp, deptno INTEGER, CONSTRAINT emp_dept_fk FOREIGN KEY (deptno) REFERENCES dept (deptno) ON DELETE CASCADE);
CREATE TABLE task (id INTEGER, empno INTEGER CONSTRAINT task_emp_fk REFERENCES emp ON DELETE CASCADE);
CREATE TABLE note (id INTEGER, deptno INTEGER REFERENCES dept ON DELETE SET NULL);
SELECT table_name, constraint_type, r_constraint_name, delete_rule, status FROM user_constraints WHERE constraint_type = 'R' ORDER BY table_name, r_constraint_name;
SELECT constraint_name, table_name, column_name, position FROM user_cons_columns WHERE constraint_name LIKE '%FK' ORDER BY constraint_name;
INSERT INTO dept VALUES (10, 'ACCOUNTING');
INSERT INTO dept VALUES (20, 'RESEARCH');
INSERT INTO emp VALUES (7839, 'KING', NULL, 10);
INSERT INTO emp VALUES (7782, 'CLARK', 7839, 10);
INSERT INTO emp VALUES (7566, 'JONES', 7839, 20);
INSERT INTO emp VALUES (7788, 'SCOTT', 7566, 40);
INSERT INTO emp VALUES (7902, 'FORD', 7999, 20);
INSERT INTO emp VALUES (7934, 'MILLER', NULL, NULL);
INSERT INTO task VALUES (1, 7782);
INSERT INTO task VALUES (2, 7566);
INSERT INTO task VALUES (3, 7000);
INSERT INTO note VALUES (1, 10);
INSERT INTO note VALUES (2, 20);
UPDATE emp SET deptno = 30 WHERE empno = 7566;
UPDATE dept SET deptno = 11 WHERE deptno = 10;
DELETE FROM emp WHERE empno = 7839;
ALTER TABLE dept DROP CONSTRAINT dept_pk;
ALTER TABLE dept DISABLE CONSTRAINT dept_pk;
DROP TABLE dept;
TRUNCATE TABLE dept;
DELETE FROM dept WHERE deptno = 10;
DELETE FROM dept WHERE deptno = 20;
SELECT empno, ename, mgr, deptno FROM emp ORDER BY empno;
SELECT id, empno FROM task ORDER BY id;
SELECT id, deptno FROM note ORDER BY id;
ALTER TABLE task DISABLE CONSTRAINT task_emp_fk;
INSERT INTO task VALUES (4, 1234);
ALTER TABLE task ENABLE CONSTRAINT task_emp_fk;
DELETE FROM task WHERE id = 4;
ALTER TABLE task ENABLE CONSTRAINT task_emp_fk;
CREATE TABLE bad (d DATE REFERENCES dept);
CREATE TABLE bad (d INTEGER REFERENCES dept (dname));
DROP TABLE dept CASCADE CONSTRAINTS;
SELECT table_name, constraint_name FROM user_constraints WHERE constraint_type = 'R' ORDER BY constraint_name;
