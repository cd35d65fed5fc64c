"""psycopg against lioscope serve: parameters, types, transactions, errors, COPY, and
the catalogs a program lists tables and columns from (information_schema, pg_catalog,
SQLAlchemy's inspector where SQLAlchemy is installed).

Run by lioscope-cli/tests/server_clients.rs with the server's port; exits non-zero on a
failed check."""
import datetime
import decimal
import sys

import psycopg

port = int(sys.argv[1])
with psycopg.connect(host="127.0.0.1", port=port, user="scott", password="tiger", dbname="lab", application_name="psycopg-test") as conn:
    cur = conn.cursor()
    cur.execute("CREATE TABLE t (id NUMBER(10) PRIMARY KEY, amount NUMBER(8,2), name VARCHAR2(20), at TIMESTAMP)")
    conn.commit()
    at = datetime.datetime(2026, 12, 2, 5, 44, 15, 250000)
    cur.execute("INSERT INTO t VALUES (%s, %s, %s, %s)", (1, decimal.Decimal("12.50"), "one", at))
    cur.executemany("INSERT INTO t (id, name) VALUES (%s, %s)", [(2, "two"), (3, None)])
    conn.commit()
    cur.execute("SELECT id, amount, name, at FROM t WHERE id = %s", (1,))
    row = cur.fetchone()
    assert row == (1, decimal.Decimal("12.5"), "one", at), row
    cur.execute("SELECT COUNT(*) FROM t WHERE name IS NULL")
    assert cur.fetchone()[0] == 1
    # A failed statement aborts the transaction until rollback, as in PostgreSQL.
    try:
        cur.execute("INSERT INTO t (id) VALUES (1)")
        raise AssertionError("a duplicate key was accepted")
    except psycopg.errors.UniqueViolation as e:
        assert "ORA-00001" in str(e), e
    try:
        cur.execute("SELECT 1 FROM dual")
        raise AssertionError("a statement ran in an aborted transaction")
    except psycopg.errors.InFailedSqlTransaction:
        pass
    conn.rollback()
    with cur.copy("COPY t (id, name) FROM STDIN") as copy:
        copy.write_row((4, "four"))
        copy.write_row((5, "five"))
    conn.commit()
    cur.execute("SELECT SUM(id) FROM t")
    assert cur.fetchone()[0] == 15
    cur.execute("SELECT program FROM v$session WHERE program = 'psycopg-test'")
    assert cur.fetchone() == ("psycopg-test",)

    # What a program reads to list tables and columns.
    cur.execute("CREATE TABLE parent (id NUMBER(6) PRIMARY KEY, label VARCHAR2(30) NOT NULL)")
    cur.execute("CREATE TABLE child (id NUMBER(6) PRIMARY KEY, parent_id NUMBER(6) REFERENCES parent, note VARCHAR2(10))")
    cur.execute("CREATE VIEW child_notes AS SELECT id, note FROM child")
    conn.commit()
    cur.execute(
        "SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = %s ORDER BY table_name",
        ("public",),
    )
    assert cur.fetchall() == [
        ("child", "BASE TABLE"),
        ("child_notes", "VIEW"),
        ("parent", "BASE TABLE"),
        ("t", "BASE TABLE"),
    ], "information_schema.tables"
    cur.execute(
        "SELECT column_name, data_type, character_maximum_length, is_nullable FROM information_schema.columns "
        "WHERE table_name = %s ORDER BY ordinal_position",
        ("parent",),
    )
    columns = cur.fetchall()
    assert columns == [("id", "bigint", None, "NO"), ("label", "character varying", 30, "NO")], columns
    # Booleans of the catalogs arrive as Python's, named and typed as PostgreSQL's.
    cur.execute(
        "SELECT a.attname, a.attnotnull, pg_catalog.format_type(a.atttypid, a.atttypmod) "
        "FROM pg_catalog.pg_attribute a WHERE a.attrelid = 'child'::regclass AND a.attnum > 0 "
        "AND NOT a.attisdropped ORDER BY a.attnum"
    )
    assert [d.name for d in cur.description] == ["attname", "attnotnull", "format_type"], cur.description
    assert cur.fetchall() == [
        ("id", True, "bigint"),
        ("parent_id", False, "bigint"),
        ("note", False, "character varying(10)"),
    ]
    cur.execute("SELECT c.relname, c.relkind FROM pg_class c WHERE c.relname ~ '^child' ORDER BY 1")
    assert cur.fetchall() == [("child", "r"), ("child_notes", "v")]
    # A pattern LIKE cannot say is refused, never matched wrongly.
    try:
        cur.execute("SELECT c.relname FROM pg_class c WHERE c.relname ~ %s", ("^(child|parent)$",))
        raise AssertionError("a regular expression lioscope cannot match was run")
    except psycopg.errors.FeatureNotSupported as e:
        assert "only a literal pattern" in str(e), e
    conn.rollback()
    try:
        import sqlalchemy
    except ImportError:
        sqlalchemy = None
        print("psycopg: SKIPPED the SQLAlchemy inspector checks: SQLAlchemy is not installed")
    if sqlalchemy is not None:
        engine = sqlalchemy.create_engine(f"postgresql+psycopg://scott:tiger@127.0.0.1:{port}/lab")
        inspector = sqlalchemy.inspect(engine)
        assert inspector.get_table_names() == ["child", "parent", "t"], inspector.get_table_names()
        assert inspector.get_view_names() == ["child_notes"]
        assert inspector.has_table("parent") and not inspector.has_table("nothing")
        # Its column query reads pg_attribute through a subquery two levels deep.
        columns = [(c["name"], str(c["type"]), c["nullable"]) for c in inspector.get_columns("t")]
        assert columns == [
            ("id", "BIGINT", False),
            ("amount", "NUMERIC(8, 2)", True),
            ("name", "VARCHAR(20)", True),
            ("at", "TIMESTAMP", True),
        ], columns
        keys = inspector.get_foreign_keys("child")
        assert [(k["constrained_columns"], k["referred_table"], k["referred_columns"]) for k in keys] == [
            (["parent_id"], "parent", ["id"])
        ], keys
        engine.dispose()
print("psycopg: all checks passed")
