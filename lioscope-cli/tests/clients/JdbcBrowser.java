// What a JDBC database browser (DBeaver, DataGrip, SQuirreL) asks of a PostgreSQL
// server through PostgreSQL's own JDBC driver: the schemas, the tables and views, the
// columns with their types; then a prepared statement, values of each type read back,
// and an error's SQLSTATE.
//
// Run by lioscope-cli/tests/server_clients.rs as a single-file program
// (`java -cp postgresql.jar JdbcBrowser.java PORT`) against a new database where SCOTT
// (password tiger) may log in; exits non-zero on a failed check.

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.List;

public class JdbcBrowser {
    static void check(boolean ok, String what, Object got) {
        if (!ok) {
            throw new AssertionError(what + ": got " + got);
        }
    }

    static List<String> column(ResultSet rows, String... names) throws SQLException {
        List<String> values = new ArrayList<>();
        while (rows.next()) {
            List<String> fields = new ArrayList<>();
            for (String name : names) {
                fields.add(rows.getString(name));
            }
            values.add(String.join("|", fields));
        }
        return values;
    }

    public static void main(String[] args) throws Exception {
        String url = "jdbc:postgresql://127.0.0.1:" + args[0] + "/lab";
        try (Connection c = DriverManager.getConnection(url, "scott", "tiger")) {
            try (Statement s = c.createStatement()) {
                s.execute("CREATE TABLE parent (id NUMBER(6) PRIMARY KEY, label VARCHAR2(30) NOT NULL)");
                s.execute("CREATE TABLE item (id NUMBER(10) PRIMARY KEY, parent_id NUMBER(6) REFERENCES parent, "
                        + "amount NUMBER(8,2), code CHAR(3), at TIMESTAMP)");
                s.execute("CREATE VIEW item_codes AS SELECT id, code FROM item");
            }
            DatabaseMetaData meta = c.getMetaData();
            check(meta.getDatabaseProductName().equals("PostgreSQL"), "product", meta.getDatabaseProductName());

            List<String> schemas = column(meta.getSchemas(), "TABLE_SCHEM");
            check(schemas.contains("public") && schemas.contains("pg_catalog"), "schemas", schemas);
            List<String> catalogs = column(meta.getCatalogs(), "TABLE_CAT");
            check(catalogs.equals(List.of("lab")), "catalogs", catalogs);

            List<String> tables = column(meta.getTables(null, "public", "%", new String[] {"TABLE"}), "TABLE_NAME");
            check(tables.equals(List.of("item", "parent")), "tables", tables);
            List<String> views = column(meta.getTables(null, "public", "%", new String[] {"VIEW"}), "TABLE_NAME", "TABLE_TYPE");
            check(views.equals(List.of("item_codes|VIEW")), "views", views);
            List<String> named = column(meta.getTables(null, "public", "par%", null), "TABLE_NAME");
            check(named.equals(List.of("parent")), "tables named par%", named);

            List<String> columns = column(meta.getColumns(null, "public", "item", "%"),
                    "COLUMN_NAME", "TYPE_NAME", "COLUMN_SIZE", "DECIMAL_DIGITS", "IS_NULLABLE", "ORDINAL_POSITION");
            check(columns.equals(List.of(
                    "id|int8|19|0|NO|1",
                    "parent_id|int8|19|0|YES|2",
                    "amount|numeric|8|2|YES|3",
                    "code|bpchar|3|0|YES|4",
                    "at|timestamp|29|6|YES|5")), "columns", columns);
            List<String> viewColumns = column(meta.getColumns(null, "public", "item_codes", "%"), "COLUMN_NAME");
            check(viewColumns.equals(List.of("id", "code")), "view columns", viewColumns);

            try (Statement s = c.createStatement()) {
                s.execute("INSERT INTO parent VALUES (1, 'one')");
            }
            try (PreparedStatement p = c.prepareStatement("INSERT INTO item VALUES (?, ?, ?, ?, ?)")) {
                for (int i = 1; i <= 3; i++) {
                    p.setLong(1, i);
                    p.setInt(2, 1);
                    p.setBigDecimal(3, new BigDecimal("12.50").multiply(BigDecimal.valueOf(i)));
                    p.setString(4, "c" + i);
                    p.setTimestamp(5, Timestamp.valueOf("2026-12-02 10:00:00"));
                    check(p.executeUpdate() == 1, "rows inserted", i);
                }
            }
            try (PreparedStatement p = c.prepareStatement("SELECT id, amount, code, at FROM item WHERE id >= ? ORDER BY id")) {
                p.setLong(1, 2);
                ResultSet rows = p.executeQuery();
                check(rows.next(), "first row", null);
                check(rows.getLong(1) == 2, "id", rows.getLong(1));
                check(rows.getBigDecimal(2).compareTo(new BigDecimal("25.00")) == 0, "amount", rows.getBigDecimal(2));
                check(rows.getString(3).equals("c2 "), "CHAR's blanks", rows.getString(3));
                check(rows.getTimestamp(4).equals(Timestamp.valueOf("2026-12-02 10:00:00")), "at", rows.getTimestamp(4));
                check(rows.next() && rows.getLong(1) == 3 && !rows.next(), "second row and no third", null);
            }
            try (Statement s = c.createStatement()) {
                s.execute("INSERT INTO parent VALUES (1, 'again')");
                throw new AssertionError("a duplicate key was inserted");
            } catch (SQLException e) {
                check("23505".equals(e.getSQLState()) && e.getMessage().contains("ORA-00001"), "unique violation", e);
            }
        }
        System.out.println("jdbc: all checks passed");
    }
}
