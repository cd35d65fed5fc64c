-- Values that do not fit their column are rejected, never truncated; every error names
-- the table and column. A failing multi-row INSERT leaves nothing behind.
CREATE TABLE v (code CHAR(3), name VARCHAR2(5), qty NUMBER(3), born DATE, n INTEGER NOT NULL);
INSERT INTO v VALUES ('abcd', 'x', 1, NULL, 1);
INSERT INTO v VALUES ('a', 'toolong', 1, NULL, 1);
-- lengths are in bytes: 'héllo' is 6 bytes in UTF-8
INSERT INTO v VALUES ('a', 'héllo', 1, NULL, 1);
INSERT INTO v VALUES ('a', 'hélo', 1, NULL, 1);
INSERT INTO v VALUES ('a', 'x', 'ten', NULL, 1);
INSERT INTO v VALUES ('a', 'x', 1000, NULL, 1);
INSERT INTO v VALUES ('a', 'x', 1, 'yesterday', 1);
INSERT INTO v VALUES ('a', 'x', 1, '2024-02-30', 1);
INSERT INTO v VALUES ('a', 'x', 1, 5, 1);
INSERT INTO v VALUES ('a', 'x', 1, NULL, NULL);
INSERT INTO v (code) VALUES ('a');
INSERT INTO v VALUES ('ab', 12345, 999, '2024-02-29', 7.5);
INSERT INTO v VALUES ('ab', 123456, 999, '2024-02-29', 7);
INSERT INTO v VALUES ('a', 'x', 1, NULL, 1), ('b', 'toolong', 2, NULL, 2);
INSERT INTO v (n, born) VALUES (3, TO_DATE('2020-01-01', 'YYYY-MM-DD'));
INSERT INTO v (n, qty) VALUES (4, TO_DATE('2020-01-01', 'YYYY-MM-DD'));
INSERT INTO v (n, name) VALUES (5, TO_DATE('2020-01-01', 'YYYY-MM-DD'));
-- CHAR is blank-padded to its length
SELECT code || '|', LENGTH(code), name, qty, born, n FROM v ORDER BY n;
-- INSERT ... SELECT: the 1000th row does not fit, so none of the 1000 stays
INSERT INTO v (n, qty) SELECT LEVEL, LEVEL FROM dual CONNECT BY LEVEL <= 1000;
SELECT COUNT(*) FROM v;
INSERT INTO v (n, qty) SELECT LEVEL, LEVEL FROM dual CONNECT BY LEVEL <= 999;
SELECT COUNT(*), MAX(qty) FROM v;
INSERT INTO v (id) VALUES (1);
INSERT INTO v (n) VALUES (1, 2);
-- declarations
CREATE TABLE w (a VARCHAR2(4001));
CREATE TABLE w (a VARCHAR2(0));
CREATE TABLE w (a VARCHAR2);
CREATE TABLE w (a BLOB);
CREATE TABLE w (a TIMESTAMP WITH TIME ZONE);
CREATE TABLE w (a INTEGER, a INTEGER);
CREATE TABLE w (a INTEGER DEFAULT 0);
CREATE TABLE w (a INTEGER, CONSTRAINT pk PRIMARY KEY (a) DEFERRABLE);
CREATE TABLE w (a INTEGER, CONSTRAINT pk PRIMARY KEY (b));
CREATE TABLE w3 (a VARCHAR2(10 BYTE), b CHAR, c VARCHAR(3), d NUMERIC(5,1), e DECIMAL(4), g NVARCHAR2(5), i INT, j NUMBER(7));
SELECT column_name, data_type, data_length, data_precision, data_scale, nullable FROM user_tab_columns WHERE table_name = 'W3' ORDER BY column_id;
INSERT INTO w3 (b) VALUES ('xy');
-- Lengths are in bytes; character length semantics (n CHAR) are refused, not misread.
CREATE TABLE w4 (a VARCHAR2(3 CHAR));
INSERT INTO w4 VALUES ('ééé');
