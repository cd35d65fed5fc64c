PROMPT Run with @: each statement is echoed
INSERT INTO fruit VALUES (2, 'pear');
SELECT name
  FROM fruit -- a comment stays in the echo
 WHERE id = 2;
SET FEEDBACK OFF
INSERT INTO fruit VALUES (3, 'plum'); SELECT COUNT(*) AS fruits FROM fruit;
SET FEEDBACK ON
SELECT nosuch FROM fruit;
@@echo_feedback_prompt_count.sql
