//! The eight TPC-H tables, their primary keys and foreign keys, rendered as each engine
//! spells them.
//!
//! Types: identifiers are whole numbers (lioscope's NUMBER, the peers' BIGINT), money and
//! quantities the specification's DECIMAL(15,2) (lioscope's NUMBER(15,2), SQLite's
//! REAL, which has no decimal type), dates DATE (SQLite: `YYYY-MM-DD` text). The
//! specification's fixed-length text is kept as variable-length text but for the
//! one-letter flags: a CHAR(25) would pad `n_name` with blanks that every answer would
//! then carry.
//!
//! Invariant: the tables are in an order in which every foreign key refers to a table
//! before it, so that keys can be added (and rows loaded with keys in force) in order.

use super::Dialect;

/// A column's kind, as the specification types it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An identifier (a key).
    Key,
    /// A small whole number (`p_size`, `l_linenumber`).
    Int,
    /// DECIMAL(15,2): money, quantities, discounts.
    Decimal,
    /// Fixed-length text of this many characters.
    Char(u16),
    /// Variable-length text of at most this many characters.
    Varchar(u16),
    Date,
}

#[derive(Debug, Clone, Copy)]
pub struct Column {
    pub name: &'static str,
    pub kind: Kind,
}

#[derive(Debug, Clone, Copy)]
pub struct ForeignKey {
    pub columns: &'static [&'static str],
    pub parent: &'static str,
    pub parent_columns: &'static [&'static str],
}

#[derive(Debug, Clone, Copy)]
pub struct Table {
    pub name: &'static str,
    pub columns: &'static [Column],
    pub primary_key: &'static [&'static str],
    pub foreign_keys: &'static [ForeignKey],
}

const fn col(name: &'static str, kind: Kind) -> Column {
    Column { name, kind }
}

use Kind::*;

/// The tables, parents before children.
pub const TABLES: [Table; 8] = [
    Table {
        name: "region",
        columns: &[col("r_regionkey", Key), col("r_name", Varchar(25)), col("r_comment", Varchar(152))],
        primary_key: &["r_regionkey"],
        foreign_keys: &[],
    },
    Table {
        name: "nation",
        columns: &[
            col("n_nationkey", Key),
            col("n_name", Varchar(25)),
            col("n_regionkey", Key),
            col("n_comment", Varchar(152)),
        ],
        primary_key: &["n_nationkey"],
        foreign_keys: &[ForeignKey { columns: &["n_regionkey"], parent: "region", parent_columns: &["r_regionkey"] }],
    },
    Table {
        name: "supplier",
        columns: &[
            col("s_suppkey", Key),
            col("s_name", Varchar(25)),
            col("s_address", Varchar(40)),
            col("s_nationkey", Key),
            col("s_phone", Varchar(15)),
            col("s_acctbal", Decimal),
            col("s_comment", Varchar(101)),
        ],
        primary_key: &["s_suppkey"],
        foreign_keys: &[ForeignKey { columns: &["s_nationkey"], parent: "nation", parent_columns: &["n_nationkey"] }],
    },
    Table {
        name: "part",
        columns: &[
            col("p_partkey", Key),
            col("p_name", Varchar(55)),
            col("p_mfgr", Varchar(25)),
            col("p_brand", Varchar(10)),
            col("p_type", Varchar(25)),
            col("p_size", Int),
            col("p_container", Varchar(10)),
            col("p_retailprice", Decimal),
            col("p_comment", Varchar(23)),
        ],
        primary_key: &["p_partkey"],
        foreign_keys: &[],
    },
    Table {
        name: "partsupp",
        columns: &[
            col("ps_partkey", Key),
            col("ps_suppkey", Key),
            col("ps_availqty", Int),
            col("ps_supplycost", Decimal),
            col("ps_comment", Varchar(199)),
        ],
        primary_key: &["ps_partkey", "ps_suppkey"],
        foreign_keys: &[
            ForeignKey { columns: &["ps_partkey"], parent: "part", parent_columns: &["p_partkey"] },
            ForeignKey { columns: &["ps_suppkey"], parent: "supplier", parent_columns: &["s_suppkey"] },
        ],
    },
    Table {
        name: "customer",
        columns: &[
            col("c_custkey", Key),
            col("c_name", Varchar(25)),
            col("c_address", Varchar(40)),
            col("c_nationkey", Key),
            col("c_phone", Varchar(15)),
            col("c_acctbal", Decimal),
            col("c_mktsegment", Varchar(10)),
            col("c_comment", Varchar(117)),
        ],
        primary_key: &["c_custkey"],
        foreign_keys: &[ForeignKey { columns: &["c_nationkey"], parent: "nation", parent_columns: &["n_nationkey"] }],
    },
    Table {
        name: "orders",
        columns: &[
            col("o_orderkey", Key),
            col("o_custkey", Key),
            col("o_orderstatus", Char(1)),
            col("o_totalprice", Decimal),
            col("o_orderdate", Date),
            col("o_orderpriority", Varchar(15)),
            col("o_clerk", Varchar(15)),
            col("o_shippriority", Int),
            col("o_comment", Varchar(79)),
        ],
        primary_key: &["o_orderkey"],
        foreign_keys: &[ForeignKey { columns: &["o_custkey"], parent: "customer", parent_columns: &["c_custkey"] }],
    },
    Table {
        name: "lineitem",
        columns: &[
            col("l_orderkey", Key),
            col("l_partkey", Key),
            col("l_suppkey", Key),
            col("l_linenumber", Int),
            col("l_quantity", Decimal),
            col("l_extendedprice", Decimal),
            col("l_discount", Decimal),
            col("l_tax", Decimal),
            col("l_returnflag", Char(1)),
            col("l_linestatus", Char(1)),
            col("l_shipdate", Date),
            col("l_commitdate", Date),
            col("l_receiptdate", Date),
            col("l_shipinstruct", Varchar(25)),
            col("l_shipmode", Varchar(10)),
            col("l_comment", Varchar(44)),
        ],
        primary_key: &["l_orderkey", "l_linenumber"],
        foreign_keys: &[
            ForeignKey { columns: &["l_orderkey"], parent: "orders", parent_columns: &["o_orderkey"] },
            ForeignKey {
                columns: &["l_partkey", "l_suppkey"],
                parent: "partsupp",
                parent_columns: &["ps_partkey", "ps_suppkey"],
            },
        ],
    },
];

