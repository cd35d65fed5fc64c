-- CAST(expr AS type): a value converted as a column of the type stores it: a NUMBER(p,s)
-- rounds to its scale and refuses too many digits, INTEGER rounds (Oracle's, where
-- SQLite truncates), a text is read as a number or a date, a number or a date becomes
-- text, CHAR(n) pads with blanks; NULL stays NULL; a DATE and a number do not convert.
SELECT CAST(NULL AS INTEGER) n, CAST(2.5 AS INTEGER) i, CAST(-2.5 AS INTEGER) j, CAST('42' AS NUMBER) k FROM dual;
SELECT CAST(3.14159 AS NUMBER(5,2)) a, CAST(' 17 ' AS INTEGER) b, CAST(1/3 AS NUMBER(10,4)) c FROM dual;
SELECT CAST(12345 AS NUMBER(4)) FROM dual;
SELECT CAST('abc' AS NUMBER) FROM dual;
SELECT CAST(42 AS VARCHAR2(10)) || '!' s, CAST('ab' AS CHAR(4)) || '|' c, LENGTH(CAST('ab' AS CHAR(4))) l FROM dual;
SELECT CAST('abcdef' AS VARCHAR2(3)) FROM dual;
SELECT CAST('2024-03-15' AS DATE) d, CAST(DATE '2024-03-15' AS VARCHAR2(20)) t FROM dual;
SELECT CAST(DATE '2024-03-15' AS NUMBER) FROM dual;
SELECT CAST(5 AS DATE) FROM dual;
SELECT CAST(1.5 AS REAL) r, CAST(7 AS DOUBLE PRECISION) d, CAST(2.75 AS DECIMAL(3,1)) m FROM dual;
CREATE TABLE t (n NUMBER, s VARCHAR2(10));
INSERT INTO t VALUES (1.4, '7');
INSERT INTO t VALUES (1.6, 'x');
INSERT INTO t VALUES (NULL, NULL);
SELECT CAST(n AS INTEGER) FROM t ORDER BY 1;
SELECT n FROM t WHERE CAST(n AS INTEGER) = 2;
SELECT CAST(s AS NUMBER) FROM t;
SELECT CAST(n AS SIGNED) FROM t;
CREATE TABLE c AS SELECT CAST(n AS NUMBER(5,1)) n1, CAST(s AS VARCHAR2(5)) s5 FROM t WHERE n IS NOT NULL;
SELECT column_name, data_type, data_length, data_precision, data_scale FROM user_tab_columns WHERE table_name = 'C' ORDER BY column_id;
EXPLAIN PLAN FOR SELECT * FROM t WHERE CAST(n AS INTEGER) = 2;
