-- Inline views, WITH queries, stored views and set operations: their answers, their
-- plans (VIEW, UNION-ALL under HASH UNIQUE, MINUS HASH, INTERSECTION HASH, a WITH query
-- read twice loaded once under TEMP TABLE TRANSFORMATION), user_views and the refusals
-- Oracle makes (ORA-01789, ORA-01790, ORA-00957, ORA-01730, ORA-01731).
CREATE TABLE emp (empno INTEGER PRIMARY KEY, ename VARCHAR2(10), deptno INTEGER, sal NUMBER);
INSERT INTO emp VALUES (1, 'KING', 10, 5000), (2, 'BLAKE', 30, 2850), (3, 'CLARK', 10, 2450), (4, 'JONES', 20, 2975), (5, 'SCOTT', 20, 3000), (6, 'ADAMS', 20, 1100), (7, 'MILLER', NULL, 1300);
CREATE TABLE dept (deptno INTEGER, dname VARCHAR2(14));
INSERT INTO dept VALUES (10, 'ACCOUNTING'), (20, 'RESEARCH'), (30, 'SALES'), (40, 'OPERATIONS');
SELECT * FROM (SELECT deptno, COUNT(*) n, SUM(sal) total FROM emp GROUP BY deptno) WHERE n > 1 ORDER BY deptno;
SELECT d.dname, s.n FROM dept d LEFT JOIN (SELECT deptno, COUNT(*) n FROM emp GROUP BY deptno) s ON s.deptno = d.deptno ORDER BY d.dname;
WITH paid AS (SELECT deptno, MAX(sal) best FROM emp GROUP BY deptno), named AS (SELECT d.dname, p.best FROM dept d JOIN paid p ON p.deptno = d.deptno) SELECT * FROM named ORDER BY best DESC;
SELECT * FROM (SELECT ename, sal FROM emp ORDER BY sal DESC) WHERE ROWNUM <= 3;
WITH pay AS (SELECT deptno, SUM(sal) total FROM emp GROUP BY deptno) SELECT deptno, total FROM pay WHERE total > (SELECT AVG(total) FROM pay) ORDER BY deptno;
EXPLAIN PLAN FOR WITH pay AS (SELECT deptno, SUM(sal) total FROM emp GROUP BY deptno) SELECT deptno, total FROM pay WHERE total > (SELECT AVG(total) FROM pay);
EXPLAIN PLAN FOR WITH pay AS (SELECT /*+ INLINE */ deptno, SUM(sal) total FROM emp GROUP BY deptno) SELECT deptno, total FROM pay WHERE total > (SELECT AVG(total) FROM pay);
EXPLAIN PLAN FOR WITH pay AS (SELECT /*+ MATERIALIZE */ deptno, SUM(sal) total FROM emp GROUP BY deptno), unread AS (SELECT /*+ MATERIALIZE */ 1 x FROM dual) SELECT MAX(total) FROM pay;
EXPLAIN PLAN FOR SELECT d.dname, s.n FROM dept d JOIN (SELECT deptno, COUNT(*) n FROM emp GROUP BY deptno) s ON s.deptno = d.deptno;
CREATE VIEW dept_pay (deptno, headcount, payroll) AS SELECT deptno, COUNT(*), SUM(sal) FROM emp GROUP BY deptno;
SELECT * FROM dept_pay ORDER BY deptno;
SELECT view_name, text FROM user_views;
CREATE OR REPLACE VIEW dept_pay (deptno, headcount, payroll) AS SELECT deptno, COUNT(*), SUM(sal) FROM emp WHERE deptno IS NOT NULL GROUP BY deptno;
SELECT COUNT(*) FROM dept_pay;
CREATE VIEW dept_pay AS SELECT 1 x FROM dual;
CREATE VIEW two AS SELECT deptno, deptno FROM emp;
CREATE VIEW cols (a, b) AS SELECT deptno FROM emp;
CREATE VIEW big AS SELECT deptno FROM dept_pay WHERE payroll > 5000;
CREATE OR REPLACE VIEW dept_pay AS SELECT deptno, 1 headcount, 1 payroll FROM big;
DROP VIEW big;
SELECT * FROM big;
DROP VIEW dept_pay;
SELECT deptno FROM emp UNION SELECT deptno FROM dept ORDER BY 1;
SELECT deptno FROM emp UNION ALL SELECT deptno FROM dept ORDER BY 1 DESC;
SELECT deptno FROM dept MINUS SELECT deptno FROM emp;
SELECT deptno FROM dept INTERSECT SELECT deptno FROM emp ORDER BY deptno;
SELECT ename name, sal FROM emp WHERE deptno = 10 UNION ALL SELECT dname, NULL FROM dept WHERE deptno = 10 ORDER BY name;
EXPLAIN PLAN FOR SELECT deptno FROM emp UNION SELECT deptno FROM dept;
EXPLAIN PLAN FOR SELECT deptno FROM dept MINUS SELECT deptno FROM emp;
SELECT deptno FROM emp UNION SELECT deptno, dname FROM dept;
SELECT deptno FROM emp UNION SELECT dname FROM dept;
