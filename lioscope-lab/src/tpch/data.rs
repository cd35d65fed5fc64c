//! The TPC-H rows at a scale factor, made in-process by the `tpchgen` crate and written
//! as `.tbl` files: one row a line, its fields separated by `|` (the trailing separator
//! `dbgen` writes is left off, so that every engine's CSV reader takes the file as it is).

use lioscope::{Error, Result};
use std::fmt::Display;
use std::io::Write;
use std::path::Path;

/// Writes the rows of `table` at scale factor `sf` to `path`; the number of rows.
pub fn write_tbl(table: &str, sf: f64, path: &Path) -> Result<u64> {
    use tpchgen::generators::*;
    if !(sf.is_finite() && sf > 0.0) {
        return Err(Error::InvalidParameter { name: "scale factor".into(), message: format!("{sf}: not above 0") });
    }
    if super::schema::Table::named(table).is_none() {
        return Err(Error::InvalidParameter { name: "table".into(), message: format!("{table}: not a TPC-H table") });
    }
    let file = std::fs::File::create(path).map_err(|e| Error::io("create", path, e))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    let rows = match table {
        "region" => write_rows(&mut out, RegionGenerator::new(sf, 1, 1).iter()),
        "nation" => write_rows(&mut out, NationGenerator::new(sf, 1, 1).iter()),
        "supplier" => write_rows(&mut out, SupplierGenerator::new(sf, 1, 1).iter()),
        "part" => write_rows(&mut out, PartGenerator::new(sf, 1, 1).iter()),
        "partsupp" => write_rows(&mut out, PartSuppGenerator::new(sf, 1, 1).iter()),
        "customer" => write_rows(&mut out, CustomerGenerator::new(sf, 1, 1).iter()),
        "orders" => write_rows(&mut out, OrderGenerator::new(sf, 1, 1).iter()),
        "lineitem" => write_rows(&mut out, LineItemGenerator::new(sf, 1, 1).iter()),
        other => {
            return Err(Error::InvalidParameter {
                name: "table".into(),
                message: format!("{other}: not a TPC-H table"),
            });
        }
    };
    let rows = rows.and_then(|n| out.flush().map(|()| n)).map_err(|e| Error::io("write", path, e))?;
    Ok(rows)
}

/// Each row as `dbgen` prints it, less its trailing `|`.
fn write_rows<R: Display>(out: &mut impl Write, rows: impl Iterator<Item = R>) -> std::io::Result<u64> {
    let mut line = String::new();
    let mut n = 0;
    for row in rows {
        line.clear();
        std::fmt::Write::write_fmt(&mut line, format_args!("{row}")).expect("a String takes any text");
        let fields = line.strip_suffix('|').unwrap_or(&line);
        out.write_all(fields.as_bytes())?;
        out.write_all(b"\n")?;
        n += 1;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_written_without_the_trailing_separator() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nation.tbl");
        assert_eq!(write_tbl("nation", 0.01, &path).unwrap(), 25);
        let text = std::fs::read_to_string(&path).unwrap();
        let first = text.lines().next().unwrap();
        assert!(first.starts_with("0|ALGERIA|0|") && !first.ends_with('|'), "{first}");
        assert_eq!(first.split('|').count(), 4);
        let path = dir.path().join("lineitem.tbl");
        let rows = write_tbl("lineitem", 0.001, &path).unwrap();
        assert!((5_000..7_000).contains(&rows), "{rows}");
        assert!(write_tbl("emp", 0.01, &path).unwrap_err().to_string().contains("emp"));
        assert!(write_tbl("nation", 0.0, &path).unwrap_err().to_string().contains("scale factor"));
    }
}
