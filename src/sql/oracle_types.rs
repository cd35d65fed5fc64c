//! Oracle's interval type names, which the SQL parser does not read, rewritten into
//! names it does: `INTERVAL YEAR [(p)] TO MONTH` becomes `INTERVAL_YEAR_TO_MONTH(p)` and
//! `INTERVAL DAY [(p)] TO SECOND [(s)]` becomes `INTERVAL_DAY_TO_SECOND(p,s)` (Oracle's
//! defaults, 2 and 6, filled in), which the parser takes as a named type with arguments
//! and [`super::data_types`] maps to lioscope's types.
//!
//! Every statement lioscope parses goes through [`parse_statements`] or [`parser`], so
//! a type is read the same wherever it stands: a column of CREATE TABLE, a CAST, a
//! view's stored text. An INTERVAL literal (`INTERVAL '3' DAY`) has a string after the
//! keyword, never YEAR or DAY, and is left alone.

use sqlparser::ast::Statement;
use sqlparser::dialect::OracleDialect;
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer, Word};

/// The name an INTERVAL YEAR TO MONTH type is given for the parser.
pub(super) const YEAR_TO_MONTH: &str = "INTERVAL_YEAR_TO_MONTH";
/// The name an INTERVAL DAY TO SECOND type is given for the parser.
pub(super) const DAY_TO_SECOND: &str = "INTERVAL_DAY_TO_SECOND";

/// A parser over `sql` with its interval types rewritten.
pub(crate) fn parser<'d>(dialect: &'d OracleDialect, sql: &str) -> Result<Parser<'d>, ParserError> {
    if !sql.as_bytes().windows(8).any(|w| w.eq_ignore_ascii_case(b"INTERVAL")) {
        return Parser::new(dialect).try_with_sql(sql);
    }
    let tokens = Tokenizer::new(dialect, sql).tokenize_with_location()?;
    Ok(Parser::new(dialect).with_tokens_with_locations(rewrite(tokens)))
}

/// Parses `sql`'s statements, its interval types rewritten.
pub(crate) fn parse_statements(sql: &str) -> Result<Vec<Statement>, ParserError> {
    parser(&OracleDialect {}, sql)?.parse_statements()
}

