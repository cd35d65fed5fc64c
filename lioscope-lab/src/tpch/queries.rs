//! The 22 TPC-H queries, written here from the specification's definitions, each once as
//! a template that [`Query::render`] spells in a [`Dialect`], with its substitution
//! parameters: the specification's validation set, and a second set chosen within the
//! ranges the specification gives each parameter.
//!
//! A template is SQL with two kinds of marks:
//! - `[NAME]`: a substitution parameter, replaced first by its value in the set;
//! - `{date:1994-01-01}`, `{date:1994-01-01 + 3 month}` (or `- 90 day`, `+ 1 year`): a
//!   date, or a date with an interval added; `{year:col}`: the year of a date;
//!   `{first:100}`: the row limit that ends the query.
//!
//! Oracle's dialect (lioscope's) spells them `DATE '1994-01-01' + INTERVAL '3' MONTH`
//! (a DAY interval with precision 3, as the specification's Q1 has it),
//! `EXTRACT(YEAR FROM col)`, `FETCH FIRST 100 ROWS ONLY`; PostgreSQL and DuckDB
//! `CAST(DATE '1994-01-01' + INTERVAL '3 month' AS DATE)` and `LIMIT 100`; SQLite
//! `date('1994-01-01', '+3 month')`, `CAST(strftime('%Y', col) AS INTEGER)`, `LIMIT`.
//!
//! Where the specification's ORDER BY leaves ties among the rows a query returns, a key
//! is added to it (in every dialect), so that answers compare row by row; the query's
//! `note` says which. Invariant: a query's text differs between dialects only in these
//! marks, except where its `sqlite` text says why SQLite needs another.

use super::Dialect;
use lioscope::{Error, Result};

/// One query: its number, template, SQLite's own template where it needs one, and the
/// two parameter sets.
#[derive(Debug, Clone, Copy)]
pub struct Query {
    pub number: u32,
    pub title: &'static str,
    pub text: &'static str,
    /// SQLite's template, where the common one would not run, not finish, or not give
    /// the same answer in SQLite (its REAL arithmetic), and why.
    pub sqlite: Option<(&'static str, &'static str)>,
    /// What differs from the specification's text, if anything.
    pub note: &'static str,
    /// The validation parameters, then the second set: (name, value).
    pub parameters: [&'static [(&'static str, &'static str)]; 2],
}

/// Which parameter sets a run takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
pub enum ParameterSets {
    /// The specification's validation parameters.
    Validation,
    /// The second set.
    Second,
    /// Both, each query twice.
    Both,
}

impl ParameterSets {
    /// The set indexes (0: validation, 1: second) a run takes.
    pub fn indexes(self) -> &'static [usize] {
        match self {
            ParameterSets::Validation => &[0],
            ParameterSets::Second => &[1],
            ParameterSets::Both => &[0, 1],
        }
    }
}

/// One query with one parameter set, as a run takes it.
#[derive(Debug, Clone)]
pub struct Item {
    pub query: &'static Query,
    pub set: usize,
    pub label: String,
}

impl Item {
    /// The query's text in `dialect` at scale factor `sf`.
    pub fn sql(&self, dialect: Dialect, sf: f64) -> Result<String> {
        self.query.render(self.set, dialect, sf)
    }
}

impl Query {
    /// The query's label in reports: `Q7`, or `Q7 #2` for the second parameter set.
    pub fn label(&self, set: usize) -> String {
        if set == 0 { format!("Q{}", self.number) } else { format!("Q{} #{}", self.number, set + 1) }
    }

    /// The query's text in `dialect`, with parameter set `set` (0 or 1) at scale factor
    /// `sf` (Q11's FRACTION is 0.0001 / SF).
    pub fn render(&self, set: usize, dialect: Dialect, sf: f64) -> Result<String> {
        let template = match (dialect, self.sqlite) {
            (Dialect::Sqlite, Some((text, _))) => text,
            _ => self.text,
        };
        let parameters = self.parameters.get(set).ok_or_else(|| Error::InvalidParameter {
            name: "parameter set".into(),
            message: format!("{}: Q{} has sets 1 and 2", set + 1, self.number),
        })?;
        let mut text = template.replace("[FRACTION]", &format!("{}", 0.0001 / sf));
        for (name, value) in *parameters {
            text = text.replace(&format!("[{name}]"), value);
        }
        if let Some(at) = text.find('[') {
            let name: String = text[at..].chars().take_while(|&c| c != ']').collect();
            return Err(Error::InvalidValue {
                context: format!("TPC-H Q{}", self.number),
                message: format!("the parameter {name}] has no value in set {}", set + 1),
            });
        }
        render_marks(&text, dialect)
            .map_err(|message| Error::InvalidValue { context: format!("TPC-H Q{}", self.number), message })
    }
}

