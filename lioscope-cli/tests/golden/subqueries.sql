-- Subqueries: scalar, EXISTS / NOT EXISTS, IN / NOT IN (NULL-aware), uncorrelated (run
-- once, their lines under the query's top line) and correlated (a FILTER running them for
-- each row's values, with scalar subquery caching, or unnested into a semi or anti join);
-- their plans and the errors Oracle gives.
CREATE TABLE emp (empno INTEGER PRIMARY KEY, ename VARCHAR2(10), deptno INTEGER, sal NUMBER, mgr INTEGER);
INSERT INTO emp VALUES (1, 'KING', 10, 5000, NULL), (2, 'BLAKE', 30, 2850, 1), (3, 'CLARK', 10, 2450, 1), (4, 'JONES', 20, 2975, 1), (5, 'SCOTT', 20, 3000, 4), (6, 'ADAMS', 20, 1100, 5), (7, 'MILLER', NULL, 1300, 3);
CREATE TABLE dept (deptno INTEGER, dname VARCHAR2(14));
INSERT INTO dept VALUES (10, 'ACCOUNTING'), (20, 'RESEARCH'), (30, 'SALES'), (40, 'OPERATIONS');
SELECT ename, sal FROM emp WHERE sal > (SELECT AVG(sal) FROM emp) ORDER BY sal DESC;
SELECT dname FROM dept WHERE deptno IN (SELECT deptno FROM emp) ORDER BY dname;
SELECT dname FROM dept WHERE deptno NOT IN (SELECT deptno FROM emp);
SELECT dname FROM dept WHERE deptno NOT IN (SELECT deptno FROM emp WHERE deptno IS NOT NULL);
SELECT dname FROM dept d WHERE NOT EXISTS (SELECT 1 FROM emp e WHERE e.deptno = d.deptno);
SELECT ename, deptno, sal FROM emp e WHERE sal = (SELECT MAX(sal) FROM emp x WHERE x.deptno = e.deptno) ORDER BY deptno;
SELECT ename FROM emp e WHERE EXISTS (SELECT 1 FROM emp r WHERE r.mgr = e.empno) ORDER BY ename;
SELECT deptno, COUNT(*) FROM emp GROUP BY deptno HAVING COUNT(*) > (SELECT COUNT(*) / 4 FROM emp) ORDER BY deptno;
SELECT ename, (SELECT MAX(sal) FROM emp) - sal AS below_top FROM emp WHERE deptno = 10 ORDER BY ename;
EXPLAIN PLAN FOR SELECT ename FROM emp e WHERE sal = (SELECT MAX(sal) FROM emp x WHERE x.deptno = e.deptno);
EXPLAIN PLAN FOR SELECT ename FROM emp WHERE sal > (SELECT AVG(sal) FROM emp);
SELECT ename FROM emp WHERE sal = (SELECT sal FROM emp WHERE deptno = 20);
SELECT ename FROM emp WHERE deptno IN (SELECT deptno, dname FROM dept);
SELECT ename, (SELECT dname FROM dept d WHERE d.deptno = e.deptno) dname FROM emp e ORDER BY ename;
EXPLAIN PLAN FOR SELECT ename, (SELECT dname FROM dept d WHERE d.deptno = e.deptno) dname FROM emp e;
SELECT deptno FROM emp e GROUP BY deptno HAVING COUNT(*) > (SELECT COUNT(*) FROM dept d WHERE d.deptno = e.deptno);
EXPLAIN PLAN FOR SELECT deptno, COUNT(*), (SELECT dname FROM dept d WHERE d.deptno = e.deptno) dname FROM emp e GROUP BY deptno HAVING COUNT(*) > (SELECT COUNT(*) FROM dept d WHERE d.deptno = e.deptno);
SELECT deptno, COUNT(*), (SELECT dname FROM dept d WHERE d.deptno = e.deptno) dname FROM emp e GROUP BY deptno ORDER BY (SELECT dname FROM dept d WHERE d.deptno = e.deptno) DESC;
EXPLAIN PLAN FOR SELECT dname FROM dept d WHERE NOT EXISTS (SELECT 1 FROM emp e WHERE e.deptno = d.deptno);
EXPLAIN PLAN FOR SELECT ename FROM emp e WHERE EXISTS (SELECT /*+ NO_UNNEST */ 1 FROM emp r WHERE r.mgr = e.empno);
EXPLAIN PLAN FOR SELECT ename FROM emp e WHERE deptno IN (SELECT /*+ MERGE_SJ */ deptno FROM dept d WHERE d.dname <> e.ename);
SELECT ename FROM emp e WHERE deptno IN (SELECT /*+ MERGE_SJ */ deptno FROM dept d WHERE d.dname <> e.ename) ORDER BY ename;
SAVEPOINT before_changes;
UPDATE emp e SET sal = (SELECT MAX(sal) FROM emp x WHERE x.deptno = e.deptno) WHERE sal < (SELECT AVG(sal) FROM emp x WHERE x.deptno = e.deptno);
SELECT ename, deptno, sal FROM emp ORDER BY deptno, ename;
DELETE FROM dept d WHERE NOT EXISTS (SELECT 1 FROM emp e WHERE e.deptno = d.deptno);
SELECT dname FROM dept ORDER BY dname;
ROLLBACK TO before_changes;
SELECT COUNT(*) FROM dept;
SELECT ename FROM emp WHERE (deptno, sal) IN (SELECT deptno, MAX(sal) FROM emp GROUP BY deptno) ORDER BY ename;
SELECT ename FROM emp WHERE (deptno, mgr) NOT IN ((10, 1), (20, NULL)) ORDER BY ename;
-- ANY, SOME and ALL of a list: each item compared, OR-ed or AND-ed (a NULL item leaves
-- ALL unknown).
SELECT deptno FROM dept WHERE deptno > ANY (15, 25) ORDER BY deptno;
SELECT deptno FROM dept WHERE deptno <> ALL (10, 30) ORDER BY deptno;
SELECT deptno FROM dept WHERE deptno <> ALL (10, NULL);
SELECT deptno FROM dept WHERE deptno = SOME (20) ORDER BY deptno;
