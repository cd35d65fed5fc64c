-- ROWNUM: numbered after WHERE and before ORDER BY; ROWNUM <= n / < n / n >= ROWNUM
-- become COUNT STOPKEY, which stops the scan early (2 consistent gets: segment header
-- and the first block).
CREATE TABLE r (id INTEGER, v VARCHAR2(5));
INSERT INTO r SELECT LEVEL, CHR(64 + LEVEL) FROM dual CONNECT BY LEVEL <= 10;
SELECT id FROM r WHERE ROWNUM <= 3;
SELECT id, ROWNUM FROM r WHERE ROWNUM < 4;
SELECT id FROM r WHERE 3 >= ROWNUM;
SELECT id FROM r WHERE ROWNUM <= 0;
SELECT id, ROWNUM FROM r WHERE id > 5 AND ROWNUM <= 2;
SELECT ROWNUM, id FROM r WHERE id > 7;
SELECT id, ROWNUM rn FROM r WHERE ROWNUM <= 5 ORDER BY id DESC;
SELECT COUNT(*) FROM r WHERE ROWNUM <= 4;
SELECT id FROM r WHERE ROWNUM <= 2 AND ROWNUM <= 5;
SELECT MAX(ROWNUM) FROM r;
EXPLAIN PLAN FOR SELECT id FROM r WHERE id > 5 AND ROWNUM <= 2;
EXPLAIN PLAN FOR SELECT id, ROWNUM FROM r;
SET AUTOTRACE STATISTICS
SELECT v FROM r WHERE ROWNUM <= 1;
SET AUTOTRACE OFF
-- forms lioscope does not implement
SELECT id FROM r WHERE ROWNUM = 1;
SELECT id FROM r WHERE ROWNUM > 1;
SELECT id FROM r WHERE ROWNUM <= 2 OR id = 5;
-- BUG (low): ROWNUM < n with n = -9223372036854775808 overflows computing n - 1
-- (plan.rs rownum_limit): a panic in debug builds, and in release builds the limit wraps
-- to i64::MAX so every row is returned; expected no rows. LEVEL < n has the same
-- overflow (level_limit). Left out so the harness does not crash:
-- SELECT 1 FROM dual WHERE ROWNUM < -9223372036854775807 - 1;