/// The text with every `{kind:argument}` mark spelled in `dialect`.
fn render_marks(text: &str, dialect: Dialect) -> std::result::Result<String, String> {
    let mut out = String::with_capacity(text.len() + 64);
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = rest[open..].find('}').ok_or_else(|| format!("an unclosed mark at {}", &rest[open..]))? + open;
        let mark = &rest[open + 1..close];
        let (kind, argument) = mark.split_once(':').ok_or_else(|| format!("the mark {{{mark}}} has no kind"))?;
        out.push_str(&match kind {
            "date" => date(argument.trim(), dialect)?,
            "year" => match dialect {
                Dialect::Sqlite => format!("CAST(strftime('%Y', {argument}) AS INTEGER)"),
                _ => format!("EXTRACT(YEAR FROM {argument})"),
            },
            "first" => match dialect {
                Dialect::Oracle => format!("FETCH FIRST {argument} ROWS ONLY"),
                _ => format!("LIMIT {argument}"),
            },
            other => return Err(format!("the mark {{{mark}}}: no kind {other}")),
        });
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// `1994-01-01`, or `1994-01-01 + 3 month`, spelled in `dialect`.
fn date(argument: &str, dialect: Dialect) -> std::result::Result<String, String> {
    let words: Vec<&str> = argument.split_whitespace().collect();
    let day = words.first().copied().unwrap_or_default();
    if day.len() != 10 || !day.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
        return Err(format!("{day}: not a YYYY-MM-DD date"));
    }
    let (sign, n, unit) = match words[1..] {
        [] => {
            return Ok(match dialect {
                Dialect::Sqlite => format!("'{day}'"),
                _ => format!("DATE '{day}'"),
            });
        }
        [sign @ ("+" | "-"), n, unit @ ("day" | "month" | "year")] if n.parse::<u32>().is_ok() => (sign, n, unit),
        _ => return Err(format!("{argument}: not DATE, or DATE + or - n day, month or year")),
    };
    Ok(match dialect {
        Dialect::Oracle => {
            let precision = if unit == "day" { " (3)" } else { "" };
            format!("DATE '{day}' {sign} INTERVAL '{n}' {}{precision}", unit.to_ascii_uppercase())
        }
        Dialect::Postgres | Dialect::DuckDb => format!("CAST(DATE '{day}' {sign} INTERVAL '{n} {unit}' AS DATE)"),
        Dialect::Sqlite => format!("date('{day}', '{sign}{n} {unit}')"),
    })
}

