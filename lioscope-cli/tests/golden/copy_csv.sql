-- COPY t [(columns)] FROM 'file.csv' [(HEADER, DELIMITER, NULL, QUOTE, FORMAT CSV)].
-- Paths are relative to tests/ (the harness's working directory). Empty fields are
-- NULL; a bad line fails the whole COPY with file, line and field number, and leaves
-- nothing of it behind (not even the blocks it filled: the high-water mark goes back).
CREATE TABLE c (id INTEGER NOT NULL, name VARCHAR2(12), price NUMBER(6,2), born DATE);
COPY c FROM 'golden/data/copy_header.csv' (HEADER, FORMAT CSV);
SELECT id, name, price, born FROM c ORDER BY id;
SELECT COUNT(*), COUNT(name), COUNT(price), COUNT(born) FROM c;
COPY c (id, name, price) FROM 'golden/data/copy_semicolon.csv' (DELIMITER ';');
SELECT id, name, price FROM c WHERE id >= 10 ORDER BY id;
-- HEADER skips the first line whatever it holds
COPY c (id, name, price) FROM 'golden/data/copy_semicolon.csv' (DELIMITER ';', HEADER);
SELECT id, COUNT(*) FROM c WHERE id >= 10 GROUP BY id ORDER BY id;
COPY c (id, name, price) FROM 'golden/data/copy_null_marker.csv' (NULL 'NA');
SELECT id, name, price FROM c WHERE id IN (1, 2) ORDER BY id, name;
SELECT COUNT(*) FROM c;
-- bad lines: nothing of the failed COPY stays
COPY c (id, name, price) FROM 'golden/data/copy_bad_number.csv';
SELECT COUNT(*) FROM c;
COPY c (id, name, price) FROM 'golden/data/copy_bad_fields.csv';
COPY c (id, name, price) FROM 'golden/data/copy_too_long.csv';
SELECT COUNT(*) FROM c;
CREATE TABLE c2 (id INTEGER NOT NULL, name VARCHAR2(12), price NUMBER(6,2));
-- a quoted field may span lines and CRLF line ends are accepted; numbers may carry spaces
COPY c2 FROM 'golden/data/copy_multiline_crlf.csv';
SELECT id, name || '|', LENGTH(name), price FROM c2 ORDER BY id;
-- line numbers count file lines, not records
COPY c2 FROM 'golden/data/copy_bad_after_multiline.csv';
-- 2500 good rows (several blocks) then a bad line
COPY c2 FROM 'golden/data/copy_bad_late.csv';
SELECT COUNT(*) FROM c2;
SELECT segment_name, blocks_below_hwm FROM user_segments ORDER BY segment_name;
-- errors before reading
COPY c FROM 'golden/data/nosuch.csv';
COPY nosuch FROM 'golden/data/copy_header.csv';
COPY c (nosuch) FROM 'golden/data/copy_header.csv';
COPY c TO 'golden/data/out.csv';
COPY c FROM STDIN;
COPY c FROM 'golden/data/copy_header.csv' (FORMAT TEXT);
SELECT COUNT(*) FROM c;
