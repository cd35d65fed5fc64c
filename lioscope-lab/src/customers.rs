//! A customers table shaped like Oracle's SH.CUSTOMERS, with the columns the engine
//! benchmark names, in that order: `cust_id` 1..N in insert order, first and last name,
//! gender, year of birth, a postal code random with respect to `cust_id`, city,
//! `cust_valid` ('A' or 'I', the 8th column), credit limit and e-mail; about 150 bytes a
//! row. Built with INSERT ... SELECT over the CONNECT BY row generator, or loaded from a
//! CSV file written by [`write_csv`].

use std::io::Write;

/// The table definition.
pub const CREATE_TABLE: &str = "CREATE TABLE customers (
    cust_id NUMBER NOT NULL,
    cust_first_name VARCHAR2(20) NOT NULL,
    cust_last_name VARCHAR2(40) NOT NULL,
    cust_gender CHAR(1),
    cust_year_of_birth NUMBER(4),
    cust_postal_code VARCHAR2(10),
    cust_city VARCHAR2(30),
    cust_valid VARCHAR2(1),
    cust_credit_limit NUMBER,
    cust_email VARCHAR2(50)
)";

/// The two indexes of the experiments, name and statement: on `cust_id` (in insert
/// order: a good clustering factor) and on `cust_postal_code` (random with respect to
/// it: a bad one).
pub const INDEXES: [(&str, &str); 2] = [
    ("CUST_ID_IX", "CREATE INDEX cust_id_ix ON customers (cust_id)"),
    ("CUST_POSTAL_IX", "CREATE INDEX cust_postal_ix ON customers (cust_postal_code)"),
];

/// `COUNT(cust_valid)` through every row, the experiments' query, by each access path.
pub mod count {
    /// Range scan of `cust_id_ix`, table access by rowid: good clustering.
    pub const BY_GOOD_INDEX: &str =
        "SELECT /*+ INDEX(c cust_id_ix) */ COUNT(cust_valid) FROM customers c WHERE cust_id > 0";
    /// Range scan of `cust_postal_ix`, table access by rowid: bad clustering.
    pub const BY_BAD_INDEX: &str =
        "SELECT /*+ INDEX(c cust_postal_ix) */ COUNT(cust_valid) FROM customers c WHERE cust_postal_code > '0'";
    /// Full scan of the blocks, never the column store.
    pub const FULL: &str = "SELECT /*+ FULL(c) NO_INMEMORY(c) */ COUNT(cust_valid) FROM customers c WHERE cust_id > 0";
    /// The full scan without its predicate.
    pub const FULL_NO_PREDICATE: &str = "SELECT /*+ FULL(c) NO_INMEMORY(c) */ COUNT(cust_valid) FROM customers c";
    /// `TABLE ACCESS INMEMORY FULL` with min/max pruning off, so the predicate reads
    /// every unit's codes.
    pub const INMEMORY: &str =
        "SELECT /*+ INMEMORY(c) NO_INMEMORY_PRUNING(c) */ COUNT(cust_valid) FROM customers c WHERE cust_id > 0";
    /// The in-memory scan without a predicate.
    pub const INMEMORY_NO_PREDICATE: &str =
        "SELECT /*+ INMEMORY(c) NO_INMEMORY_PRUNING(c) */ COUNT(cust_valid) FROM customers c";
    /// Full scan of `customers_hcc`, the copy of customers compressed with Hybrid
    /// Columnar Compression, cached in the buffer cache.
    pub const COMPRESSED_BLOCKS: &str = "SELECT COUNT(cust_valid) FROM customers_hcc c WHERE cust_id > 0";
}

/// The INSERT ... SELECT of customers, `{table}`, `{rows}` and the id expression `LEVEL_ID`
/// to fill in.
const TEMPLATE: &str = "INSERT INTO {table}
SELECT LEVEL_ID,
       'Firstname-' || MOD(LEVEL_ID, 1000),
       'Lastname-of-the-customer-' || ORA_HASH(LEVEL_ID, 99999, 1),
       CASE WHEN MOD(LEVEL_ID, 2) = 0 THEN 'M' ELSE 'F' END,
       1920 + MOD(LEVEL_ID, 80),
       LPAD(ORA_HASH(LEVEL_ID, 99999, 2), 5, '0'),
       'Customer City of ' || ORA_HASH(LEVEL_ID, 619, 3),
       CASE WHEN MOD(LEVEL_ID, 10) = 0 THEN 'I' ELSE 'A' END,
       1000 * (1 + MOD(LEVEL_ID, 15)),
       'firstname.lastname' || LEVEL_ID || '@company' || MOD(LEVEL_ID, 100) || '.example.com'
