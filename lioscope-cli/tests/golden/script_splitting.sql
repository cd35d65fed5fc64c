-- How scripts split into statements: ";" outside quotes and comments, "/" alone on a
-- line, SET commands end with their line, a last statement needs no ";".
SELECT 1 FROM dual; -- trailing comment
SELECT 2 /* inline ; comment */ FROM dual;
SELECT 'semi;colon' AS s FROM dual;
SELECT "a;b" FROM dual;
SELECT 3
-- a comment line inside a statement
FROM dual;
/* block comment
   over lines; with a semicolon */
SELECT 4 FROM dual;
SELECT 5 FROM dual
/
SELECT 'it''s; fine' FROM dual;
SET AUTOTRACE STATISTICS;
SELECT 6 FROM dual;
set autotrace off
SELECT 7 FROM dual;;
;
SELECT 8 FROM dual -- no semicolon at the end of the script
