-- Statements that do not parse: "syntax error at line L, column C: ..." where the parser
-- knows the position, worded as Oracle's error (ORA-00923, ORA-00933, ...) naming the
-- token found there, or in the parser's words where Oracle has no such error. One bad
-- statement does not stop the script.
SELEC 1 FROM dual;
SELECT FROM dual;
SELECT 1 FROM;
SELECT 1 FROM dual WHERE;
SELECT 1 FROM dual WHERE 'a' = 'a' AND;
SELECT 1 FROM dual ORDER;
-- BUG (minor): see "SELECT 1 + FROM dual" below; the position is right (line 3, column 7).
SELECT 1,
  2 +
  3 * FROM dual;
SELECT 1 1 FROM dual;
-- An operator Oracle does not have: ORA-00923 in a select list, ORA-00907 inside
-- parentheses, ORA-00933 after the FROM clause.
SELECT 7 DIV 2 FROM dual;
SELECT (7 DIV 2) FROM dual;
SELECT 1 FROM dual WHERE 7 DIV 2 = 3;
SELECT (1 + 2 FROM dual;
SELECT * FROM dual WHERE 1 = = 1;
SELECT 1.2.3 FROM dual;
CREATE TABLE (a INTEGER);
CREATE TABLE t (a INTEGER,);
CREATE TABLE t ();
INSERT INTO VALUES (1);
DELETE FROM WHERE a = 1;
INSERT INTO t VALUES 1;
ALTER SESSION SET;
ALTER SESSION SET db_file_multiblock_read_count;
ALTER SESSION SET db_file_multiblock_read_count = ;
ALTER SESSION SET db_file_multiblock_read_count = 8 9;
ALTER SYSTEM FLUSH;
EXPLAIN PLAN SELECT 1 FROM dual;
SET AUTOTRACE MAYBE
SET TIMING
-- two statements on one line, and a statement ended by / on its own line
SELECT 1 FROM dual; SELECT 2 FROM dual;
SELECT 3 FROM dual
/
-- a number followed by a word is the number with an alias, as in Oracle
SELECT 12abc FROM dual;
-- BUG (minor): the keyword FROM is taken for a column name; Oracle says "missing
-- expression" (ORA-00936).
SELECT 1 + FROM dual;
-- A string literal is not a column alias: an error, as Oracle's ORA-00923 (FROM keyword
-- not found where expected), at the end of the select item before it.
SELECT 'a' 'b' FROM dual;
EXPLAIN PLAN FOR;
-- an unterminated quote runs on to the "/" line (a ';' inside quotes does not end a statement)
SELECT 'unterminated FROM dual;
SELECT 4 FROM dual;
/
SELECT "unterminated FROM dual
/
