-- A serializable transaction reads one snapshot for its whole life, and may not change a
-- row that another transaction changed and committed after that snapshot: the statement
-- fails with "can't serialize access" (Oracle's ORA-08177), alone; the transaction goes
-- on. A row whose holder rolls back may be changed once the lock is free.
CREATE TABLE accounts (id NUMBER NOT NULL, balance NUMBER NOT NULL);
INSERT INTO accounts SELECT LEVEL, 100 FROM dual CONNECT BY LEVEL <= 3;
COMMIT;
SET TRANSACTION ISOLATION LEVEL SERIALIZABLE;
SELECT SUM(balance) FROM accounts;
-- session 2
UPDATE accounts SET balance = 150 WHERE id = 1;
COMMIT;
UPDATE accounts SET balance = 175 WHERE id = 2;
-- session 1
SELECT id, balance FROM accounts ORDER BY id;
UPDATE accounts SET balance = balance + 1 WHERE id = 1;
-- background
UPDATE accounts SET balance = balance + 1 WHERE id = 2;
-- session 2
-- blocked 1
ROLLBACK;
-- session 1
-- await 1
DELETE FROM accounts WHERE id = 3;
SELECT id, balance FROM accounts ORDER BY id;
COMMIT;
SELECT id, balance FROM accounts ORDER BY id;
SET TRANSACTION READ ONLY;
SELECT SUM(balance) FROM accounts;
-- session 2
UPDATE accounts SET balance = 0 WHERE id = 1;
COMMIT;
-- session 1
SELECT SUM(balance) FROM accounts;
UPDATE accounts SET balance = 0 WHERE id = 2;
COMMIT;
SELECT SUM(balance) FROM accounts;
