-- Bind variables in scripts, as SQL*Plus has them: VARIABLE declares one (NUMBER or
-- VARCHAR2(n); VARIABLE alone lists them), EXEC :name := expression sets it to the value
-- of SELECT expression FROM dual (bind variables allowed), coerced to its type, and PRINT
-- shows it. A statement that mentions :name runs through a cursor with the values bound
-- by name; an undeclared one is an error naming it.
CREATE TABLE t (id NUMBER, name VARCHAR2(10));
INSERT INTO t SELECT LEVEL, 'row ' || LEVEL FROM dual CONNECT BY LEVEL <= 20;
VARIABLE lo NUMBER
VARIABLE hi NUMBER
VARIABLE label VARCHAR2(10)
VARIABLE
PRINT lo
EXEC :lo := 5
EXEC :hi := :lo * 2
EXECUTE :label := 'row ' || (:lo + 1)
PRINT
SELECT COUNT(*) FROM t WHERE id > :lo AND id <= :hi;
SELECT id FROM t WHERE name = :label;
UPDATE t SET name = :label WHERE id = :hi;
SELECT id, name FROM t WHERE name = :LABEL ORDER BY id;
-- new values, the same statement: v$sql counts its executions under one text
EXEC :lo := 15
EXEC :hi := NULL
SELECT COUNT(*) FROM t WHERE id > :lo AND id <= :hi;
EXEC :hi := 100
SELECT COUNT(*) FROM t WHERE id > :lo AND id <= :hi;
SELECT executions, rows_processed FROM v$sql WHERE sql_text = 'SELECT COUNT(*) FROM t WHERE id > :lo AND id <= :hi';
-- a string for a NUMBER is converted; a value that does not fit keeps the old one
EXEC :lo := ' 7 '
EXEC :lo := 'seven'
EXEC :label := 'much too long'
PRINT lo label
-- SET FEEDBACK OFF drops EXEC's message too
SET FEEDBACK OFF
EXEC :lo := 1
SET FEEDBACK ON
-- errors
SELECT :nope FROM dual;
EXEC :nope := 1
PRINT nope
EXEC :lo := 1, 2
VARIABLE d DATE
