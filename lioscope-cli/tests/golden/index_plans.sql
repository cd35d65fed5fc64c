-- EXPLAIN PLAN of every index access path and of each hint, on analyzed, deterministic
-- data: 10,000 employees in id order; dept 0..49 repeating; name random with respect to
-- id and NULL on every hundredth row. Multiblock reads of 8 blocks make the sizes of
-- the indexes matter to their fast full scans.
ALTER SESSION SET db_file_multiblock_read_count = 8;
CREATE TABLE emp (id INTEGER NOT NULL, dept INTEGER NOT NULL, name VARCHAR2(20), salary NUMBER(8,2), pad VARCHAR2(100));
INSERT INTO emp SELECT LEVEL, MOD(LEVEL, 50), CASE WHEN MOD(LEVEL, 100) = 0 THEN NULL ELSE 'n' || LPAD(MOD(LEVEL * 7919, 10007), 5, '0') END, MOD(LEVEL, 1000) * 10, RPAD('p', 80, 'p') FROM dual CONNECT BY LEVEL <= 10000;
CREATE UNIQUE INDEX emp_id ON emp (id);
CREATE INDEX emp_dept_name ON emp (dept, name);
CREATE INDEX emp_name ON emp (name);
ANALYZE TABLE emp COMPUTE STATISTICS;
SELECT index_name, uniqueness, blevel, leaf_blocks, distinct_keys, clustering_factor, num_rows FROM user_indexes ORDER BY index_name;
SELECT index_name, column_name, column_position FROM user_ind_columns ORDER BY index_name, column_position;
-- INDEX UNIQUE SCAN: equality on every column of a unique index.
EXPLAIN PLAN FOR SELECT pad FROM emp WHERE id = 42;
-- The index holds every column the query reads: no table access.
EXPLAIN PLAN FOR SELECT id FROM emp WHERE id = 42;
-- INDEX RANGE SCAN, with a residual filter on the table's rows.
EXPLAIN PLAN FOR SELECT pad FROM emp WHERE id BETWEEN 100 AND 120;
EXPLAIN PLAN FOR SELECT name FROM emp WHERE id < 30 AND salary > 100;
-- Two comparisons on one column make one range: (100, 164], the looser upper end implied.
EXPLAIN PLAN FOR SELECT pad FROM emp WHERE id > 100 AND id <= 164 AND id < 200;
SELECT COUNT(pad), MIN(id), MAX(id) FROM emp WHERE id > 100 AND id <= 164 AND id < 200;
-- A range on another column than the key's stays a filter on the table's rows.
EXPLAIN PLAN FOR SELECT pad FROM emp WHERE id > 100 AND id < 120 AND name > 'n05';
-- Equality on the leading column and a range on the next: both answered by the key.
EXPLAIN PLAN FOR SELECT COUNT(*) FROM emp WHERE dept = 7 AND name > 'n05';
-- LIKE with a prefix bounds the range; the pattern itself is still checked.
EXPLAIN PLAN FOR SELECT name FROM emp WHERE name LIKE 'n001%';
-- A large range: the full scan costs less.
EXPLAIN PLAN FOR SELECT pad FROM emp WHERE id > 100;
-- COUNT(*) of a table with an index on a NOT NULL column: the fast full scan of the
-- smallest such index (EMP_ID, 26 leaf blocks against 36).
EXPLAIN PLAN FOR SELECT COUNT(*) FROM emp;
-- Hints: FULL.
EXPLAIN PLAN FOR SELECT /*+ FULL(emp) */ pad FROM emp WHERE id = 42;
-- INDEX by name and by columns, on a range the optimizer would scan in full.
EXPLAIN PLAN FOR SELECT /*+ INDEX(emp emp_id) */ pad FROM emp WHERE id > 100;
EXPLAIN PLAN FOR SELECT /*+ INDEX(emp (dept)) */ salary FROM emp WHERE dept = 3;
-- INDEX with no predicate on the index: INDEX FULL SCAN (the NOT NULL id is in every row).
EXPLAIN PLAN FOR SELECT /*+ INDEX(emp emp_id) */ pad FROM emp;
-- INDEX_DESC and INDEX_ASC.
EXPLAIN PLAN FOR SELECT /*+ INDEX_DESC(emp emp_id) */ pad FROM emp WHERE id < 50;
EXPLAIN PLAN FOR SELECT /*+ INDEX_DESC(emp emp_id) */ id FROM emp;
EXPLAIN PLAN FOR SELECT /*+ INDEX_ASC(emp emp_dept_name) */ name FROM emp WHERE dept = 3;
-- NO_INDEX: the unique scan is refused; the other indexes may still be used.
EXPLAIN PLAN FOR SELECT /*+ NO_INDEX(emp emp_id) */ pad FROM emp WHERE id = 42;
EXPLAIN PLAN FOR SELECT /*+ NO_INDEX(emp) */ pad FROM emp WHERE id = 42;
-- INDEX_FFS: the index holds every column read.
EXPLAIN PLAN FOR SELECT /*+ INDEX_FFS(emp emp_dept_name) */ COUNT(*) FROM emp WHERE dept > 3;
EXPLAIN PLAN FOR SELECT /*+ INDEX_FFS(emp emp_dept_name) */ dept, name FROM emp WHERE name = 'n00042';
-- A hint may name the table by its alias.
EXPLAIN PLAN FOR SELECT /*+ INDEX(e emp_id) */ e.pad FROM emp e WHERE e.id > 9000;
-- Hints that cannot be followed are reported in the Note section.
-- The named index does not exist:
EXPLAIN PLAN FOR SELECT /*+ INDEX(emp no_such_ix) */ pad FROM emp WHERE id = 42;
-- INDEX_FFS when the index does not hold the columns the query reads; when it holds them
-- but not the rows whose name is NULL, which the query returns; and when the WHERE
-- clause keeps those rows out.
EXPLAIN PLAN FOR SELECT /*+ INDEX_FFS(emp emp_id) */ pad FROM emp WHERE id > 10;
EXPLAIN PLAN FOR SELECT /*+ INDEX_FFS(emp emp_name) */ name FROM emp;
EXPLAIN PLAN FOR SELECT /*+ INDEX_FFS(emp emp_name) */ name FROM emp WHERE name > 'n09';
-- An index on a nullable column with no predicate on it: rows with a NULL name are not
-- in the index, and the query needs them.
EXPLAIN PLAN FOR SELECT /*+ INDEX(emp emp_name) */ COUNT(*) FROM emp;
-- A hint naming another table, a word that is not a hint, a malformed hint:
EXPLAIN PLAN FOR SELECT /*+ FULL(dept) INDEX(d emp_id) */ pad FROM emp WHERE id = 42;
EXPLAIN PLAN FOR SELECT /*+ PARALLEL(emp 4) USE_NL(emp) */ pad FROM emp WHERE id = 42;
EXPLAIN PLAN FOR SELECT /*+ INDEX(emp emp_id */ pad FROM emp WHERE id = 42;
-- The first hint that applies wins; the others are reported.
EXPLAIN PLAN FOR SELECT /*+ INDEX(emp no_such_ix) FULL(emp) INDEX(emp emp_id) */ pad FROM emp WHERE id = 42;
-- GATHER_PLAN_STATISTICS is a statement hint: not reported.
EXPLAIN PLAN FOR SELECT /*+ GATHER_PLAN_STATISTICS INDEX(emp emp_id) */ pad FROM emp WHERE id = 42;
-- The plans answer the same: counts by each path.
SELECT /*+ FULL(emp) */ COUNT(*), SUM(id) FROM emp WHERE dept = 7 AND name > 'n05';
SELECT /*+ INDEX(emp emp_dept_name) */ COUNT(*), SUM(id) FROM emp WHERE dept = 7 AND name > 'n05';
SELECT /*+ INDEX_FFS(emp emp_dept_name) */ COUNT(*) FROM emp WHERE dept = 7 AND name > 'n05';
SELECT /*+ INDEX_DESC(emp emp_id) */ id, dept FROM emp WHERE id BETWEEN 98 AND 102;
