-- ALTER SESSION / ALTER SYSTEM SET: names are case-insensitive, values validated;
-- session settings override system ones; db_cache_size and filesystemio_options are
-- stored for the next open (v$parameter keeps showing the running value);
-- db_block_size and undo_tablespace_size are fixed at creation.
ALTER SESSION SET db_file_multiblock_read_count = 16;
SELECT name, value, isdefault FROM v$parameter WHERE name = 'db_file_multiblock_read_count';
SHOW PARAMETER multiblock
ALTER SESSION SET DB_FILE_MULTIBLOCK_READ_COUNT = '32';
SELECT value FROM v$parameter WHERE name = 'db_file_multiblock_read_count';
ALTER SESSION SET db_file_multiblock_read_count = 0;
ALTER SESSION SET db_file_multiblock_read_count = 1025;
ALTER SESSION SET db_file_multiblock_read_count = abc;
ALTER SESSION SET db_file_multiblock_read_count = 1.5;
ALTER SESSION SET db_file_multiblock_read_count = -1;
ALTER SESSION SET db_cache_size = 64M;
ALTER SESSION SET db_block_size = 4096;
ALTER SESSION SET nosuch = 1;
ALTER SESSION SET filesystemio_options = directio;
-- the session's own setting still wins over a new system value
ALTER SYSTEM SET db_file_multiblock_read_count = 64;
SELECT value, isdefault FROM v$parameter WHERE name = 'db_file_multiblock_read_count';
ALTER SYSTEM SET db_cache_size = 64M;
SELECT value, isdefault FROM v$parameter WHERE name = 'db_cache_size';
ALTER SYSTEM SET db_cache_size = 512K;
ALTER SYSTEM SET db_cache_size = 2G;
ALTER SYSTEM SET db_cache_size = 10X;
ALTER SYSTEM SET db_cache_size = 1048576;
ALTER SYSTEM SET filesystemio_options = directio;
ALTER SYSTEM SET filesystemio_options = async;
ALTER SYSTEM SET filesystemio_options = 'DIRECTIO';
ALTER SYSTEM SET db_block_size = 4096;
ALTER SYSTEM SET nosuch = 1;
-- undo_retention is the instance's (ALTER SYSTEM only, at once); the undo size is fixed
ALTER SESSION SET undo_retention = 60;
ALTER SYSTEM SET undo_retention = 60;
SELECT value, isdefault, isses_modifiable, issys_modifiable FROM v$parameter WHERE name = 'undo_retention';
ALTER SYSTEM SET undo_tablespace_size = 1M;
SELECT name, value, isdefault FROM v$parameter ORDER BY name;
ALTER SYSTEM FLUSH BUFFER_CACHE;
ALTER SYSTEM CHECKPOINT;
ALTER SYSTEM FLUSH BUFFER_CACHE extra;
ALTER SYSTEM CHECKPOINT GLOBAL;
ALTER SESSION SET db_file_multiblock_read_count = 8 scope = memory;
ALTER SYSTEM SET db_file_multiblock_read_count = 8 SCOPE = SPFILE;
alter session set db_file_multiblock_read_count = 4;
SHOW PARAMETER db_file
ALTER SESSION SET "db_file_multiblock_read_count" = 5;
ALTER SESSION SET NLS_DATE_FORMAT = 'YYYY';
