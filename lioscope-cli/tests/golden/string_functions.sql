-- String functions with Oracle's rules: '' is NULL, NULL in gives NULL out (except NVL,
-- COALESCE, DECODE, || / CONCAT and REPLACE), positions and lengths count characters.
SELECT UPPER('MixEd'), LOWER('MixEd'), LENGTH('hello'), LENGTH(''), LENGTH(NULL) FROM dual;
SELECT LPAD('7', 3, '0'), RPAD('ab', 5, '*'), LPAD('abcdef', 3), RPAD('x', 4) || '|', LPAD('x', 0), RPAD('ab', 7, '12') FROM dual;
SELECT LTRIM('xxaxx', 'x'), RTRIM('xxaxx', 'x'), LTRIM('  a') || '|', RTRIM('a  ') || '|', LTRIM('   ') FROM dual;
SELECT INSTR('hello world', 'o'), INSTR('hello world', 'o', 1, 2), INSTR('hello world', 'o', -1), INSTR('hello', 'z'), INSTR('abcabc', 'bc', 3) FROM dual;
SELECT INSTR('hello', 'l', 0) FROM dual;
SELECT INSTR('hello', 'l', 1, 0) FROM dual;
SELECT REPLACE('banana', 'an', 'AN'), REPLACE('banana', 'a'), REPLACE('banana', 'a', NULL), REPLACE('abc', NULL, 'x'), REPLACE(NULL, 'a', 'b') FROM dual;
SELECT CONCAT('a', 'b'), CONCAT('a', NULL), 'a' || NULL || 'b', NULL || NULL, CONCAT(CONCAT('a', 'b'), 'c') FROM dual;
SELECT CHR(65), ASCII('A'), ASCII('abc'), CHR(97) || CHR(98) FROM dual;
SELECT NVL(NULL, 'd'), NVL('x', 'd'), COALESCE(NULL, NULL, 'c'), NVL('', 'empty') FROM dual;
-- NULLIF: NULL where the two are equal, else the first ('' is NULL, and equals nothing)
SELECT NULLIF('a', 'a'), NULLIF('a', 'b'), NULLIF('a', ''), NULLIF(2, 2.0), NULLIF(DATE '2024-01-01', DATE '2024-01-01') FROM dual;
-- its comparison is `=`'s: a CHAR column equals a literal padded with blanks
CREATE TABLE nullif_char (ch CHAR(5), n NUMBER);
INSERT INTO nullif_char VALUES ('ab', 0);
SELECT NULLIF(ch, 'ab') padded_equal, NULLIF(ch, 'b') unequal, NULLIF(n, 0) zero FROM nullif_char;
-- its first argument is computed once: never 0 here, however DBMS_RANDOM draws
SELECT COUNT(*) zeros FROM (SELECT NULLIF(TRUNC(DBMS_RANDOM.VALUE * 2), 0) x FROM dual CONNECT BY LEVEL <= 1000) WHERE x = 0;
-- its type is its first argument's (a UNION ALL with a date is ORA-01790)
SELECT NULLIF(n, 1) FROM nullif_char UNION ALL SELECT DATE '2024-01-01' FROM dual;
SELECT NULLIF(NULL, 1) FROM dual;
SELECT NULLIF(1) FROM dual;
SELECT DECODE(2, 1, 'one', 2, 'two', 'other'), DECODE(9, 1, 'one', 'other'), DECODE(NULL, NULL, 'null matches', 'no'), DECODE(3, 1, 'one') FROM dual;
SELECT CASE WHEN 1 = 2 THEN 'a' WHEN 2 = 2 THEN 'b' END, CASE 'x' WHEN 'y' THEN 1 ELSE 0 END, CASE NULL WHEN NULL THEN 'eq' ELSE 'ne' END FROM dual;
SELECT GREATEST('apple', 'pear', 'fig'), LEAST('apple', 'pear', 'fig'), GREATEST(1, NULL, 3) FROM dual;
SELECT 'it''s' FROM dual;
SELECT LENGTH('héllo'), UPPER('héllo'), INSTR('héllo', 'l'), LPAD('é', 3, '*') FROM dual;
-- numbers converted to text implicitly
SELECT UPPER(1), LENGTH(12345), 1 || 2, LENGTH(1.50) FROM dual;
-- LIKE: % and _, case-sensitive, ESCAPE
SELECT CASE WHEN 'abc' LIKE 'a%' THEN 'y' ELSE 'n' END a, CASE WHEN 'abc' LIKE '_b_' THEN 'y' ELSE 'n' END b, CASE WHEN 'a%c' LIKE 'a\%c' ESCAPE '\' THEN 'y' ELSE 'n' END c, CASE WHEN 'ABC' LIKE 'a%' THEN 'y' ELSE 'n' END d FROM dual;
-- || and + have the same precedence in Oracle: ('x' || 1) + 2 is not a number
SELECT 'x' || 1 + 2 FROM dual;
SELECT NOSUCHFN('x') FROM dual;
SELECT UPPER('a', 'b') FROM dual;
SELECT SUBSTR('abcdef', 2, 3), SUBSTR('abcdef', -2), SUBSTR('abcdef', 0, 2), SUBSTR('abcdef', 10), SUBSTR('abcdef', 2, 0), SUBSTR('abcdef', 3) FROM dual;
SELECT TRIM('  a b  ') || '|', TRIM('   '), TRIM(LEADING 'x' FROM 'xxaxx') FROM dual;
