-- parameter _ash_sampling_interval: 10
-- v$active_session_history: every _ash_sampling_interval milliseconds (a hidden
-- parameter: 1000 by default, 10 at least, here 10) a sample of each active session,
-- kept in a ring of at most _ash_size samples. Its columns, from an empty selection:
SELECT * FROM v$active_session_history WHERE 1 = 0;
SELECT name, value, isdefault, isses_modifiable, issys_modifiable FROM v$parameter WHERE name IN ('_ash_sampling_interval', '_ash_size') ORDER BY name;
-- The interval is the instance's: 10 ms at least, and no session sets its own.
ALTER SYSTEM SET "_ash_sampling_interval" = 5;
ALTER SESSION SET "_ash_sampling_interval" = 20;
-- Each sample keeps the interval it was taken with.
SELECT COUNT(*) FROM v$active_session_history WHERE sample_interval_ms <> 10;
-- A ring of no samples keeps none.
ALTER SYSTEM SET "_ash_size" = 0;
SELECT COUNT(*) FROM v$active_session_history;
