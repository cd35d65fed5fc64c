//! A client's SQL text as lioscope reads it: PostgreSQL's parameter placeholders as
//! bind variables (`$1` is `:1`), and a simple query's text split into its statements.
//!
//! Text inside string literals, quoted identifiers and comments is left as it is, so a
//! `'$1'` stays a string and a `;` in a comment ends nothing. The number of a
//! placeholder is kept, so `$2 ... $1` binds the second parameter first by name, as
//! PostgreSQL's numbering means.

/// The byte after the literal, quoted name or comment that starts at `i`, if one does.
fn skip_quoted(bytes: &[u8], mut i: usize) -> Option<usize> {
    match bytes[i] {
        quote @ (b'\'' | b'"') => {
            i += 1;
            while i < bytes.len() {
                if bytes[i] == quote {
                    if bytes.get(i + 1) == Some(&quote) {
                        i += 2;
                        continue;
                    }
                    break;
                }
                i += 1;
            }
            Some((i + 1).min(bytes.len()))
        }
        b'-' if bytes.get(i + 1) == Some(&b'-') => {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
            Some(i)
        }
        b'/' if bytes.get(i + 1) == Some(&b'*') => {
            i += 2;
            while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                i += 1;
            }
            Some((i + 2).min(bytes.len()))
        }
        _ => None,
    }
}

/// The statements of a simple query's text, split at each `;` outside literals and
/// comments; blank statements left out.
pub fn split_statements(sql: &str) -> Vec<&str> {
    let bytes = sql.as_bytes();
    let (mut out, mut start, mut i) = (Vec::new(), 0, 0);
    while i < bytes.len() {
        if let Some(next) = skip_quoted(bytes, i) {
            i = next;
        } else if bytes[i] == b';' {
            out.push(&sql[start..i]);
            i += 1;
            start = i;
        } else {
            i += 1;
        }
    }
    out.push(&sql[start..]);
    out.into_iter().filter(|s| has_code(s)).map(str::trim).collect()
}

/// Whether `sql` holds anything but blanks and comments.
fn has_code(sql: &str) -> bool {
    let bytes = sql.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'-' | b'/' if matches!(bytes.get(i + 1), Some(b'-' | b'*')) => {
                i = skip_quoted(bytes, i).unwrap_or(i + 1);
            }
            b if b.is_ascii_whitespace() => i += 1,
            _ => return true,
        }
    }
    false
}

/// `sql` with each `$n` outside literals, quoted names and comments written `:n`, and
/// the highest `n` met (the number of parameters the statement takes).
pub fn to_bind_variables(sql: &str) -> (String, usize) {
    let bytes = sql.as_bytes();
    let mut out = String::with_capacity(sql.len());
    let mut highest = 0;
    let mut i = 0;
    let mut copied = 0;
    while i < bytes.len() {
        if let Some(next) = skip_quoted(bytes, i) {
            i = next;
            continue;
        }
        match bytes[i] {
            b'$' if bytes.get(i + 1).is_some_and(u8::is_ascii_digit)
                && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_')) =>
            {
                let start = i + 1;
                let mut end = start;
                while end < bytes.len() && bytes[end].is_ascii_digit() {
                    end += 1;
                }
                let n: usize = sql[start..end].parse().unwrap_or(0);
                highest = highest.max(n);
                out.push_str(&sql[copied..i]);
                out.push(':');
                out.push_str(&sql[start..end]);
                copied = end;
                i = end;
            }
            _ => i += 1,
        }
    }
    out.push_str(&sql[copied.min(sql.len())..]);
    (out, highest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_become_numbered_bind_variables() {
        assert_eq!(
            to_bind_variables("SELECT * FROM t WHERE a = $1 AND b > $2"),
            ("SELECT * FROM t WHERE a = :1 AND b > :2".into(), 2)
        );
        assert_eq!(to_bind_variables("UPDATE t SET a = $2 WHERE id = $1").1, 2);
    }

    #[test]
    fn a_simple_query_splits_at_semicolons_outside_literals_and_comments() {
        assert_eq!(
            split_statements("BEGIN; SELECT ';' FROM t; -- a;b\n;COMMIT;"),
            ["BEGIN", "SELECT ';' FROM t", "COMMIT"]
        );
        assert_eq!(split_statements(" ; ;"), Vec::<&str>::new());
    }

    #[test]
    fn literals_quoted_names_and_comments_keep_their_dollars() {
        let sql = "SELECT '$1', \"a$1\", x$1 FROM t -- $3\n WHERE a = $1 /* $4 */";
        assert_eq!(
            to_bind_variables(sql),
            ("SELECT '$1', \"a$1\", x$1 FROM t -- $3\n WHERE a = :1 /* $4 */".into(), 1)
        );
        assert_eq!(to_bind_variables("SELECT 'it''s $2' FROM t WHERE a = $1").1, 1);
    }
}
