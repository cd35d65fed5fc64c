-- Two transactions each wait for a row the other holds: the statement that would close
-- the cycle fails (its transaction stays open) and the other goes on once it ends.
CREATE TABLE accounts (id NUMBER NOT NULL, balance NUMBER NOT NULL);
INSERT INTO accounts SELECT LEVEL, 100 FROM dual CONNECT BY LEVEL <= 2;
COMMIT;
UPDATE accounts SET balance = 1 WHERE id = 1;
-- session 2
UPDATE accounts SET balance = 2 WHERE id = 2;
-- background
UPDATE accounts SET balance = 2 WHERE id = 1;
-- session 1
-- blocked 2
UPDATE accounts SET balance = 1 WHERE id = 2;
SELECT id, balance FROM accounts ORDER BY id;
ROLLBACK;
-- session 2
-- await 2
COMMIT;
SELECT id, balance FROM accounts ORDER BY id;
