-- MERGE: a source's rows joined to a target table by ON; matched target rows updated
-- (UPDATE's WHERE choosing them, DELETE WHERE removing them after the update), source
-- rows that met no target row inserted (INSERT's WHERE choosing them); and the errors
-- Oracle gives.
CREATE TABLE stock (item VARCHAR2(10) PRIMARY KEY, qty NUMBER NOT NULL, price NUMBER(8,2));
INSERT INTO stock VALUES ('apple', 10, 0.50), ('pear', 4, 0.80), ('plum', 2, 1.10);
CREATE TABLE delivery (item VARCHAR2(10), qty NUMBER, price NUMBER(8,2));
INSERT INTO delivery VALUES ('apple', 5, 0.55), ('plum', -2, NULL), ('fig', 7, 2.00), ('kiwi', 0, 0.30);
COMMIT;
MERGE INTO stock s USING delivery d ON (s.item = d.item)
  WHEN MATCHED THEN UPDATE SET s.qty = s.qty + d.qty, s.price = NVL(d.price, s.price) DELETE WHERE s.qty = 0
  WHEN NOT MATCHED THEN INSERT (item, qty, price) VALUES (d.item, d.qty, d.price) WHERE d.qty > 0;
SELECT * FROM stock ORDER BY item;
ROLLBACK;
MERGE INTO stock s USING (SELECT item, SUM(qty) qty FROM delivery GROUP BY item) d ON (s.item = d.item)
  WHEN MATCHED THEN UPDATE SET qty = s.qty + d.qty WHERE d.qty > 0;
SELECT * FROM stock ORDER BY item;
ROLLBACK;
MERGE INTO stock s USING delivery d ON (s.item = d.item) WHEN MATCHED THEN UPDATE SET item = d.item;
MERGE INTO stock s USING delivery d ON (s.item = d.item) WHEN NOT MATCHED THEN INSERT VALUES (s.item, d.qty, d.price);
INSERT INTO delivery VALUES ('apple', 1, 0.60);
MERGE INTO stock s USING delivery d ON (s.item = d.item) WHEN MATCHED THEN UPDATE SET qty = d.qty;
SELECT * FROM stock ORDER BY item;
