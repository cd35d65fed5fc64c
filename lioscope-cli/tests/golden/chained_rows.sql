-- block_size: 2048
-- Rows longer than a 2 KB block are chained over several blocks; reading them back gives
-- every byte, and following the chain shows as "table fetch continued row" (one per
-- continuation piece) and one extra consistent get per piece.
CREATE TABLE ch (id INTEGER, a VARCHAR2(4000), b VARCHAR2(4000), c VARCHAR2(4000));
INSERT INTO ch SELECT LEVEL, RPAD('a', 1500 * LEVEL, 'a'), RPAD('b', 3000, 'b'), RPAD(TO_CHAR(LEVEL), 4000, '#') FROM dual CONNECT BY LEVEL <= 2;
INSERT INTO ch VALUES (3, 'short', NULL, 'x');
INSERT INTO ch VALUES (4, NULL, RPAD('z', 4000, 'z'), NULL);
SELECT blocks_below_hwm FROM user_segments WHERE segment_name = 'CH';
-- LENGTH(REPLACE(col, 'a')) is NULL when col holds nothing but 'a's
SELECT id, LENGTH(a) len_a, LENGTH(b) len_b, LENGTH(c) len_c, LENGTH(REPLACE(a, 'a')) not_a, LENGTH(REPLACE(b, 'b')) not_b, LTRIM(c, '#0123456789') c_rest, INSTR(c, '#') first_hash, INSTR(b, 'z', -1) last_z FROM ch ORDER BY id;
SELECT LENGTH(a || b || c) total, LENGTH(a || b) ab FROM ch ORDER BY id;
SET AUTOTRACE STATISTICS
SELECT MAX(LENGTH(c)), SUM(LENGTH(a)) FROM ch;
-- A full scan follows a chained row only when the query needs a column held in a later
-- piece: COUNT(*) and SELECT id (both in the head piece) follow none.
SELECT COUNT(*) FROM ch;
SELECT id FROM ch;
SET AUTOTRACE OFF
