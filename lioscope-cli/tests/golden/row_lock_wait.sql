-- A writer that meets a row locked by another transaction waits for it to end, then
-- changes the row as that transaction left it: no update is lost.
CREATE TABLE accounts (id NUMBER NOT NULL, balance NUMBER NOT NULL);
INSERT INTO accounts SELECT LEVEL, 100 FROM dual CONNECT BY LEVEL <= 3;
COMMIT;
UPDATE accounts SET balance = balance + 10 WHERE id = 1;
-- session 2
-- background
UPDATE accounts SET balance = balance * 2 WHERE id = 1;
-- session 1
-- blocked 2
SELECT event FROM v$session WHERE event IS NOT NULL;
UPDATE accounts SET balance = balance + 1 WHERE id = 2;
COMMIT;
-- session 2
-- await 2
COMMIT;
SELECT id, balance FROM accounts ORDER BY id;
SELECT name, value FROM v$mystat WHERE name = 'enqueue waits';
SELECT event, total_waits FROM v$system_event WHERE event = 'enq: TX - row lock contention';
