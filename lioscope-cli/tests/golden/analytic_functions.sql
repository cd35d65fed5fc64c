-- Analytic functions: ranks, running and whole-partition aggregates, LAG / LEAD,
-- FIRST_VALUE / LAST_VALUE, NTILE, over rows and over groups; ROWS and RANGE frames
-- (moving sums and averages, the previous row's value, salaries within 500 of each
-- other); WINDOW SORT in the plan; a top-N per group through an inline view; the
-- refusals.
CREATE TABLE emp (empno INTEGER, ename VARCHAR2(10), deptno INTEGER, sal NUMBER);
INSERT INTO emp VALUES (1, 'KING', 10, 5000), (2, 'BLAKE', 30, 2850), (3, 'CLARK', 10, 2450), (4, 'JONES', 20, 2975), (5, 'SCOTT', 20, 3000), (6, 'ADAMS', 20, 1100), (7, 'FORD', 20, 3000), (8, 'MILLER', 10, 1300);
SELECT ename, deptno, sal, RANK() OVER (PARTITION BY deptno ORDER BY sal DESC) rnk, DENSE_RANK() OVER (ORDER BY sal DESC) drnk, ROW_NUMBER() OVER (ORDER BY sal DESC, ename) rn FROM emp ORDER BY rn;
SELECT ename, deptno, sal, SUM(sal) OVER (PARTITION BY deptno ORDER BY sal) running, SUM(sal) OVER (PARTITION BY deptno) dept_total, COUNT(*) OVER () everyone FROM emp ORDER BY deptno, sal;
SELECT ename, sal, LAG(sal) OVER (ORDER BY sal) prev, LEAD(sal, 1, 0) OVER (ORDER BY sal) next, FIRST_VALUE(ename) OVER (ORDER BY sal) lowest, NTILE(3) OVER (ORDER BY sal) tercile FROM emp ORDER BY sal, ename;
SELECT deptno, SUM(sal) total, RANK() OVER (ORDER BY SUM(sal) DESC) place FROM emp GROUP BY deptno ORDER BY place;
SELECT deptno, ename, sal FROM (SELECT deptno, ename, sal, ROW_NUMBER() OVER (PARTITION BY deptno ORDER BY sal DESC, ename) rn FROM emp) WHERE rn = 1 ORDER BY deptno;
EXPLAIN PLAN FOR SELECT ename, RANK() OVER (ORDER BY sal DESC) FROM emp;
SELECT empno, sal, SUM(sal) OVER (ORDER BY empno ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) pair, AVG(sal) OVER (ORDER BY empno ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) moving_avg, MAX(sal) OVER (ORDER BY empno ROWS BETWEEN 1 PRECEDING AND 1 PRECEDING) previous, MIN(sal) OVER (ORDER BY empno ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) low_after FROM emp ORDER BY empno;
SELECT ename, sal, COUNT(*) OVER (ORDER BY sal RANGE BETWEEN 500 PRECEDING AND 500 FOLLOWING) near, LAST_VALUE(ename) OVER (ORDER BY sal RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) top_earner FROM emp ORDER BY sal, ename;
SELECT SUM(sal) OVER (ORDER BY empno, sal RANGE 100 PRECEDING) FROM emp;
SELECT ROW_NUMBER() OVER (ORDER BY empno ROWS 1 PRECEDING) FROM emp;
SELECT RANK() OVER (PARTITION BY deptno) FROM emp;
SELECT ename, sal, SUM(sal) OVER () total, ROUND(100 * sal / SUM(sal) OVER (), 1) pct FROM emp WHERE deptno = 10 ORDER BY ename;
EXPLAIN PLAN FOR SELECT ename, sal, SUM(sal) OVER () total FROM emp;
SELECT * FROM (SELECT ename, deptno, sal, ROW_NUMBER() OVER (PARTITION BY deptno ORDER BY sal DESC) rn FROM emp) WHERE rn <= 1 ORDER BY deptno;
EXPLAIN PLAN FOR SELECT * FROM (SELECT ename, sal, RANK() OVER (ORDER BY sal DESC) rk FROM emp) WHERE rk < 3;
SELECT SUM(sal) OVER (ORDER BY ename RANGE 1 PRECEDING) FROM emp;