/// `text` (the parser's print of a statement or expression) with each rewritten interval
/// type written back as Oracle writes it: `INTERVAL DAY(3) TO SECOND(2)`, for what users
/// read (a view's text, a column heading).
pub(crate) fn as_written(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("INTERVAL_") {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let written = [YEAR_TO_MONTH, DAY_TO_SECOND].into_iter().find_map(|name| {
            let args = tail.strip_prefix(name)?.strip_prefix('(')?;
            let close = args.find(')')?;
            let numbers: Vec<&str> = args[..close].split(',').map(str::trim).collect();
            if numbers.iter().any(|n| n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit())) {
                return None;
            }
            let text = match (name, numbers.as_slice()) {
                (YEAR_TO_MONTH, [p]) => format!("INTERVAL YEAR({p}) TO MONTH"),
                (DAY_TO_SECOND, [p, s]) => format!("INTERVAL DAY({p}) TO SECOND({s})"),
                _ => return None,
            };
            Some((text, name.len() + 1 + close + 1))
        });
        match written {
            Some((text, len)) => {
                out.push_str(&text);
                rest = &tail[len..];
            }
            None => {
                out.push_str("INTERVAL_");
                rest = &tail["INTERVAL_".len()..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// `tokens` with each interval type replaced by its rewritten name and arguments.
fn rewrite(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let mut out = Vec::with_capacity(tokens.len());
    let mut i = 0;
    while i < tokens.len() {
        match interval_type(&tokens, i) {
            Some((name, args, next)) => {
                let span = tokens[i].span;
                let token = |token: Token| TokenWithSpan { token, span };
                out.push(token(Token::make_word(name, None)));
                out.push(token(Token::LParen));
                for (k, arg) in args.iter().enumerate() {
                    if k > 0 {
                        out.push(token(Token::Comma));
                    }
                    out.push(token(Token::Number(arg.to_string(), false)));
                }
                out.push(token(Token::RParen));
                i = next;
            }
            None => {
                out.push(tokens[i].clone());
                i += 1;
            }
        }
    }
    out
}

/// The interval type starting at token `at`, if one does: its new name, its precisions
/// (those not written at Oracle's defaults), and the index of the token after it.
fn interval_type(tokens: &[TokenWithSpan], at: usize) -> Option<(&'static str, Vec<u64>, usize)> {
    let mut cursor = Cursor { tokens, at };
    cursor.keyword(Keyword::INTERVAL)?;
    if cursor.keyword(Keyword::YEAR).is_some() {
        let years = cursor.precision().unwrap_or(2);
        cursor.keyword(Keyword::TO)?;
        cursor.keyword(Keyword::MONTH)?;
        return Some((YEAR_TO_MONTH, vec![years], cursor.at));
    }
    cursor.keyword(Keyword::DAY)?;
    let days = cursor.precision().unwrap_or(2);
    cursor.keyword(Keyword::TO)?;
    cursor.keyword(Keyword::SECOND)?;
    let fraction = cursor.precision().unwrap_or(6);
    Some((DAY_TO_SECOND, vec![days, fraction], cursor.at))
}

/// A walk over tokens that skips blanks and comments.
struct Cursor<'t> {
    tokens: &'t [TokenWithSpan],
    at: usize,
}

impl Cursor<'_> {
    /// The next token that is not whitespace, moving past it.
    fn next(&mut self) -> Option<&Token> {
        while let Some(t) = self.tokens.get(self.at) {
            self.at += 1;
            if !matches!(t.token, Token::Whitespace(_)) {
                return Some(&t.token);
            }
        }
        None
    }

    /// Moves past keyword `k` when it comes next.
    fn keyword(&mut self, k: Keyword) -> Option<()> {
        let save = self.at;
        match self.next() {
            Some(Token::Word(Word { keyword, quote_style: None, .. })) if *keyword == k => Some(()),
            _ => {
                self.at = save;
                None
            }
        }
    }

    /// `(n)` when it comes next.
    fn precision(&mut self) -> Option<u64> {
        let save = self.at;
        let found = (|| {
            matches!(self.next()?, Token::LParen).then_some(())?;
            let Token::Number(n, _) = self.next()?.clone() else { return None };
            matches!(self.next()?, Token::RParen).then_some(())?;
            n.parse().ok()
        })();
        if found.is_none() {
            self.at = save;
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewritten(sql: &str) -> String {
        parse_statements(sql).unwrap().iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
    }

    #[test]
    fn interval_types_get_names_the_parser_reads() {
        assert_eq!(
            rewritten(
                "CREATE TABLE t (a INTERVAL YEAR TO MONTH, b INTERVAL DAY(3) TO SECOND(2), c INTERVAL YEAR(4) TO MONTH)"
            ),
            "CREATE TABLE t (a INTERVAL_YEAR_TO_MONTH(2), b INTERVAL_DAY_TO_SECOND(3, 2), c INTERVAL_YEAR_TO_MONTH(4))"
        );
        assert_eq!(
            rewritten("SELECT CAST(x AS INTERVAL DAY TO SECOND) FROM t"),
            "SELECT CAST(x AS INTERVAL_DAY_TO_SECOND(2, 6)) FROM t"
        );
    }

    #[test]
    fn rewritten_types_print_back_as_oracle_writes_them() {
        let sql = "SELECT CAST(x AS INTERVAL DAY(3) TO SECOND(0)), CAST(y AS INTERVAL YEAR TO MONTH) FROM t";
        assert_eq!(
            as_written(&rewritten(sql)),
            "SELECT CAST(x AS INTERVAL DAY(3) TO SECOND(0)), CAST(y AS INTERVAL YEAR(2) TO MONTH) FROM t"
        );
        assert_eq!(as_written(&rewritten(&as_written(&rewritten(sql)))), as_written(&rewritten(sql)));
        assert_eq!(
            as_written("SELECT interval_x, INTERVAL_DAY_TO_SECOND(a) FROM t"),
            "SELECT interval_x, INTERVAL_DAY_TO_SECOND(a) FROM t"
        );
    }

    #[test]
    fn interval_literals_are_left_alone() {
        let sql = "SELECT d + INTERVAL '3' DAY, d - INTERVAL '1-2' YEAR TO MONTH FROM t";
        assert_eq!(rewritten(sql), parse_statements(sql).unwrap()[0].to_string());
        assert!(rewritten(sql).contains("INTERVAL '3' DAY"));
    }

    #[test]
    fn a_half_written_type_is_left_for_the_parser_to_refuse() {
        assert!(parse_statements("CREATE TABLE t (a INTERVAL DAY TO)").is_err());
        assert!(parse_statements("CREATE TABLE t (a INTERVAL YEAR(2 TO MONTH)").is_err());
    }
}
