-- The online redo log: v$log, v$logfile, v$recovery_progress, the redo statistics a
-- commit counts, COMMIT WRITE and ALTER SYSTEM SWITCH LOGFILE.
SELECT * FROM v$log WHERE 1 = 0;
SELECT * FROM v$logfile WHERE 1 = 0;
SELECT group#, members, archived, bytes FROM v$log ORDER BY group#;
SELECT COUNT(*) FROM v$log WHERE status = 'CURRENT';
SELECT COUNT(*) FROM v$logfile WHERE type = 'ONLINE';
SELECT type, item, units FROM v$recovery_progress;
SET AUTOCOMMIT OFF
CREATE TABLE t (a INTEGER);
INSERT INTO t VALUES (1);
COMMIT;
SELECT name FROM v$mystat WHERE name IN ('redo entries', 'redo size', 'redo synch writes') AND value > 0 ORDER BY name;
INSERT INTO t VALUES (2);
COMMIT WRITE BATCH NOWAIT;
SELECT name, value FROM v$mystat WHERE name = 'commit batch/nowait requested';
INSERT INTO t VALUES (3);
COMMIT WRITE IMMEDIATE WAIT;
COMMIT WRITE LATER;
ALTER SYSTEM SWITCH LOGFILE;
SELECT COUNT(*) FROM v$log WHERE status = 'CURRENT';
SELECT name FROM v$sysstat WHERE name IN ('redo log switches', 'redo writes', 'redo blocks written') AND value > 0 ORDER BY name;
SELECT COUNT(*) FROM t;
