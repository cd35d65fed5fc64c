-- WHERE with SQL's three-valued logic: a comparison with NULL is UNKNOWN, NOT UNKNOWN is
-- UNKNOWN, NOT IN with a NULL in the list is never TRUE; strings meeting numbers are
-- converted to numbers (an error when they are not numbers).
CREATE TABLE w (id INTEGER, code CHAR(3), v VARCHAR2(5), n NUMBER);
INSERT INTO w VALUES (1, 'a', 'a', 1), (2, 'ab', 'ab ', NULL), (3, NULL, NULL, 3), (4, 'abc', 'abc', -1);
SELECT id FROM w WHERE n NOT IN (1, NULL);
SELECT id FROM w WHERE n NOT IN (1, 2) ORDER BY id;
SELECT id FROM w WHERE n IN (1, NULL);
SELECT id FROM w WHERE NOT (n > 0) ORDER BY id;
SELECT id FROM w WHERE n > 0 OR n IS NULL ORDER BY id;
SELECT id FROM w WHERE n <> 1 ORDER BY id;
SELECT id FROM w WHERE n BETWEEN NULL AND 5;
SELECT id FROM w WHERE n NOT BETWEEN 2 AND NULL ORDER BY id;
SELECT id FROM w WHERE v = NULL;
SELECT id FROM w WHERE v LIKE NULL;
SELECT id FROM w WHERE v LIKE 'a%' AND v NOT LIKE '%c' ORDER BY id;
SELECT id FROM w WHERE v > 'a' ORDER BY id;
SELECT id FROM w WHERE id > 1 AND (v = 'abc' OR n = 3) ORDER BY id;
SELECT CASE WHEN n > 0 THEN 'pos' WHEN n < 0 THEN 'neg' ELSE 'null' END sign, id FROM w ORDER BY id;
-- VARCHAR2 keeps trailing blanks and compares without padding
SELECT id FROM w WHERE v = 'ab';
SELECT id, LENGTH(v) FROM w ORDER BY id;
SELECT id FROM w WHERE n = '1';
SELECT id FROM w WHERE v = 1;
SELECT id FROM w WHERE id = 'x';
SELECT id FROM w WHERE 1;
-- CHAR values are stored blank-padded
SELECT id FROM w WHERE code = 'a  ';
SELECT id FROM w WHERE code || 'x' = 'a  x';
-- A CHAR column compares with a text literal blank-padded, as in Oracle.
SELECT id FROM w WHERE code = 'a';
SELECT id FROM w WHERE code IN ('a', 'ab') ORDER BY id;
SELECT id FROM w WHERE id;
