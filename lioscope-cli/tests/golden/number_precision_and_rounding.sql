-- Exact decimal arithmetic; ROUND half away from zero; NUMBER(p,s) rounds to the scale on
-- insert and rejects values whose integer digits exceed p - s (the error names the column).
SELECT ROUND(2.5), ROUND(-2.5), ROUND(1.45, 1), ROUND(-1.45, 1), ROUND(1234.5678, -2), ROUND(0.5) FROM dual;
SELECT ROUND(2.675, 2), ROUND(-0.5), ROUND(15, -1), ROUND(25, -1), ROUND(1.23456789, 4) FROM dual;
SELECT TRUNC(2.9), TRUNC(-2.9), TRUNC(1.459, 2), TRUNC(1299, -2) FROM dual;
SELECT MOD(10, 3), MOD(-10, 3), MOD(10, -3), MOD(10, 0), MOD(7.5, 2), 10 / 4, 1 / 3, 2 / 3 FROM dual;
SELECT ABS(-5), SIGN(-3), SIGN(0), SIGN(2.5), POWER(2, 10), POWER(2, -1), SQRT(16), SQRT(2) FROM dual;
SELECT 0.1 + 0.2, 1e3, 1.5e-2, -0, 007, 9223372036854775807 + 1, 7 * 0.1, -3 * -3, 10 / 3 * 3 FROM dual;
SELECT '5' + 3, '2.5' * 2, 10 - '3', TO_NUMBER(' 12 ') FROM dual;
SELECT ROUND(NULL), MOD(NULL, 2), ABS(NULL), NULL + 1 FROM dual;
SELECT COUNT(*) FROM dual WHERE 1.0 = 1 AND '1' = 1 AND 0.10 = 0.1;
SELECT TO_CHAR(1234.5, '9999.99'), TO_CHAR(0.5, '0.99'), TO_CHAR(12, '000'), TO_CHAR(1234567, '9,999,999'), TO_CHAR(-12.3, '999.9'), TO_CHAR(123, '99') FROM dual;
SELECT 1 / 0 FROM dual;
SELECT SQRT(-1) FROM dual;
SELECT TO_NUMBER('abc') FROM dual;
CREATE TABLE p (a NUMBER(5,2), b NUMBER(3), c INTEGER, d NUMBER);
INSERT INTO p VALUES (1.005, 1.5, 2.5, 1.23456789012345678901234567);
INSERT INTO p VALUES (-1.005, -1.5, -2.5, 0.000001);
INSERT INTO p VALUES (999.994, 999.4, 3.4999, 1e20);
INSERT INTO p (a) VALUES ('12.345');
SELECT * FROM p ORDER BY a;
SELECT SUM(a), AVG(b), SUM(c), COUNT(d) FROM p;
INSERT INTO p (a) VALUES (999.995);
INSERT INTO p (b) VALUES (1000);
INSERT INTO p (b) VALUES (999.5);
INSERT INTO p (a) VALUES ('abc');
SELECT COUNT(*) FROM p;
CREATE TABLE q (x NUMBER(2,5));
CREATE TABLE q (x NUMBER(39));
CREATE TABLE q (x NUMBER(0));
SELECT FLOOR(-2.5), CEIL(-2.5), FLOOR(2.5), CEIL(2.1) FROM dual;
-- Without a format, numbers below one lose the leading zero, as in Oracle.
SELECT TO_CHAR(0.5), TO_CHAR(-0.25), LENGTH(TO_CHAR(0.5)) FROM dual;
