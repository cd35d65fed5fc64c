-- Joins: the FROM list and ANSI joins, each join method as Oracle's plans show it, with
-- the row-source statistics of each (SET AUTOTRACE), outer joins, USING, fixed views,
-- and the errors of ambiguous and unknown names.
CREATE TABLE dept (deptno INTEGER, dname VARCHAR2(20), loc VARCHAR2(20));
CREATE TABLE emp (empno INTEGER, ename VARCHAR2(20), job VARCHAR2(12), deptno INTEGER, sal NUMBER);
INSERT INTO dept VALUES (10, 'ACCOUNTING', 'NEW YORK');
INSERT INTO dept VALUES (20, 'RESEARCH', 'DALLAS');
INSERT INTO dept VALUES (30, 'SALES', 'CHICAGO');
INSERT INTO dept VALUES (40, 'OPERATIONS', 'BOSTON');
INSERT INTO emp VALUES (7839, 'KING', 'PRESIDENT', 10, 5000);
INSERT INTO emp VALUES (7782, 'CLARK', 'MANAGER', 10, 2450);
INSERT INTO emp VALUES (7566, 'JONES', 'MANAGER', 20, 2975);
INSERT INTO emp VALUES (7369, 'SMITH', 'CLERK', 20, 800);
INSERT INTO emp VALUES (7698, 'BLAKE', 'MANAGER', 30, 2850);
INSERT INTO emp VALUES (7499, 'ALLEN', 'SALESMAN', 30, 1600);
INSERT INTO emp VALUES (7521, 'WARD', 'SALESMAN', 30, 1250);
INSERT INTO emp VALUES (7000, 'TEMP', 'CLERK', NULL, 500);
CREATE INDEX dept_deptno ON dept (deptno);
ANALYZE TABLE dept COMPUTE STATISTICS;
ANALYZE TABLE emp COMPUTE STATISTICS;
-- The tutorial's first join, in both syntaxes.
SELECT e.ename, d.dname FROM emp e JOIN dept d ON e.deptno = d.deptno ORDER BY e.ename;
SELECT e.ename, d.dname FROM emp e, dept d WHERE e.deptno = d.deptno AND d.loc = 'DALLAS' ORDER BY 1;
-- Outer joins keep the rows that join none.
SELECT e.ename, d.dname FROM emp e LEFT JOIN dept d ON e.deptno = d.deptno ORDER BY e.ename;
SELECT d.dname, COUNT(e.empno) FROM emp e RIGHT OUTER JOIN dept d ON e.deptno = d.deptno GROUP BY d.dname ORDER BY 1;
SELECT e.ename, d.dname FROM emp e FULL OUTER JOIN dept d ON e.deptno = d.deptno ORDER BY 1, 2;
-- A condition of the ON clause is part of the outer join; one of the WHERE clause
-- filters its result.
SELECT d.dname, e.ename FROM dept d LEFT JOIN emp e ON e.deptno = d.deptno AND e.sal > 2500 ORDER BY 1, 2;
SELECT d.dname, e.ename FROM dept d LEFT JOIN emp e ON e.deptno = d.deptno WHERE e.sal > 2500 ORDER BY 1, 2;
-- USING names the join column once.
SELECT deptno, dname, ename FROM emp JOIN dept USING (deptno) WHERE deptno = 10 ORDER BY ename;
SELECT * FROM dept JOIN emp USING (deptno) WHERE sal > 2900 ORDER BY empno;
-- NATURAL JOIN joins on every column name the two items share, listed first by SELECT *.
SELECT * FROM emp NATURAL JOIN dept WHERE sal > 2900 ORDER BY empno;
-- A FULL join's USING column is the first non-NULL of its two copies: OPERATIONS, which
-- has no employee, shows dept's DEPTNO; TEMP, in no department, shows NULL.
SELECT deptno, dname, ename FROM emp FULL JOIN dept USING (deptno) WHERE deptno IS NULL OR deptno = 40 ORDER BY 1, 3;
SELECT * FROM dept NATURAL FULL OUTER JOIN emp WHERE dname IS NULL OR ename IS NULL ORDER BY empno;
EXPLAIN PLAN FOR SELECT * FROM emp FULL JOIN dept USING (deptno);
-- A USING column qualified is refused, as Oracle refuses it.
SELECT e.deptno FROM emp e JOIN dept d USING (deptno);
-- CROSS JOIN and a FROM list without a condition are Cartesian products.
SELECT COUNT(*) FROM emp CROSS JOIN dept;
SET AUTOTRACE ON
-- Each method, forced by hint, with what it did.
SELECT /*+ USE_HASH(d) */ COUNT(*) FROM emp e JOIN dept d ON e.deptno = d.deptno;
SELECT /*+ USE_NL(d) */ COUNT(*) FROM emp e JOIN dept d ON e.deptno = d.deptno;
SELECT /*+ USE_MERGE(d) */ COUNT(*) FROM emp e JOIN dept d ON e.deptno = d.deptno;
SELECT /*+ ORDERED USE_NL(e) */ COUNT(*) FROM dept d, emp e WHERE e.deptno = d.deptno AND d.loc = 'CHICAGO';
SELECT /*+ USE_HASH(d) SWAP_JOIN_INPUTS(d) */ COUNT(*) FROM emp e LEFT JOIN dept d ON e.deptno = d.deptno;
SELECT COUNT(*) FROM emp, dept;
SET AUTOTRACE OFF
-- NO_SWAP_JOIN_INPUTS keeps the build on the tables joined first, however large.
EXPLAIN PLAN FOR SELECT /*+ LEADING(e d) USE_HASH(d) NO_SWAP_JOIN_INPUTS(d) */ COUNT(*) FROM emp e JOIN dept d ON e.deptno = d.deptno;
-- Hints that cannot be followed are reported.
EXPLAIN PLAN FOR SELECT /*+ USE_NL(x) LEADING(e) */ e.ename FROM emp e JOIN dept d ON e.deptno = d.deptno;
-- Predicates print with the parentheses their shape needs, and only those: a sum inside
-- a product, an OR among ANDed conditions, a right operand of a minus, a NOT of an AND.
EXPLAIN PLAN FOR SELECT * FROM emp e JOIN dept d ON (e.deptno + 1) * 2 = d.deptno;
EXPLAIN PLAN FOR SELECT ename FROM emp WHERE (sal > 2000 OR job = 'CLERK') AND deptno = 20;
EXPLAIN PLAN FOR SELECT ename FROM emp WHERE sal - (empno - 7000) > 0 AND NOT (job = 'CLERK' AND deptno = 20) AND (sal - empno) - 1 > 0;
-- A heading is the expression as typed, upper case, without blanks.
SELECT (1 + 2) * 3, 10 - (4 - 1) FROM dual;
-- Three tables, the optimizer's order.
SELECT m.ename, e.ename, d.dname FROM emp e, emp m, dept d WHERE e.deptno = d.deptno AND m.deptno = d.deptno AND m.job = 'MANAGER' AND e.job = 'CLERK' ORDER BY 1, 2;
-- The first query every DBA types.
SELECT n.name FROM v$mystat s, v$statname n WHERE s.statistic# = n.statistic# AND n.name = 'user calls';
-- Names.
SELECT deptno FROM emp e, dept d WHERE e.deptno = d.deptno;
SELECT emp.ename FROM emp e JOIN dept d ON e.deptno = d.deptno;
SELECT e.nope FROM emp e JOIN dept d ON e.deptno = d.deptno;
SELECT 1 FROM emp e JOIN dept d ON e.deptno = x.deptno JOIN dept x ON 1 = 1;
SELECT 1 FROM emp, emp;
SELECT 1 FROM emp e LEFT JOIN dept d;
-- A hash join whose build input passes its work area (1K, set by hand): its partitions
-- spill to a temporary file and are read back; the line shows the memory it held, the
-- temporary space it wrote and how many passes it took, as v$sql_workarea does.
ALTER SESSION SET workarea_size_policy = manual;
ALTER SESSION SET hash_area_size = 1K;
SET AUTOTRACE ON
SELECT /*+ USE_HASH(e) SWAP_JOIN_INPUTS(e) */ COUNT(e.empno), SUM(e.sal), MAX(e.ename || ' ' || e.job) FROM dept d JOIN emp e ON e.deptno = d.deptno;
SET AUTOTRACE OFF
SELECT operation_type, operation_id, policy, last_execution, total_executions, optimal_executions, onepass_executions + multipasses_executions spilled, CASE WHEN last_tempseg_size IS NULL THEN 'in memory' ELSE 'spilled' END temp FROM v$sql_workarea w JOIN v$sql q ON q.sql_id = w.sql_id WHERE q.sql_text LIKE '%SWAP_JOIN_INPUTS(e)%' AND q.sql_text NOT LIKE '%v$sql%';
ALTER SESSION SET workarea_size_policy = auto;
