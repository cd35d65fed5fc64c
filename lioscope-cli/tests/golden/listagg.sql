-- LISTAGG: each group's values as one string, in WITHIN GROUP order, NULLs left out.
CREATE TABLE emp (empno INTEGER, ename VARCHAR2(10), deptno INTEGER, sal NUMBER);
INSERT INTO emp VALUES (7369, 'SMITH', 20, 800), (7499, 'ALLEN', 30, 1600), (7521, 'WARD', 30, 1250), (7566, 'JONES', 20, 2975), (7654, 'MARTIN', 30, 1250), (7698, 'BLAKE', 30, 2850), (7782, 'CLARK', 10, 2450), (7839, 'KING', 10, 5000), (7844, 'TURNER', 30, 1500), (7900, 'JAMES', 30, NULL), (7934, 'MILLER', 10, 1300), (7999, NULL, 20, 1000);
SELECT deptno, LISTAGG(ename, ',') WITHIN GROUP (ORDER BY ename) employees FROM emp GROUP BY deptno ORDER BY deptno;
SELECT deptno, LISTAGG(ename || ' ' || sal, '; ') WITHIN GROUP (ORDER BY sal DESC, ename) by_pay FROM emp GROUP BY deptno ORDER BY deptno;
SELECT LISTAGG(DISTINCT sal, '|') WITHIN GROUP (ORDER BY sal) salaries, LISTAGG(deptno) WITHIN GROUP (ORDER BY deptno) depts FROM emp WHERE sal < 1700;
SELECT LISTAGG(ename, ',') WITHIN GROUP (ORDER BY sal NULLS FIRST, ename) FROM emp WHERE deptno = 30;
SELECT LISTAGG(ename, ',') FROM emp WHERE deptno = 99;
EXPLAIN PLAN FOR SELECT deptno, LISTAGG(ename, ',') WITHIN GROUP (ORDER BY ename) FROM emp GROUP BY deptno;
-- errors
SELECT LISTAGG(ename, ename) FROM emp;
SELECT LISTAGG(ename, ',' ON OVERFLOW TRUNCATE '...' WITH COUNT) FROM emp;
SELECT SUM(sal) WITHIN GROUP (ORDER BY sal) FROM emp;
