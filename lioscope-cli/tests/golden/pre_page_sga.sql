-- parameter pre_page_sga: false
-- pre_page_sga: whether a background thread populates the buffer cache's memory after
-- open (TRUE by default); TRUE or FALSE, fixed at open (ALTER SYSTEM stores it for the
-- next open, v$parameter keeps showing the running value).
SELECT value, isdefault, isses_modifiable, issys_modifiable FROM v$parameter WHERE name = 'pre_page_sga';
SHOW PARAMETER pre_page
ALTER SESSION SET pre_page_sga = TRUE;
ALTER SYSTEM SET pre_page_sga = maybe;
ALTER SYSTEM SET pre_page_sga = 1;
ALTER SYSTEM SET pre_page_sga = 'True';
SELECT value FROM v$parameter WHERE name = 'pre_page_sga';
