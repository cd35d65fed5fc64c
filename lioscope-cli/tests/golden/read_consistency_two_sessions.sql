-- parameter undo_tablespace_size: 16M
-- Session 1 updates rows twice without committing; session 2 still sees the committed
-- data, at the price of CR clones built from undo (and reused by its next query).
CREATE TABLE rc_test (id NUMBER NOT NULL, update_seq NUMBER NOT NULL, update_stamp DATE NOT NULL, padding VARCHAR2(60));
INSERT INTO rc_test SELECT LEVEL, MOD(LEVEL, 10), TO_DATE('2011-06-23', 'YYYY-MM-DD'), RPAD('x', 60, 'x') FROM dual CONNECT BY LEVEL <= 2000;
COMMIT;
SELECT SUM(update_seq) FROM rc_test;
UPDATE rc_test SET update_seq = update_seq + 1 WHERE ROWNUM < 200;
UPDATE rc_test SET update_seq = update_seq + 1 WHERE ROWNUM < 200;
SELECT SUM(update_seq) FROM rc_test;
-- session 2
SET AUTOTRACE STATISTICS
SELECT SUM(update_seq) FROM rc_test;
SELECT SUM(update_seq) FROM rc_test;
-- session 1
COMMIT;
-- session 2
SELECT SUM(update_seq) FROM rc_test;
SET AUTOTRACE OFF
SELECT name, value FROM v$mystat WHERE name IN ('CR blocks created', 'consistent changes', 'data blocks consistent reads - undo records applied') ORDER BY name;