impl Kind {
    /// The type as `dialect` names it.
    pub fn type_name(self, dialect: Dialect) -> String {
        match (self, dialect) {
            (Key, Dialect::Oracle) | (Int, Dialect::Oracle) => "NUMBER".into(),
            (Key, Dialect::Postgres | Dialect::DuckDb) => "BIGINT".into(),
            (Int, Dialect::Postgres | Dialect::DuckDb) => "INTEGER".into(),
            (Key | Int, Dialect::Sqlite) => "INTEGER".into(),
            (Decimal, Dialect::Oracle) => "NUMBER(15,2)".into(),
            (Decimal, Dialect::Postgres | Dialect::DuckDb) => "DECIMAL(15,2)".into(),
            (Decimal, Dialect::Sqlite) => "REAL".into(),
            (Char(_) | Varchar(_), Dialect::Sqlite) => "TEXT".into(),
            (Char(n), _) => format!("CHAR({n})"),
            (Varchar(n), Dialect::Oracle) => format!("VARCHAR2({n})"),
            (Varchar(n), _) => format!("VARCHAR({n})"),
            (Date, Dialect::Sqlite) => "TEXT".into(),
            (Date, _) => "DATE".into(),
        }
    }
}

impl Table {
    /// The table by name.
    pub fn named(name: &str) -> Option<&'static Table> {
        TABLES.iter().find(|t| t.name == name)
    }

    fn primary_key_clause(&self) -> String {
        format!("CONSTRAINT {}_pk PRIMARY KEY ({})", self.name, self.primary_key.join(", "))
    }

    fn foreign_key_clause(&self, i: usize) -> String {
        let fk = &self.foreign_keys[i];
        format!(
            "CONSTRAINT {}_fk{} FOREIGN KEY ({}) REFERENCES {} ({})",
            self.name,
            i + 1,
            fk.columns.join(", "),
            fk.parent,
            fk.parent_columns.join(", ")
        )
    }

    /// CREATE TABLE, every column NOT NULL; with `keys`, the primary and foreign keys
    /// declared in it (for engines that take keys only there, or enforce them on load).
    pub fn create(&self, dialect: Dialect, keys: bool) -> String {
        let mut parts: Vec<String> =
            self.columns.iter().map(|c| format!("{} {} NOT NULL", c.name, c.kind.type_name(dialect))).collect();
        if keys {
            parts.push(self.primary_key_clause());
            parts.extend((0..self.foreign_keys.len()).map(|i| self.foreign_key_clause(i)));
        }
        format!("CREATE TABLE {} ({})", self.name, parts.join(", "))
    }

    /// `ALTER TABLE ... ADD` the primary key.
    pub fn add_primary_key(&self) -> String {
        format!("ALTER TABLE {} ADD {}", self.name, self.primary_key_clause())
    }

    /// `ALTER TABLE ... ADD` each foreign key.
    pub fn add_foreign_keys(&self) -> Vec<String> {
        (0..self.foreign_keys.len())
            .map(|i| format!("ALTER TABLE {} ADD {}", self.name, self.foreign_key_clause(i)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_foreign_key_refers_to_an_earlier_table_by_its_primary_key() {
        for (i, t) in TABLES.iter().enumerate() {
            for fk in t.foreign_keys {
                let at = TABLES.iter().position(|p| p.name == fk.parent).expect(fk.parent);
                assert!(at < i, "{} refers to {}, which comes later", t.name, fk.parent);
                assert_eq!(TABLES[at].primary_key, fk.parent_columns, "{}", t.name);
                for c in fk.columns {
                    assert!(t.columns.iter().any(|col| col.name == *c), "{}.{c}", t.name);
                }
            }
            for c in t.primary_key {
                assert!(t.columns.iter().any(|col| col.name == *c), "{}.{c}", t.name);
            }
        }
    }

    #[test]
    fn each_dialect_spells_the_types_its_way() {
        let lineitem = Table::named("lineitem").unwrap();
        let oracle = lineitem.create(Dialect::Oracle, false);
        assert!(oracle.contains("l_quantity NUMBER(15,2) NOT NULL") && oracle.contains("l_shipmode VARCHAR2(10)"));
        assert!(!oracle.contains("PRIMARY KEY"));
        let sqlite = lineitem.create(Dialect::Sqlite, true);
        assert!(sqlite.contains("l_shipdate TEXT") && sqlite.contains("l_discount REAL"), "{sqlite}");
        assert!(sqlite.contains("CONSTRAINT lineitem_pk PRIMARY KEY (l_orderkey, l_linenumber)"), "{sqlite}");
        assert!(
            sqlite.contains("FOREIGN KEY (l_partkey, l_suppkey) REFERENCES partsupp (ps_partkey, ps_suppkey)"),
            "{sqlite}"
        );
        assert_eq!(lineitem.add_foreign_keys().len(), 2);
        assert!(Table::named("orders").unwrap().create(Dialect::Postgres, false).contains("o_orderkey BIGINT"));
    }
}
