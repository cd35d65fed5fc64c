-- Unquoted identifiers are upper-cased, quoted ones kept exactly, as Oracle stores them.
CREATE TABLE customers (Cust_Id INTEGER, "MixedCase" VARCHAR2(10), "lower" INTEGER, "with space" INTEGER);
SELECT table_name FROM user_tables;
SELECT column_name FROM user_tab_columns WHERE table_name = 'CUSTOMERS' ORDER BY column_id;
INSERT INTO CUSTOMERS VALUES (1, 'a', 2, 3);
INSERT INTO Customers (cust_id, "MixedCase") VALUES (2, 'b');
SELECT cust_id, CUST_ID, Cust_Id, "CUST_ID", "MixedCase", "lower", "with space" FROM customers ORDER BY 1;
SELECT COUNT(*) FROM "CUSTOMERS";
SELECT c.cust_id, customers.cust_id FROM customers c ORDER BY 1;
SELECT cust_id AS "Id", cust_id AS id2, cust_id "lower alias" FROM customers WHERE cust_id = 1;
SELECT mixedcase FROM customers;
SELECT "mixedcase" FROM customers;
SELECT LOWER FROM customers;
SELECT "cust_id" FROM customers;
SELECT * FROM "customers";
SELECT x.cust_id FROM customers c;
-- quoted names that differ only in case are different tables
CREATE TABLE "customers" (a INTEGER);
CREATE TABLE "Customers" (a INTEGER);
CREATE TABLE CUSTOMERS (a INTEGER);
INSERT INTO "customers" VALUES (42);
SELECT * FROM "customers";
SELECT table_name FROM user_tables ORDER BY table_name;
DROP TABLE "Customers";
DROP TABLE "customers";
SELECT table_name FROM user_tables ORDER BY table_name;
CREATE TABLE t$1 (a# INTEGER, b_ INTEGER);
SELECT a#, b_ FROM t$1;
CREATE TABLE scott.t (a INTEGER);
SELECT * FROM scott.customers;
-- A zero-length quoted identifier is an error.
CREATE TABLE "" (a INTEGER);
-- A reserved word is not a table name unless quoted (Oracle's ORA-00903).
CREATE TABLE select (a INTEGER);
CREATE INDEX index ON customers (cust_id);
CREATE TABLE "SELECT" (a INTEGER);
SELECT table_name FROM user_tables ORDER BY table_name;
-- A table alias's column list renames the table's first columns, in order; more names
-- than the table has columns is an error at the first one too many.
SELECT c.id, x, "lower" FROM customers c(id, x) ORDER BY id;
SELECT cust_id FROM customers c(id);
SELECT * FROM customers c(a, b, "c", d, e);
