-- TIMESTAMP and INTERVAL types: columns of each, literals, arithmetic with Oracle's result
-- types, EXTRACT, TO_CHAR / TO_TIMESTAMP with FF, the interval makers, aggregates, CAST,
-- the dictionary's view of the types, and the errors. Expected values are calendar facts
-- (checked with Python's datetime): 2024 is a leap year.
CREATE TABLE ev (id INTEGER PRIMARY KEY, at TIMESTAMP, at3 TIMESTAMP(3), d DATE, ym INTERVAL YEAR TO MONTH, ds INTERVAL DAY(3) TO SECOND(2));
INSERT INTO ev VALUES (1, TIMESTAMP '2024-03-05 10:11:12.123456', TIMESTAMP '2024-03-05 10:11:12.123456', DATE '2024-03-05', INTERVAL '1-6' YEAR TO MONTH, INTERVAL '4 05:12:10.226' DAY TO SECOND);
INSERT INTO ev VALUES (2, '2024-01-31 23:59:59.5', '2024-01-31 23:59:59.9996', '2024-01-31', '-0-3', '-100 00:00:01.5');
INSERT INTO ev VALUES (3, NULL, NULL, NULL, NULL, NULL);
-- Stored rounded to each column's fraction: .9996 in a TIMESTAMP(3) is the next day.
SELECT * FROM ev ORDER BY id;
SELECT column_name, data_type, data_length, data_precision, data_scale FROM user_tab_columns WHERE table_name = 'EV' ORDER BY column_id;
-- TIMESTAMP ± INTERVAL is a TIMESTAMP; TIMESTAMP - DATE or TIMESTAMP an INTERVAL DAY TO
-- SECOND; DATE + INTERVAL a DATE (the fraction dropped); TIMESTAMP + number a DATE.
SELECT id, at + INTERVAL '1' YEAR next_year, at - d since_midnight, at3 - at rounding, d + ds d_plus, at + 1 a_day_on FROM ev ORDER BY id;
SELECT id, ym * 2 twice, ds / 3 third, -ym negated, ym + INTERVAL '0-7' YEAR TO MONTH plus_7, ds - INTERVAL '0.01' SECOND(1, 2) less FROM ev ORDER BY id;
SELECT EXTRACT(HOUR FROM at) h, EXTRACT(MINUTE FROM at) mi, EXTRACT(SECOND FROM at) s, EXTRACT(DAY FROM ds) dd, EXTRACT(SECOND FROM ds) ds_s, EXTRACT(YEAR FROM ym) y, EXTRACT(MONTH FROM ym) m FROM ev ORDER BY id;
SELECT TO_CHAR(at, 'YYYY-MM-DD HH24:MI:SS.FF3') ms, TO_CHAR(at, 'FF') ff, TO_CHAR(at, 'DD Mon YYYY HH:MI:SS.FF2 AM') spelled FROM ev WHERE id = 1;
SELECT TO_TIMESTAMP('05/03/2024 10:11:12.5', 'DD/MM/YYYY HH24:MI:SS.FF') masked, TO_TIMESTAMP('2024-03-05 10:11:12.1234567') rounded FROM dual;
SELECT NUMTODSINTERVAL(1.5, 'DAY') a, NUMTODSINTERVAL(90, 'minute') b, NUMTOYMINTERVAL(14, 'MONTH') c, TO_DSINTERVAL('+2 03:00:00') e, TO_YMINTERVAL('-1-1') f FROM dual;
SELECT SUM(ds) total, AVG(ds) mean, MIN(at) first_at, MAX(ym) longest, COUNT(at) n FROM ev;
SELECT id FROM ev WHERE at > TIMESTAMP '2024-02-01 00:00:00' OR ds < INTERVAL '0' DAY ORDER BY id;
SELECT id FROM ev WHERE at >= d AND at < d + 1 ORDER BY id;
SELECT id FROM ev WHERE ym BETWEEN INTERVAL '-1' YEAR AND INTERVAL '1' YEAR;
SELECT TRUNC(at) day_of, ROUND(at, 'HH') hour_of, ADD_MONTHS(at, 1) month_on, LAST_DAY(at) month_end FROM ev WHERE id = 1;
SELECT CAST(at AS DATE) as_date, CAST(d AS TIMESTAMP) as_ts, CAST('2024-01-01 00:00:00.5' AS TIMESTAMP(0)) ts0, CAST('1 02:03:04' AS INTERVAL DAY TO SECOND) as_ds FROM ev WHERE id = 1;
-- The statement's clock: SYSTIMESTAMP, CURRENT_TIMESTAMP and LOCALTIMESTAMP are one instant.
SELECT SYSTIMESTAMP - SYSTIMESTAMP zero, CURRENT_TIMESTAMP - LOCALTIMESTAMP also_zero, CAST(SYSTIMESTAMP AS DATE) - SYSDATE none FROM dual;
UPDATE ev SET at = at + INTERVAL '2' HOUR, ds = ds * 2 WHERE id = 1;
SELECT id, at, ds FROM ev WHERE id = 1;
-- An index on a TIMESTAMP column serves ranges of TIMESTAMP and DATE values, and one on
-- a DATE column an equality with a TIMESTAMP at a whole second.
CREATE INDEX ev_at ON ev (at);
ANALYZE TABLE ev COMPUTE STATISTICS;
EXPLAIN PLAN FOR SELECT /*+ INDEX(ev ev_at) */ id FROM ev WHERE at >= DATE '2024-03-05' AND at < TIMESTAMP '2024-03-06 00:00:00';
CREATE INDEX ev_d ON ev (d);
EXPLAIN PLAN FOR SELECT /*+ INDEX(ev ev_d) */ id FROM ev WHERE d = TIMESTAMP '2024-03-05 00:00:00';
SELECT /*+ INDEX(ev ev_d) */ id FROM ev WHERE d = TIMESTAMP '2024-03-05 00:00:00';
SELECT /*+ INDEX(ev ev_at) */ id FROM ev WHERE at >= DATE '2024-03-05' AND at < TIMESTAMP '2024-03-06 00:00:00';
CREATE INDEX ev_d ON ev (d);
EXPLAIN PLAN FOR SELECT /*+ INDEX(ev ev_d) */ id FROM ev WHERE d = TIMESTAMP '2024-03-05 00:00:00';
SELECT /*+ INDEX(ev ev_d) */ id FROM ev WHERE d = TIMESTAMP '2024-03-05 00:00:00';
-- Errors.
SELECT INTERVAL '1' DAY + INTERVAL '1' MONTH FROM dual;
SELECT at * 2 FROM ev;
SELECT DATE '2024-01-31' + INTERVAL '1' MONTH FROM dual;
SELECT EXTRACT(HOUR FROM d) FROM ev;
INSERT INTO ev (id, ds) VALUES (9, INTERVAL '1000' DAY(4));
INSERT INTO ev (id, ym) VALUES (9, INTERVAL '1' DAY);
CREATE TABLE bad (a TIMESTAMP(9));
CREATE TABLE bad (a TIMESTAMP WITH TIME ZONE);
SELECT TO_CHAR(d, 'SS.FF') FROM ev;
SELECT d, SUM(n) OVER (ORDER BY d RANGE BETWEEN INTERVAL '1' DAY PRECEDING AND CURRENT ROW) s FROM (SELECT DATE '2024-01-01' + LEVEL / 2 d, LEVEL n FROM dual CONNECT BY LEVEL <= 6) ORDER BY d;
SELECT EXTRACT(YEAR FROM MAX(d)) y, CAST(MAX(id) AS VARCHAR2(5)) c, EXTRACT(DAY FROM SUM(ds)) days, TRIM(MAX(TO_CHAR(id))) t FROM ev;
SELECT CAST(INTERVAL '-1.5' SECOND AS INTERVAL DAY TO SECOND(0)) away_from_zero, CAST(TIMESTAMP '1969-12-31 23:59:59.5' AS TIMESTAMP(0)) half_up FROM dual;
-- A view keeps an interval type as Oracle writes it, and a heading shows it so.
CREATE VIEW ev_days AS SELECT id, CAST(ds AS INTERVAL DAY(3) TO SECOND(0)) ds0 FROM ev;
SELECT text FROM user_views WHERE view_name = 'EV_DAYS';
SELECT id, ds0 FROM ev_days ORDER BY id;
SELECT CAST(ym AS INTERVAL YEAR(3) TO MONTH) FROM ev WHERE id = 1;
-- A RANGE frame over a TIMESTAMP key reaches exactly as far as its offset: a day is
-- 86,400 seconds to the microsecond, and the row 0.3 s more than a day back is outside.
SELECT t, SUM(n) OVER (ORDER BY t RANGE 1 PRECEDING) one_day, SUM(n) OVER (ORDER BY t RANGE BETWEEN CURRENT ROW AND INTERVAL '0.5' SECOND FOLLOWING) half_second FROM (SELECT TIMESTAMP '2024-01-01 10:00:00.2' t, 1 n FROM dual UNION ALL SELECT TIMESTAMP '2024-01-02 10:00:00.5', 2 FROM dual UNION ALL SELECT TIMESTAMP '2024-01-02 10:00:00.9', 4 FROM dual) ORDER BY t;
-- Text compares with an interval in the interval's format; SUM of intervals is an
-- interval in a set operation's column; DECODE gives its first result's type.
SELECT id FROM ev WHERE ym = '1-6';
SELECT SUM(ds) total FROM ev UNION ALL SELECT ds FROM ev WHERE id = 2;
SELECT DECODE(id, 1, TIMESTAMP '2024-01-01 00:00:00', DATE '2024-06-01') d FROM ev ORDER BY id;
SELECT TO_TIMESTAMP('2024-01-01 10:00:59.9999996', 'YYYY-MM-DD HH24:MI:SS.FF') carried FROM dual;
