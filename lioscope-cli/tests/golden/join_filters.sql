-- Join filters: a hash join's Bloom filter of its build keys (JOIN FILTER CREATE :BF0000),
-- checked in the probe side's scan (JOIN FILTER USE, SYS_OP_BLOOM_FILTER in its
-- predicate), so orders of customers outside the build side never reach the join; the
-- hints that force and forbid it, the optimizer's own choice, the row-source
-- statistics of each line and the rows the filter checked and removed.
CREATE TABLE customers (cust_id INTEGER, region VARCHAR2(10), name VARCHAR2(30));
CREATE TABLE orders (order_id INTEGER, cust_id INTEGER, amount NUMBER);
INSERT INTO customers SELECT LEVEL, CASE MOD(LEVEL, 4) WHEN 0 THEN 'NORTH' WHEN 1 THEN 'SOUTH' WHEN 2 THEN 'EAST' ELSE 'WEST' END, 'customer ' || LEVEL FROM dual CONNECT BY LEVEL <= 400;
INSERT INTO orders SELECT LEVEL, CASE WHEN MOD(LEVEL, 97) = 0 THEN NULL ELSE MOD(LEVEL * 13, 400) + 1 END, MOD(LEVEL, 50) FROM dual CONNECT BY LEVEL <= 12000;
COMMIT;
ANALYZE TABLE customers COMPUTE STATISTICS;
ANALYZE TABLE orders COMPUTE STATISTICS;
-- A selective build side (one region of four): the optimizer takes a filter by itself.
EXPLAIN PLAN FOR SELECT c.name, SUM(o.amount) FROM customers c JOIN orders o ON o.cust_id = c.cust_id WHERE c.region = 'NORTH' GROUP BY c.name;
-- Forbidden by hint, and forced on a join where the build side covers every key.
EXPLAIN PLAN FOR SELECT /*+ NO_PX_JOIN_FILTER(o) */ c.name, SUM(o.amount) FROM customers c JOIN orders o ON o.cust_id = c.cust_id WHERE c.region = 'NORTH' GROUP BY c.name;
EXPLAIN PLAN FOR SELECT /*+ LEADING(c o) USE_HASH(o) PX_JOIN_FILTER(o) */ COUNT(*) FROM customers c JOIN orders o ON o.cust_id = c.cust_id AND o.amount > 40;
-- A join that keeps the probe side's unmatched rows cannot take one.
EXPLAIN PLAN FOR SELECT /*+ PX_JOIN_FILTER(o) */ COUNT(*) FROM orders o LEFT JOIN customers c ON o.cust_id = c.cust_id AND c.region = 'NORTH';
-- What each line did: JOIN FILTER USE passes the 2,969 orders of the northern
-- customers and the few others the filter cannot tell from them (its false
-- positives), and drops the rest before the join, those with no customer among them.
SET AUTOTRACE ON
SELECT /*+ LEADING(c o) USE_HASH(o) */ COUNT(*), SUM(o.amount) FROM customers c JOIN orders o ON o.cust_id = c.cust_id WHERE c.region = 'NORTH';
SET AUTOTRACE OFF
SELECT name, value FROM v$mystat WHERE name LIKE 'join filter rows%' ORDER BY name;
