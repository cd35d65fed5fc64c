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
}

/// INSERT ... SELECT generating `rows` customers into `table`.
pub fn insert_select(table: &str, rows: u64) -> String {
    format!(
        "INSERT INTO {table}
SELECT LEVEL,
       'Firstname-' || MOD(LEVEL, 1000),
       'Lastname-of-the-customer-' || ORA_HASH(LEVEL, 99999, 1),
       CASE WHEN MOD(LEVEL, 2) = 0 THEN 'M' ELSE 'F' END,
       1920 + MOD(LEVEL, 80),
       LPAD(ORA_HASH(LEVEL, 99999, 2), 5, '0'),
       'Customer City of ' || ORA_HASH(LEVEL, 619, 3),
       CASE WHEN MOD(LEVEL, 10) = 0 THEN 'I' ELSE 'A' END,
       1000 * (1 + MOD(LEVEL, 15)),
       'firstname.lastname' || LEVEL || '@company' || MOD(LEVEL, 100) || '.example.com'
FROM dual CONNECT BY LEVEL <= {rows}"
    )
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