FROM dual CONNECT BY LEVEL <= {rows}";

/// INSERT ... SELECT generating `rows` customers into `table`.
pub fn insert_select(table: &str, rows: u64) -> String {
    insert_select_from(table, 1, rows)
}

/// INSERT ... SELECT generating the `rows` customers whose ids start at `first`.
pub fn insert_select_from(table: &str, first: u64, rows: u64) -> String {
    // The generator counts 1..=rows; the customer's id is LEVEL shifted to `first`.
    let id = if first == 1 { "LEVEL".to_owned() } else { format!("(LEVEL + {})", first - 1) };
    TEMPLATE.replace("{table}", table).replace("{rows}", &rows.to_string()).replace("LEVEL_ID", &id)
}

/// Customers a transaction of [`load`] inserts: the undo of one such INSERT fits the
/// default 64 MiB undo tablespace with room to spare.
pub const LOAD_CHUNK: u64 = 5_000_000;

/// Loads `rows` customers into `table` in transactions of at most [`LOAD_CHUNK`] rows,
/// each committed (one INSERT of tens of millions of rows would need more undo than the
/// default undo tablespace holds).
pub fn load(session: &lioscope::Session, table: &str, rows: u64) -> lioscope::Result<()> {
    let mut first = 1;
    while first <= rows {
        let chunk = LOAD_CHUNK.min(rows - first + 1);
        session.execute(&insert_select_from(table, first, chunk))?;
        if !session.autocommit() {
            session.execute("COMMIT")?;
        }
        first += chunk;
    }
    Ok(())
}

/// Writes the CSV file of `rows` customers ([`write_csv`]) at `path`.
pub fn write_csv_file(path: &std::path::Path, rows: u64) -> lioscope::Result<()> {
    let file = std::fs::File::create(path).map_err(|e| lioscope::Error::io("create", path, e))?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
    write_csv(&mut w, rows)
        .and_then(|()| std::io::Write::flush(&mut w))
        .map_err(|e| lioscope::Error::io("write", path, e))
}

/// Writes `rows` customers as CSV (no header) in the column order of [`CREATE_TABLE`].
/// The postal code is a hash of the id, so it is random with respect to `cust_id`.
pub fn write_csv(out: &mut impl Write, rows: u64) -> std::io::Result<()> {
    for id in 1..=rows {
        let h = id.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        writeln!(
            out,
            "{id},Firstname-{},Lastname-of-the-customer-{},{},{},{:05},Customer City of {},{},{},firstname.lastname{id}@company{}.example.com",
            id % 1000,
            (h >> 20) % 100_000,
            if id % 2 == 0 { 'M' } else { 'F' },
            1920 + id % 80,
            (h >> 40) % 100_000,
            (h >> 8) % 620,
            if id % 10 == 0 { 'I' } else { 'A' },
            1000 * (1 + id % 15),
            id % 100,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loading_in_pieces_gives_the_rows_of_one_insert() {
        let dir = tempfile::tempdir().unwrap();
        let db = lioscope::Database::create(dir.path().join("db"), Default::default()).unwrap();
        let s = db.session();
        let rows = |table: &str| s.execute(&format!("SELECT * FROM {table} ORDER BY cust_id")).unwrap().rows;
        for table in ["whole", "pieces"] {
            s.execute(&CREATE_TABLE.replace("customers", table)).unwrap();
        }
        s.execute(&insert_select("whole", 15)).unwrap();
        s.execute(&insert_select_from("pieces", 1, 10)).unwrap();
        s.execute(&insert_select_from("pieces", 11, 5)).unwrap();
        assert_eq!(rows("whole").len(), 15);
        assert_eq!(rows("whole"), rows("pieces"));
    }
}
