-- ORDER BY: NULLs last ascending and first descending unless NULLS FIRST/LAST says;
-- '' is NULL; strings sort by bytes (uppercase before lowercase); positions, aliases,
-- quoted aliases, expressions not in the select list, qualified names.
CREATE TABLE o (id INTEGER, name VARCHAR2(10), score NUMBER);
INSERT INTO o VALUES (1, 'b', 10), (2, NULL, 5), (3, 'a', NULL), (4, 'B', 5), (5, 'a', 7.5), (6, '', -1);
SELECT id, name FROM o ORDER BY name, id;
SELECT id, name FROM o ORDER BY name DESC, id;
SELECT id, name FROM o ORDER BY name NULLS FIRST, id;
SELECT id, name FROM o ORDER BY name DESC NULLS LAST, id DESC;
SELECT id, score FROM o ORDER BY 2, 1;
SELECT id, score FROM o ORDER BY 2 DESC, 1;
SELECT id, score s FROM o ORDER BY s, id;
SELECT id FROM o ORDER BY score * -1, id;
SELECT id FROM o ORDER BY name, score DESC;
SELECT id AS "Key", name FROM o ORDER BY "Key" DESC;
SELECT name, id FROM o WHERE name IS NOT NULL ORDER BY UPPER(name), id;
SELECT id FROM o ORDER BY o.id DESC;
SELECT id x FROM o ORDER BY id;
SELECT id, name FROM o ORDER BY 3;
SELECT id, name FROM o ORDER BY 0;
SELECT id FROM o ORDER BY nosuch;
