"""psycopg against lioscope serve: parameters, types, transactions, errors, COPY.

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
print("psycopg: all checks passed")
