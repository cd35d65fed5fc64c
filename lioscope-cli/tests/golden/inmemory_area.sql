-- parameter pre_page_sga: false
-- The In-Memory Area: inmemory_size maps one pool of 64 KiB extents that holds the
-- column units' large arrays (codes, plain keys). No row while the column store is off;
-- USED_BYTES follows what the populated units hold, and a table taken out of the store
-- gives its extents back.
SELECT pool, alloc_bytes, used_bytes FROM v$inmemory_area;
ALTER SYSTEM SET inmemory_size = 8M;
SELECT pool, alloc_bytes, used_bytes, free_runs, fallback_bytes FROM v$inmemory_area;
CREATE TABLE im_area (id NUMBER, email VARCHAR2(40), grp NUMBER);
INSERT INTO im_area SELECT LEVEL, 'user' || LEVEL || '@example.com', MOD(LEVEL, 7) FROM dual CONNECT BY LEVEL <= 20000;
COMMIT;
ALTER TABLE im_area INMEMORY MEMCOMPRESS FOR QUERY LOW PRIORITY HIGH;
EXEC DBMS_INMEMORY_ADMIN.POPULATE_WAIT('HIGH', 100, 120);
SELECT segment_name, populate_status, populated_rows FROM v$im_segments;
SELECT pool, alloc_bytes, used_bytes, free_runs, fallback_bytes FROM v$inmemory_area;
SELECT COUNT(*) FROM im_area WHERE email LIKE 'user1%';
ALTER TABLE im_area NO INMEMORY;
SELECT pool, alloc_bytes, used_bytes, free_runs, fallback_bytes FROM v$inmemory_area;
ALTER SYSTEM SET inmemory_size = 0;
SELECT pool FROM v$inmemory_area;