/// The 22 queries, in number order.
pub const QUERIES: [Query; 22] = [
    Query {
        number: 1,
        title: "Pricing Summary Report",
        text: "SELECT l_returnflag, l_linestatus, SUM(l_quantity) AS sum_qty, SUM(l_extendedprice) AS sum_base_price, \
               SUM(l_extendedprice * (1 - l_discount)) AS sum_disc_price, \
               SUM(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge, AVG(l_quantity) AS avg_qty, \
               AVG(l_extendedprice) AS avg_price, AVG(l_discount) AS avg_disc, COUNT(*) AS count_order \
               FROM lineitem WHERE l_shipdate <= {date:1998-12-01 - [DELTA] day} \
               GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus",
        sqlite: None,
        note: "",
        parameters: [&[("DELTA", "90")], &[("DELTA", "60")]],
    },
    Query {
        number: 2,
        title: "Minimum Cost Supplier",
        text: "SELECT s_acctbal, s_name, n_name, p_partkey, p_mfgr, s_address, s_phone, s_comment \
               FROM part, supplier, partsupp, nation, region \
               WHERE p_partkey = ps_partkey AND s_suppkey = ps_suppkey AND p_size = [SIZE] \
               AND p_type LIKE '%[TYPE]' AND s_nationkey = n_nationkey AND n_regionkey = r_regionkey \
               AND r_name = '[REGION]' \
               AND ps_supplycost = (SELECT MIN(ps_supplycost) FROM partsupp, supplier, nation, region \
               WHERE p_partkey = ps_partkey AND s_suppkey = ps_suppkey AND s_nationkey = n_nationkey \
               AND n_regionkey = r_regionkey AND r_name = '[REGION]') \
               ORDER BY s_acctbal DESC, n_name, s_name, p_partkey {first:100}",
        sqlite: None,
        note: "",
        parameters: [
            &[("SIZE", "15"), ("TYPE", "BRASS"), ("REGION", "EUROPE")],
            &[("SIZE", "23"), ("TYPE", "TIN"), ("REGION", "ASIA")],
        ],
    },
    Query {
        number: 3,
        title: "Shipping Priority",
        text: "SELECT l_orderkey, SUM(l_extendedprice * (1 - l_discount)) AS revenue, o_orderdate, o_shippriority \
               FROM customer, orders, lineitem \
               WHERE c_mktsegment = '[SEGMENT]' AND c_custkey = o_custkey AND l_orderkey = o_orderkey \
               AND o_orderdate < {date:[DATE]} AND l_shipdate > {date:[DATE]} \
               GROUP BY l_orderkey, o_orderdate, o_shippriority ORDER BY revenue DESC, o_orderdate, l_orderkey \
               {first:10}",
        sqlite: None,
        note: "l_orderkey ends the ORDER BY: revenue and date may tie",
        parameters: [
            &[("SEGMENT", "BUILDING"), ("DATE", "1995-03-15")],
            &[("SEGMENT", "MACHINERY"), ("DATE", "1995-03-05")],
        ],
    },
    Query {
        number: 4,
        title: "Order Priority Checking",
        text: "SELECT o_orderpriority, COUNT(*) AS order_count FROM orders \
               WHERE o_orderdate >= {date:[DATE]} AND o_orderdate < {date:[DATE] + 3 month} \
               AND EXISTS (SELECT * FROM lineitem WHERE l_orderkey = o_orderkey AND l_commitdate < l_receiptdate) \
               GROUP BY o_orderpriority ORDER BY o_orderpriority",
        sqlite: None,
        note: "",
        parameters: [&[("DATE", "1993-07-01")], &[("DATE", "1995-01-01")]],
    },
    Query {
        number: 5,
        title: "Local Supplier Volume",
        text: "SELECT n_name, SUM(l_extendedprice * (1 - l_discount)) AS revenue \
               FROM customer, orders, lineitem, supplier, nation, region \
               WHERE c_custkey = o_custkey AND l_orderkey = o_orderkey AND l_suppkey = s_suppkey \
               AND c_nationkey = s_nationkey AND s_nationkey = n_nationkey AND n_regionkey = r_regionkey \
               AND r_name = '[REGION]' AND o_orderdate >= {date:[DATE]} AND o_orderdate < {date:[DATE] + 1 year} \
               GROUP BY n_name ORDER BY revenue DESC",
        sqlite: None,
        note: "",
        parameters: [&[("REGION", "ASIA"), ("DATE", "1994-01-01")], &[("REGION", "AMERICA"), ("DATE", "1996-01-01")]],
    },
    Query {
        number: 6,
        title: "Forecasting Revenue Change",
        text: "SELECT SUM(l_extendedprice * l_discount) AS revenue FROM lineitem \
               WHERE l_shipdate >= {date:[DATE]} AND l_shipdate < {date:[DATE] + 1 year} \
               AND l_discount BETWEEN [DISCOUNT] - 0.01 AND [DISCOUNT] + 0.01 AND l_quantity < [QUANTITY]",
        sqlite: Some((
            "SELECT SUM(l_extendedprice * l_discount) AS revenue FROM lineitem \
             WHERE l_shipdate >= {date:[DATE]} AND l_shipdate < {date:[DATE] + 1 year} \
             AND l_discount BETWEEN [DISCOUNT] - 0.01 - 1e-9 AND [DISCOUNT] + 0.01 + 1e-9 AND l_quantity < [QUANTITY]",
            "SQLite's REAL sum 0.06 + 0.01 falls just below 0.07, which the others' decimals reach: its bounds are \
             widened by 1e-9",
        )),
        note: "",
        parameters: [
            &[("DATE", "1994-01-01"), ("DISCOUNT", "0.06"), ("QUANTITY", "24")],
            &[("DATE", "1997-01-01"), ("DISCOUNT", "0.04"), ("QUANTITY", "25")],
        ],
    },
    Query {
        number: 7,
        title: "Volume Shipping",
        text: "SELECT supp_nation, cust_nation, l_year, SUM(volume) AS revenue FROM ( \
               SELECT n1.n_name AS supp_nation, n2.n_name AS cust_nation, {year:l_shipdate} AS l_year, \
               l_extendedprice * (1 - l_discount) AS volume \
               FROM supplier, lineitem, orders, customer, nation n1, nation n2 \
               WHERE s_suppkey = l_suppkey AND o_orderkey = l_orderkey AND c_custkey = o_custkey \
               AND s_nationkey = n1.n_nationkey AND c_nationkey = n2.n_nationkey \
               AND ((n1.n_name = '[NATION1]' AND n2.n_name = '[NATION2]') \
               OR (n1.n_name = '[NATION2]' AND n2.n_name = '[NATION1]')) \
               AND l_shipdate BETWEEN {date:1995-01-01} AND {date:1996-12-31}) shipping \
               GROUP BY supp_nation, cust_nation, l_year ORDER BY supp_nation, cust_nation, l_year",
        sqlite: None,
        note: "",
        parameters: [&[("NATION1", "FRANCE"), ("NATION2", "GERMANY")], &[("NATION1", "JAPAN"), ("NATION2", "CHINA")]],
    },
    Query {
        number: 8,
        title: "National Market Share",
        text: "SELECT o_year, SUM(CASE WHEN nation = '[NATION]' THEN volume ELSE 0 END) / SUM(volume) AS mkt_share \
               FROM (SELECT {year:o_orderdate} AS o_year, l_extendedprice * (1 - l_discount) AS volume, \
               n2.n_name AS nation \
               FROM part, supplier, lineitem, orders, customer, nation n1, nation n2, region \
               WHERE p_partkey = l_partkey AND s_suppkey = l_suppkey AND l_orderkey = o_orderkey \
               AND o_custkey = c_custkey AND c_nationkey = n1.n_nationkey AND n1.n_regionkey = r_regionkey \
               AND r_name = '[REGION]' AND s_nationkey = n2.n_nationkey \
               AND o_orderdate BETWEEN {date:1995-01-01} AND {date:1996-12-31} AND p_type = '[TYPE]') all_nations \
               GROUP BY o_year ORDER BY o_year",
        sqlite: None,
        note: "",
        parameters: [
            &[("NATION", "BRAZIL"), ("REGION", "AMERICA"), ("TYPE", "ECONOMY ANODIZED STEEL")],
            &[("NATION", "CANADA"), ("REGION", "AMERICA"), ("TYPE", "STANDARD BRUSHED TIN")],
        ],
    },
    Query {
        number: 9,
        title: "Product Type Profit Measure",
        text: "SELECT nation, o_year, SUM(amount) AS sum_profit FROM ( \
               SELECT n_name AS nation, {year:o_orderdate} AS o_year, \
               l_extendedprice * (1 - l_discount) - ps_supplycost * l_quantity AS amount \
               FROM part, supplier, lineitem, partsupp, orders, nation \
               WHERE s_suppkey = l_suppkey AND ps_suppkey = l_suppkey AND ps_partkey = l_partkey \
               AND p_partkey = l_partkey AND o_orderkey = l_orderkey AND s_nationkey = n_nationkey \
               AND p_name LIKE '%[COLOR]%') profit \
               GROUP BY nation, o_year ORDER BY nation, o_year DESC",
        sqlite: None,
        note: "",
        parameters: [&[("COLOR", "green")], &[("COLOR", "blue")]],
    },
    Query {
        number: 10,
        title: "Returned Item Reporting",
        text: "SELECT c_custkey, c_name, SUM(l_extendedprice * (1 - l_discount)) AS revenue, c_acctbal, n_name, \
               c_address, c_phone, c_comment FROM customer, orders, lineitem, nation \
               WHERE c_custkey = o_custkey AND l_orderkey = o_orderkey AND o_orderdate >= {date:[DATE]} \
               AND o_orderdate < {date:[DATE] + 3 month} AND l_returnflag = 'R' AND c_nationkey = n_nationkey \
               GROUP BY c_custkey, c_name, c_acctbal, c_phone, n_name, c_address, c_comment \
               ORDER BY revenue DESC, c_custkey {first:20}",
        sqlite: None,
        note: "c_custkey ends the ORDER BY: revenues may tie",
        parameters: [&[("DATE", "1993-10-01")], &[("DATE", "1994-08-01")]],
    },
    Query {
        number: 11,
        title: "Important Stock Identification",
        text: "SELECT ps_partkey, SUM(ps_supplycost * ps_availqty) AS value FROM partsupp, supplier, nation \
               WHERE ps_suppkey = s_suppkey AND s_nationkey = n_nationkey AND n_name = '[NATION]' \
               GROUP BY ps_partkey HAVING SUM(ps_supplycost * ps_availqty) > ( \
               SELECT SUM(ps_supplycost * ps_availqty) * [FRACTION] FROM partsupp, supplier, nation \
               WHERE ps_suppkey = s_suppkey AND s_nationkey = n_nationkey AND n_name = '[NATION]') \
               ORDER BY value DESC, ps_partkey",
        sqlite: None,
        note: "ps_partkey ends the ORDER BY: values may tie; FRACTION is 0.0001 / SF",
        parameters: [&[("NATION", "GERMANY")], &[("NATION", "JAPAN")]],
    },
    Query {
        number: 12,
        title: "Shipping Modes and Order Priority",
        text: "SELECT l_shipmode, \
               SUM(CASE WHEN o_orderpriority = '1-URGENT' OR o_orderpriority = '2-HIGH' THEN 1 ELSE 0 END) \
               AS high_line_count, \
               SUM(CASE WHEN o_orderpriority <> '1-URGENT' AND o_orderpriority <> '2-HIGH' THEN 1 ELSE 0 END) \
               AS low_line_count \
               FROM orders, lineitem WHERE o_orderkey = l_orderkey AND l_shipmode IN ('[SHIPMODE1]', '[SHIPMODE2]') \
               AND l_commitdate < l_receiptdate AND l_shipdate < l_commitdate AND l_receiptdate >= {date:[DATE]} \
               AND l_receiptdate < {date:[DATE] + 1 year} GROUP BY l_shipmode ORDER BY l_shipmode",
        sqlite: None,
        note: "",
        parameters: [
            &[("SHIPMODE1", "MAIL"), ("SHIPMODE2", "SHIP"), ("DATE", "1994-01-01")],
            &[("SHIPMODE1", "AIR"), ("SHIPMODE2", "TRUCK"), ("DATE", "1996-01-01")],
        ],
    },
    Query {
        number: 13,
        title: "Customer Distribution",
        text: "SELECT c_count, COUNT(*) AS custdist FROM ( \
               SELECT c_custkey, COUNT(o_orderkey) FROM customer LEFT OUTER JOIN orders \
               ON c_custkey = o_custkey AND o_comment NOT LIKE '%[WORD1]%[WORD2]%' GROUP BY c_custkey) \
               c_orders (c_custkey, c_count) \
               GROUP BY c_count ORDER BY custdist DESC, c_count DESC",
        sqlite: Some((
            "SELECT c_count, COUNT(*) AS custdist FROM ( \
             SELECT c_custkey, COUNT(o_orderkey) AS c_count FROM customer LEFT OUTER JOIN orders \
             ON c_custkey = o_custkey AND o_comment NOT LIKE '%[WORD1]%[WORD2]%' GROUP BY c_custkey) c_orders \
             GROUP BY c_count ORDER BY custdist DESC, c_count DESC",
            "SQLite takes no column names after a derived table's alias: the count is named inside",
        )),
        note: "",
        parameters: [&[("WORD1", "special"), ("WORD2", "requests")], &[("WORD1", "pending"), ("WORD2", "packages")]],
    },
    Query {
        number: 14,
        title: "Promotion Effect",
        text: "SELECT 100.00 * SUM(CASE WHEN p_type LIKE 'PROMO%' THEN l_extendedprice * (1 - l_discount) ELSE 0 END) \
               / SUM(l_extendedprice * (1 - l_discount)) AS promo_revenue FROM lineitem, part \
               WHERE l_partkey = p_partkey AND l_shipdate >= {date:[DATE]} AND l_shipdate < {date:[DATE] + 1 month}",
        sqlite: None,
        note: "",
        parameters: [&[("DATE", "1995-09-01")], &[("DATE", "1997-04-01")]],
    },
    Query {
        number: 15,
        title: "Top Supplier",
        text: "WITH revenue0 (supplier_no, total_revenue) AS ( \
               SELECT l_suppkey, SUM(l_extendedprice * (1 - l_discount)) FROM lineitem \
               WHERE l_shipdate >= {date:[DATE]} AND l_shipdate < {date:[DATE] + 3 month} GROUP BY l_suppkey) \
               SELECT s_suppkey, s_name, s_address, s_phone, total_revenue FROM supplier, revenue0 \
               WHERE s_suppkey = supplier_no AND total_revenue = (SELECT MAX(total_revenue) FROM revenue0) \
               ORDER BY s_suppkey",
        sqlite: None,
        note: "the view revenue0 is a WITH query (the specification allows either)",
        parameters: [&[("DATE", "1996-01-01")], &[("DATE", "1995-07-01")]],
    },
    Query {
        number: 16,
        title: "Parts/Supplier Relationship",
        text: "SELECT p_brand, p_type, p_size, COUNT(DISTINCT ps_suppkey) AS supplier_cnt FROM partsupp, part \
               WHERE p_partkey = ps_partkey AND p_brand <> '[BRAND]' AND p_type NOT LIKE '[TYPE]%' \
               AND p_size IN ([SIZE1], [SIZE2], [SIZE3], [SIZE4], [SIZE5], [SIZE6], [SIZE7], [SIZE8]) \
               AND ps_suppkey NOT IN (SELECT s_suppkey FROM supplier WHERE s_comment LIKE '%Customer%Complaints%') \
               GROUP BY p_brand, p_type, p_size ORDER BY supplier_cnt DESC, p_brand, p_type, p_size",
        sqlite: None,
        note: "",
        parameters: [
            &[
                ("BRAND", "Brand#45"),
                ("TYPE", "MEDIUM POLISHED"),
                ("SIZE1", "49"),
                ("SIZE2", "14"),
                ("SIZE3", "23"),
                ("SIZE4", "45"),
                ("SIZE5", "19"),
                ("SIZE6", "3"),
                ("SIZE7", "36"),
                ("SIZE8", "9"),
            ],
            &[
                ("BRAND", "Brand#21"),
                ("TYPE", "LARGE ANODIZED"),
                ("SIZE1", "1"),
                ("SIZE2", "5"),
                ("SIZE3", "10"),
                ("SIZE4", "20"),
                ("SIZE5", "30"),
                ("SIZE6", "40"),
                ("SIZE7", "45"),
                ("SIZE8", "50"),
            ],
        ],
    },
    Query {
        number: 17,
        title: "Small-Quantity-Order Revenue",
        text: "SELECT SUM(l_extendedprice) / 7.0 AS avg_yearly FROM lineitem, part \
               WHERE p_partkey = l_partkey AND p_brand = '[BRAND]' AND p_container = '[CONTAINER]' \
               AND l_quantity < (SELECT 0.2 * AVG(l_quantity) FROM lineitem WHERE l_partkey = p_partkey)",
        sqlite: None,
        note: "",
        parameters: [
            &[("BRAND", "Brand#23"), ("CONTAINER", "MED BOX")],
            &[("BRAND", "Brand#11"), ("CONTAINER", "SM PKG")],
        ],
    },
    Query {
        number: 18,
        title: "Large Volume Customer",
        text: "SELECT c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice, SUM(l_quantity) \
               FROM customer, orders, lineitem \
               WHERE o_orderkey IN (SELECT l_orderkey FROM lineitem GROUP BY l_orderkey \
               HAVING SUM(l_quantity) > [QUANTITY]) \
               AND c_custkey = o_custkey AND o_orderkey = l_orderkey \
               GROUP BY c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice \
               ORDER BY o_totalprice DESC, o_orderdate, o_orderkey {first:100}",
        sqlite: None,
        note: "o_orderkey ends the ORDER BY: price and date may tie",
        parameters: [&[("QUANTITY", "300")], &[("QUANTITY", "312")]],
    },
    Query {
        number: 19,
        title: "Discounted Revenue",
        text: "SELECT SUM(l_extendedprice * (1 - l_discount)) AS revenue FROM lineitem, part \
               WHERE (p_partkey = l_partkey AND p_brand = '[BRAND1]' \
               AND p_container IN ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG') \
               AND l_quantity >= [QUANTITY1] AND l_quantity <= [QUANTITY1] + 10 AND p_size BETWEEN 1 AND 5 \
               AND l_shipmode IN ('AIR', 'AIR REG') AND l_shipinstruct = 'DELIVER IN PERSON') \
               OR (p_partkey = l_partkey AND p_brand = '[BRAND2]' \
               AND p_container IN ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK') \
               AND l_quantity >= [QUANTITY2] AND l_quantity <= [QUANTITY2] + 10 AND p_size BETWEEN 1 AND 10 \
               AND l_shipmode IN ('AIR', 'AIR REG') AND l_shipinstruct = 'DELIVER IN PERSON') \
               OR (p_partkey = l_partkey AND p_brand = '[BRAND3]' \
               AND p_container IN ('LG CASE', 'LG BOX', 'LG PACK', 'LG PKG') \
               AND l_quantity >= [QUANTITY3] AND l_quantity <= [QUANTITY3] + 10 AND p_size BETWEEN 1 AND 15 \
               AND l_shipmode IN ('AIR', 'AIR REG') AND l_shipinstruct = 'DELIVER IN PERSON')",
        sqlite: Some((
            "SELECT SUM(l_extendedprice * (1 - l_discount)) AS revenue FROM lineitem, part \
             WHERE p_partkey = l_partkey AND ((p_brand = '[BRAND1]' \
             AND p_container IN ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG') \
             AND l_quantity >= [QUANTITY1] AND l_quantity <= [QUANTITY1] + 10 AND p_size BETWEEN 1 AND 5 \
             AND l_shipmode IN ('AIR', 'AIR REG') AND l_shipinstruct = 'DELIVER IN PERSON') \
             OR (p_brand = '[BRAND2]' \
             AND p_container IN ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK') \
             AND l_quantity >= [QUANTITY2] AND l_quantity <= [QUANTITY2] + 10 AND p_size BETWEEN 1 AND 10 \
             AND l_shipmode IN ('AIR', 'AIR REG') AND l_shipinstruct = 'DELIVER IN PERSON') \
             OR (p_brand = '[BRAND3]' \
             AND p_container IN ('LG CASE', 'LG BOX', 'LG PACK', 'LG PKG') \
             AND l_quantity >= [QUANTITY3] AND l_quantity <= [QUANTITY3] + 10 AND p_size BETWEEN 1 AND 15 \
             AND l_shipmode IN ('AIR', 'AIR REG') AND l_shipinstruct = 'DELIVER IN PERSON'))",
            "SQLite joins by a condition only outside an OR (else it joins every pair of rows): the join \
             condition is taken out of the branches, as the other engines' optimizers take it out",
        )),
        note: "",
        parameters: [
            &[
                ("QUANTITY1", "1"),
                ("QUANTITY2", "10"),
                ("QUANTITY3", "20"),
                ("BRAND1", "Brand#12"),
                ("BRAND2", "Brand#23"),
                ("BRAND3", "Brand#34"),
            ],
            &[
                ("QUANTITY1", "5"),
                ("QUANTITY2", "15"),
                ("QUANTITY3", "25"),
                ("BRAND1", "Brand#31"),
                ("BRAND2", "Brand#42"),
                ("BRAND3", "Brand#53"),
            ],
        ],
    },
    Query {
        number: 20,
        title: "Potential Part Promotion",
        text: "SELECT s_name, s_address FROM supplier, nation \
               WHERE s_suppkey IN (SELECT ps_suppkey FROM partsupp \
               WHERE ps_partkey IN (SELECT p_partkey FROM part WHERE p_name LIKE '[COLOR]%') \
               AND ps_availqty > (SELECT 0.5 * SUM(l_quantity) FROM lineitem WHERE l_partkey = ps_partkey \
               AND l_suppkey = ps_suppkey AND l_shipdate >= {date:[DATE]} AND l_shipdate < {date:[DATE] + 1 year})) \
               AND s_nationkey = n_nationkey AND n_name = '[NATION]' ORDER BY s_name",
        sqlite: None,
        note: "",
        parameters: [
            &[("COLOR", "forest"), ("DATE", "1994-01-01"), ("NATION", "CANADA")],
            &[("COLOR", "almond"), ("DATE", "1995-01-01"), ("NATION", "JAPAN")],
        ],
    },
    Query {
        number: 21,
        title: "Suppliers Who Kept Orders Waiting",
        text: "SELECT s_name, COUNT(*) AS numwait FROM supplier, lineitem l1, orders, nation \
               WHERE s_suppkey = l1.l_suppkey AND o_orderkey = l1.l_orderkey AND o_orderstatus = 'F' \
               AND l1.l_receiptdate > l1.l_commitdate \
               AND EXISTS (SELECT * FROM lineitem l2 WHERE l2.l_orderkey = l1.l_orderkey \
               AND l2.l_suppkey <> l1.l_suppkey) \
               AND NOT EXISTS (SELECT * FROM lineitem l3 WHERE l3.l_orderkey = l1.l_orderkey \
               AND l3.l_suppkey <> l1.l_suppkey AND l3.l_receiptdate > l3.l_commitdate) \
               AND s_nationkey = n_nationkey AND n_name = '[NATION]' \
               GROUP BY s_name ORDER BY numwait DESC, s_name {first:100}",
        sqlite: None,
        note: "",
        parameters: [&[("NATION", "SAUDI ARABIA")], &[("NATION", "FRANCE")]],
    },
    Query {
        number: 22,
        title: "Global Sales Opportunity",
        text: "SELECT cntrycode, COUNT(*) AS numcust, SUM(c_acctbal) AS totacctbal FROM ( \
               SELECT SUBSTR(c_phone, 1, 2) AS cntrycode, c_acctbal FROM customer \
               WHERE SUBSTR(c_phone, 1, 2) IN ('[I1]', '[I2]', '[I3]', '[I4]', '[I5]', '[I6]', '[I7]') \
               AND c_acctbal > (SELECT AVG(c_acctbal) FROM customer WHERE c_acctbal > 0.00 \
               AND SUBSTR(c_phone, 1, 2) IN ('[I1]', '[I2]', '[I3]', '[I4]', '[I5]', '[I6]', '[I7]')) \
               AND NOT EXISTS (SELECT * FROM orders WHERE o_custkey = c_custkey)) custsale \
               GROUP BY cntrycode ORDER BY cntrycode",
        sqlite: None,
        note: "",
        parameters: [
            &[("I1", "13"), ("I2", "31"), ("I3", "23"), ("I4", "29"), ("I5", "30"), ("I6", "18"), ("I7", "17")],
            &[("I1", "20"), ("I2", "21"), ("I3", "22"), ("I4", "24"), ("I5", "25"), ("I6", "26"), ("I7", "27")],
        ],
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_query_renders_in_every_dialect_with_both_sets() {
        for (i, q) in QUERIES.iter().enumerate() {
            assert_eq!(q.number as usize, i + 1);
            for set in 0..2 {
                for dialect in [Dialect::Oracle, Dialect::Postgres, Dialect::DuckDb, Dialect::Sqlite] {
                    let text = q.render(set, dialect, 1.0).unwrap();
                    assert!(!text.contains(['[', '{', '}']), "{} {dialect:?}: {text}", q.label(set));
                }
            }
            assert_ne!(q.render(0, Dialect::Oracle, 1.0).unwrap(), q.render(1, Dialect::Oracle, 1.0).unwrap());
        }
    }

    #[test]
    fn marks_are_spelled_in_each_dialect() {
        let q1 = &QUERIES[0];
        assert!(q1.render(0, Dialect::Oracle, 1.0).unwrap().contains("<= DATE '1998-12-01' - INTERVAL '90' DAY (3)"));
        assert!(
            q1.render(1, Dialect::Postgres, 1.0)
                .unwrap()
                .contains("<= CAST(DATE '1998-12-01' - INTERVAL '60 day' AS DATE)")
        );
        assert!(q1.render(0, Dialect::Sqlite, 1.0).unwrap().contains("<= date('1998-12-01', '-90 day')"));
        let q7 = QUERIES[6].render(0, Dialect::Sqlite, 1.0).unwrap();
        assert!(q7.contains("CAST(strftime('%Y', l_shipdate) AS INTEGER)") && q7.contains("BETWEEN '1995-01-01'"));
        let q3 = QUERIES[2].render(0, Dialect::Oracle, 1.0).unwrap();
        assert!(q3.ends_with("FETCH FIRST 10 ROWS ONLY") && q3.contains("'BUILDING'"), "{q3}");
        assert!(QUERIES[2].render(0, Dialect::DuckDb, 1.0).unwrap().ends_with("LIMIT 10"));
        assert!(QUERIES[10].render(0, Dialect::Oracle, 0.01).unwrap().contains("* 0.01 FROM partsupp"));
        assert!(QUERIES[18].render(0, Dialect::Sqlite, 1.0).unwrap().contains("WHERE p_partkey = l_partkey AND (("));
    }

    #[test]
    fn bad_templates_are_refused_naming_what() {
        assert_eq!(render_marks("a {year:x} b", Dialect::Oracle).unwrap(), "a EXTRACT(YEAR FROM x) b");
        assert!(render_marks("{date:1994-01-01 + 3 week}", Dialect::Oracle).unwrap_err().contains("3 week"));
        assert!(render_marks("{date:94-01-01}", Dialect::Oracle).unwrap_err().contains("94-01-01"));
        assert!(render_marks("{date:}", Dialect::Oracle).unwrap_err().contains("not a YYYY-MM-DD date"));
        assert!(render_marks("{when:x}", Dialect::Oracle).unwrap_err().contains("when"));
        assert!(render_marks("{date:1994-01-01", Dialect::Oracle).unwrap_err().contains("unclosed"));
        let q = Query { parameters: [&[], &[]], ..QUERIES[0] };
        assert!(q.render(0, Dialect::Oracle, 1.0).unwrap_err().to_string().contains("[DELTA]"));
        assert!(QUERIES[0].render(2, Dialect::Oracle, 1.0).unwrap_err().to_string().contains("parameter set"));
    }
}
