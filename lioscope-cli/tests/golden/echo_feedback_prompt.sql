-- SQL*Plus's display commands. SET ECHO ON shows each statement of a script run with @
-- (as written, comments and ';' included) before its output; statements typed at the
-- prompt, as these are, are not echoed. SET FEEDBACK OFF drops "n rows selected." and the
-- messages of statements without rows ("Table created.", "1 row created."); the rows
-- still print. PROMPT prints its text. A SQL*Plus command ends at its first ';' (or its
-- line's end), so SQL may follow it on the same line. An error in a script names the
-- script and the line of the statement.
CREATE TABLE fruit (id NUMBER, name VARCHAR2(10));
PROMPT Typed at the prompt: not echoed, even with SET ECHO ON
SET ECHO ON
INSERT INTO fruit VALUES (1, 'apple');
@golden/data/echo_feedback_prompt.sql
SET FEEDBACK OFF; SELECT id, name FROM fruit ORDER BY id;
UPDATE fruit SET name = UPPER(name);
COMMIT;
SET FEEDBACK ON
SELECT name FROM fruit ORDER BY id;
SET ECHO OFF
@golden/data/echo_feedback_prompt_count.sql
