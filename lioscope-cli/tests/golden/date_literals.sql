-- ANSI DATE and TIMESTAMP literals: a DATE at midnight, a TIMESTAMP to the microsecond,
-- in every expression; DATE ± days and DATE - DATE in days, TIMESTAMP - DATE an
-- interval. Expected values are calendar facts (checked with SQLite's
-- julianday and date functions): 2024 and 2000 are leap years, 2023 and 1900 are not.
SELECT DATE '2020-01-01' d, TIMESTAMP '2024-03-05 10:30:00' ts, TIMESTAMP '2024-03-05 23:59:59.000000' zero_fraction FROM dual;
SELECT DATE '2024-02-28' + 1 leap, DATE '2023-02-28' + 1 common, DATE '2000-02-28' + 1 y2000, DATE '1900-02-28' + 1 y1900 FROM dual;
SELECT DATE '2024-01-31' + 1 jan_end, DATE '2024-03-01' - 1 feb_end, DATE '2024-12-31' + 1 year_end, 1 + DATE '2024-04-30' may_first FROM dual;
SELECT DATE '2025-01-01' - DATE '2024-01-01' y2024, DATE '2024-01-01' - DATE '2023-01-01' y2023, DATE '2024-03-01' - DATE '2024-02-01' feb2024, DATE '2023-03-01' - DATE '2023-02-01' feb2023 FROM dual;
SELECT DATE '2024-01-01' + 0.25 quarter_day, DATE '2024-01-01' + 1/24 one_hour, DATE '2024-01-01' - 1.5 back, TIMESTAMP '2024-01-01 18:00:00' - DATE '2024-01-01' fraction FROM dual;
SELECT DATE '2000-01-01' - DATE '1970-01-01' days_to_2000, DATE '2024-03-05' - 10 ten_back, TO_CHAR(DATE '2024-03-05', 'Day DD Month YYYY') spelled FROM dual;
CREATE TABLE ev (id INTEGER, at DATE);
INSERT INTO ev VALUES (1, DATE '2024-01-15'), (2, TIMESTAMP '2023-12-31 23:59:59'), (3, DATE '2024-02-28' + 1), (4, NULL);
SELECT id, at FROM ev ORDER BY id;
SELECT id FROM ev WHERE at >= DATE '2024-01-01' ORDER BY id;
SELECT id FROM ev WHERE at = DATE '2024-02-29';
SELECT id FROM ev WHERE at BETWEEN DATE '2023-12-31' AND DATE '2024-01-15' ORDER BY id;
SELECT id, at - DATE '2024-01-01' days_into_2024, at + 0.5 noon FROM ev ORDER BY id;
UPDATE ev SET at = at + 7 WHERE at < DATE '2024-02-01';
SELECT id, at FROM ev ORDER BY id;
UPDATE ev SET at = DATE '2024-12-25' WHERE id = 4;
SELECT id, at FROM ev WHERE id = 4;
-- A comparison with a DATE literal is a key range of an index on the DATE column.
CREATE TABLE days (id INTEGER, day DATE, pad VARCHAR2(100));
INSERT INTO days SELECT LEVEL, DATE '2023-12-31' + LEVEL, RPAD('p', 80, 'p') FROM dual CONNECT BY LEVEL <= 2000;
CREATE INDEX days_day ON days (day);
ANALYZE TABLE days COMPUTE STATISTICS;
EXPLAIN PLAN FOR SELECT id FROM days WHERE day >= DATE '2024-02-27' AND day < DATE '2024-02-27' + 4;
SELECT id, day FROM days WHERE day >= DATE '2024-02-27' AND day < DATE '2024-02-27' + 4 ORDER BY day;
EXPLAIN PLAN FOR SELECT id FROM days WHERE day = DATE '2025-01-01';
SELECT id FROM days WHERE day = DATE '2025-01-01';
-- errors: impossible or malformed literals, fractional seconds, DATE + DATE
SELECT DATE '2020-02-30' FROM dual;
SELECT DATE '2023-02-29' FROM dual;
SELECT DATE '2020-1-1x' FROM dual;
SELECT DATE '2020-13-01' FROM dual;
INSERT INTO ev VALUES (9, DATE '2024-04-31');
SELECT TIMESTAMP '2024-03-05 10:30:00.5' FROM dual;
SELECT TIMESTAMP '2024-03-05 24:00:00' FROM dual;
SELECT TIMESTAMP '2024-03-05' FROM dual;
SELECT DATE '2024-01-01' + DATE '2024-01-01' FROM dual;
SELECT DATE '9999-12-31' + 1 FROM dual;
SELECT COUNT(*) FROM ev;
