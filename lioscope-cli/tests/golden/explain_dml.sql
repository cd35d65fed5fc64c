-- EXPLAIN PLAN of INSERT, UPDATE and DELETE: the load line over an INSERT's query,
-- the access path an UPDATE or DELETE finds its rows by (the one it takes when it
-- runs), a ROWNUM limit, and the lines of their subqueries; the statement is not run.
CREATE TABLE emp (empno INTEGER PRIMARY KEY, ename VARCHAR2(10), deptno INTEGER, sal NUMBER);
INSERT INTO emp SELECT LEVEL, 'E' || LEVEL, MOD(LEVEL, 4) * 10, 1000 + LEVEL FROM dual CONNECT BY LEVEL <= 2000;
CREATE TABLE dept (deptno INTEGER, dname VARCHAR2(14));
INSERT INTO dept VALUES (10, 'ACCOUNTING'), (20, 'RESEARCH'), (30, 'SALES');
CREATE TABLE emp_copy (empno INTEGER, ename VARCHAR2(10), deptno INTEGER, sal NUMBER);
ANALYZE TABLE emp COMPUTE STATISTICS;
ANALYZE TABLE dept COMPUTE STATISTICS;
EXPLAIN PLAN FOR INSERT INTO emp_copy VALUES (1, 'A', 10, 100), (2, 'B', 20, 200);
EXPLAIN PLAN FOR INSERT INTO emp_copy SELECT * FROM emp WHERE deptno = 10;
EXPLAIN PLAN FOR INSERT /*+ APPEND */ INTO emp_copy SELECT e.* FROM emp e JOIN dept d ON d.deptno = e.deptno WHERE d.dname = 'SALES';
EXPLAIN PLAN FOR UPDATE emp SET sal = sal * 1.1 WHERE empno BETWEEN 10 AND 20 AND deptno = 10;
EXPLAIN PLAN FOR UPDATE emp SET sal = sal * 1.1 WHERE deptno = 10;
EXPLAIN PLAN FOR UPDATE /*+ INDEX(emp) */ emp SET sal = 0 WHERE empno > 0 AND ROWNUM <= 5;
EXPLAIN PLAN FOR UPDATE emp e SET sal = (SELECT AVG(sal) FROM emp x WHERE x.deptno = e.deptno) WHERE deptno IN (SELECT deptno FROM dept WHERE dname LIKE 'S%');
EXPLAIN PLAN FOR DELETE FROM emp WHERE empno = 7;
EXPLAIN PLAN FOR DELETE FROM emp WHERE NOT EXISTS (SELECT 1 FROM dept d WHERE d.deptno = emp.deptno);
SELECT COUNT(*), SUM(sal) FROM emp;
EXPLAIN PLAN FOR MERGE INTO emp_copy c USING emp e ON (c.empno = e.empno) WHEN NOT MATCHED THEN INSERT VALUES (e.empno, e.ename, e.deptno, e.sal);
EXPLAIN PLAN FOR UPDATE nope SET x = 1;
EXPLAIN PLAN FOR DELETE FROM emp WHERE nope = 1;
EXPLAIN PLAN FOR INSERT INTO emp_copy (empno) SELECT 1, 2 FROM dual;
EXPLAIN PLAN FOR INSERT INTO emp_copy (empno, nope) VALUES (1, 2);
EXPLAIN PLAN FOR INSERT INTO emp_copy VALUES (1);
