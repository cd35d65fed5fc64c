-- LIKE: % any run, _ any one character, ESCAPE; a NULL pattern ('' too) is UNKNOWN for
-- every row, so neither LIKE nor NOT LIKE keeps any; a CHAR column matches with its blanks.
CREATE TABLE words (w VARCHAR2(30), c CHAR(6));
INSERT INTO words VALUES ('special requests', 'ab');
INSERT INTO words VALUES ('requests, special', 'abc');
INSERT INTO words VALUES ('specially quiet requests', 'a_c');
INSERT INTO words VALUES ('100%', 'x%y');
INSERT INTO words VALUES ('aba', NULL);
INSERT INTO words VALUES (NULL, 'zz');
SELECT w FROM words WHERE w LIKE '%special%requests%' ORDER BY w;
SELECT w FROM words WHERE w NOT LIKE '%special%requests%' ORDER BY w;
SELECT w FROM words WHERE w LIKE 'ab%ba' OR w LIKE 'a_a' ORDER BY w;
SELECT w FROM words WHERE w LIKE '100\%' ESCAPE '\' ORDER BY w;
SELECT COUNT(*) FROM words WHERE w LIKE NULL;
SELECT COUNT(*) FROM words WHERE w NOT LIKE NULL;
SELECT COUNT(*) FROM words WHERE w NOT LIKE '';
SELECT c || '|' FROM words WHERE c LIKE 'ab' ORDER BY c;
SELECT c || '|' FROM words WHERE c LIKE 'ab%' ORDER BY c;
SELECT c || '|' FROM words WHERE c LIKE 'a\_c%' ESCAPE '\' ORDER BY c;
-- The same in memory: each distinct value of a unit matched once.
ALTER SYSTEM SET inmemory_size = 16M;
ALTER TABLE words INMEMORY MEMCOMPRESS FOR QUERY LOW PRIORITY HIGH;
EXEC DBMS_INMEMORY_ADMIN.POPULATE_WAIT('HIGH', 100, 60);
EXPLAIN PLAN FOR SELECT w FROM words WHERE w NOT LIKE '%special%requests%';
SELECT w FROM words WHERE w LIKE '%special%requests%' ORDER BY w;
SELECT w FROM words WHERE w NOT LIKE '%special%requests%' ORDER BY w;
SELECT COUNT(*) FROM words WHERE w NOT LIKE NULL;
SELECT c || '|' FROM words WHERE c LIKE 'ab%' ORDER BY c;
SELECT c || '|' FROM words WHERE c NOT LIKE '%c%' ORDER BY c;
