-- GROUP BY / HAVING / aggregates: NULL keys form one group (sorted last ascending),
-- COUNT(col) and SUM/AVG/MIN/MAX skip NULLs, an empty input gives one row without
-- GROUP BY and no rows with it.
CREATE TABLE s (region VARCHAR2(10), product VARCHAR2(10), qty INTEGER, price NUMBER(6,2));
INSERT INTO s VALUES ('north', 'apple', 10, 1.25), ('north', 'pear', 5, 2.00), ('south', 'apple', 7, 1.30), ('south', 'apple', 3, NULL), ('east', 'plum', NULL, 0.99), (NULL, 'pear', 4, 2.10), (NULL, NULL, 1, 1);
SELECT region, COUNT(*), COUNT(qty), SUM(qty), AVG(qty), MIN(price), MAX(price) FROM s GROUP BY region ORDER BY region;
SELECT region, SUM(qty) total FROM s GROUP BY region HAVING SUM(qty) > 5 ORDER BY total DESC;
SELECT region, COUNT(*) FROM s GROUP BY region HAVING COUNT(*) >= 2 ORDER BY 1 NULLS FIRST;
SELECT product, region, SUM(qty * price) FROM s GROUP BY product, region ORDER BY product, region;
SELECT COUNT(DISTINCT region), COUNT(DISTINCT product), SUM(DISTINCT qty) FROM s;
SELECT UPPER(region) r, COUNT(*) FROM s GROUP BY UPPER(region) ORDER BY r;
-- the case of a string literal tells calls and keys apart: two aggregates here, and 'North' is not a key
SELECT COUNT(DECODE(region, 'north', 1)) lower_case, COUNT(DECODE(region, 'NORTH', 1)) upper_case FROM s;
SELECT DECODE(region, 'North', 1) FROM s GROUP BY DECODE(region, 'north', 1);
SELECT region, SUM(qty) + 1, COUNT(*) * 2 FROM s GROUP BY region ORDER BY SUM(qty) NULLS LAST;
SELECT AVG(price) FROM s;
-- empty input
SELECT COUNT(*), SUM(qty), AVG(qty), MAX(qty) FROM s WHERE 1 = 0;
SELECT region, COUNT(*) FROM s WHERE 1 = 0 GROUP BY region;
SELECT COUNT(*) FROM s HAVING COUNT(*) > 100;
-- a key is its column however it is named: qualified, by alias, or by `*` when every column is a key
SELECT x.region, COUNT(*) FROM s x GROUP BY region ORDER BY 1;
SELECT s.region || '!' FROM s GROUP BY s.region ORDER BY 1;
SELECT region, COUNT(*) FROM s GROUP BY (region) ORDER BY 1;
SELECT * FROM s GROUP BY region, product, qty, price ORDER BY 1, 2, 3;
-- a FULL join's USING column is its key too (its value is either side's)
CREATE TABLE targets (region VARCHAR2(10), target INTEGER);
INSERT INTO targets VALUES ('north', 1), ('west', 2);
SELECT * FROM (SELECT region FROM s) x FULL JOIN targets USING (region) GROUP BY region, target ORDER BY 1;
-- errors
SELECT region, qty FROM s GROUP BY region;
SELECT * FROM s GROUP BY region;
SELECT s.qty FROM s GROUP BY region;
SELECT region, SUM(qty) FROM s WHERE SUM(qty) > 1 GROUP BY region;
SELECT SUM(MAX(qty)) FROM s GROUP BY region;
-- ORDER BY may use an aggregate the select list does not show.
SELECT region FROM s GROUP BY region ORDER BY COUNT(*) DESC, region;
-- After aggregation, LEVEL and ROWNUM must be GROUP BY expressions (Oracle's ORA-00979).
SELECT LEVEL, COUNT(*) FROM dual CONNECT BY LEVEL <= 3;
SELECT MAX(LEVEL), COUNT(*) FROM dual CONNECT BY LEVEL <= 3 HAVING LEVEL > 0;
SELECT ROWNUM, region FROM s GROUP BY region;
SELECT COUNT(*) FROM s WHERE ROWNUM <= 2 ORDER BY ROWNUM;
SELECT region, SUM(qty) FROM s GROUP BY region ORDER BY MAX(qty);
SELECT COUNT(*) FROM s ORDER BY MAX(qty);
-- grouping by ROWNUM is valid
SELECT region, ROWNUM FROM s WHERE ROWNUM <= 2 GROUP BY region, ROWNUM ORDER BY 2;
