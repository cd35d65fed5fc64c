//! Oracle's syntax the SQL parser does not read, rewritten token by token into syntax it
//! does:
//!
//! - interval type names: `INTERVAL YEAR [(p)] TO MONTH` becomes
//!   `INTERVAL_YEAR_TO_MONTH(p)` and `INTERVAL DAY [(p)] TO SECOND [(s)]` becomes
//!   `INTERVAL_DAY_TO_SECOND(p,s)` (Oracle's defaults, 2 and 6, filled in), which the
//!   parser takes as a named type with arguments and [`super::data_types`] maps to
//!   lioscope's types ([`as_written`] prints them back as Oracle writes them);
//! - a comparison with ANY, SOME or ALL of a list, `x > ANY (1, 2)`, gets the list its
//!   own parentheses, `x > ANY ((1, 2))`, which the parser reads as one row of values.
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
    let has = |word: &[u8]| sql.as_bytes().windows(word.len()).any(|w| w.eq_ignore_ascii_case(word));
    if !has(b"INTERVAL") && !has(b"ANY") && !has(b"SOME") && !has(b"ALL") {
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
    if !text.contains("INTERVAL_") {
        return text.to_owned();
    }
    let Ok(tokens) = Tokenizer::new(&OracleDialect {}, text).tokenize() else { return text.to_owned() };
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < tokens.len() {
        match written_type(&tokens[i..]) {
            Some((written, len)) => {
                out.push_str(&written);
                i += len;
            }
            None => {
                out.push_str(&tokens[i].to_string());
                i += 1;
            }
        }
    }
    out
}

/// A rewritten interval type at the start of `tokens` (an unquoted name, then its
/// precisions in parentheses) as Oracle writes it, and the tokens it took.
fn written_type(tokens: &[Token]) -> Option<(String, usize)> {
    let Token::Word(Word { value, quote_style: None, .. }) = tokens.first()? else { return None };
    let name = [YEAR_TO_MONTH, DAY_TO_SECOND].into_iter().find(|n| value.eq_ignore_ascii_case(n))?;
    let close = tokens.iter().position(|t| *t == Token::RParen)?;
    let inside: Vec<&Token> = tokens.get(1..close)?.iter().filter(|t| !matches!(t, Token::Whitespace(_))).collect();
    let text = match (name, inside.as_slice()) {
        (YEAR_TO_MONTH, [Token::LParen, Token::Number(p, _)]) => format!("INTERVAL YEAR({p}) TO MONTH"),
        (DAY_TO_SECOND, [Token::LParen, Token::Number(p, _), Token::Comma, Token::Number(s, _)]) => {
            format!("INTERVAL DAY({p}) TO SECOND({s})")
        }
        _ => return None,
    };
    Some((text, close + 1))
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
                if let Some(close) = quantified_list(&tokens, i) {
                    // ANY ( a, b ) → ANY ( ( a, b ) ): the parentheses after the opening one.
                    let open = (i + 1..close).find(|&k| tokens[k].token == Token::LParen).expect("found it");
                    out.extend(tokens[i..=open].iter().cloned());
                    out.push(TokenWithSpan { token: Token::LParen, span: tokens[open].span });
                    out.extend(tokens[open + 1..close].iter().cloned());
                    out.push(TokenWithSpan { token: Token::RParen, span: tokens[close].span });
                    out.push(tokens[close].clone());
                    i = close + 1;
                    continue;
                }
                out.push(tokens[i].clone());
                i += 1;
            }
        }
    }
    out
}

/// When token `at` is ANY, SOME or ALL followed by a parenthesized list of more than one
/// item (not a subquery), the index of the list's closing parenthesis.
fn quantified_list(tokens: &[TokenWithSpan], at: usize) -> Option<usize> {
    let mut cursor = Cursor { tokens, at };
    if cursor.keyword(Keyword::ANY).is_none() && cursor.keyword(Keyword::SOME).is_none() {
        cursor.keyword(Keyword::ALL)?;
    }
    matches!(cursor.next()?, Token::LParen).then_some(())?;
    let first = cursor.at;
    if cursor.keyword(Keyword::SELECT).is_some() || cursor.keyword(Keyword::WITH).is_some() {
        return None;
    }
    cursor.at = first;
    let (mut depth, mut commas) = (0usize, 0usize);
    while let Some(t) = tokens.get(cursor.at) {
        cursor.at += 1;
        match t.token {
            Token::LParen => depth += 1,
            Token::RParen if depth == 0 => return (commas > 0).then_some(cursor.at - 1),
            Token::RParen => depth -= 1,
            Token::Comma if depth == 0 => commas += 1,
            _ => {}
        }
    }
    None
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
        for untouched in [
            "SELECT interval_x, INTERVAL_DAY_TO_SECOND(a) FROM t",
            "SELECT 'INTERVAL_YEAR_TO_MONTH(5)' s, \"INTERVAL_YEAR_TO_MONTH\"(5) FROM dual",
        ] {
            assert_eq!(as_written(untouched), untouched);
        }
    }

    #[test]
    fn a_list_after_any_some_or_all_gets_its_own_parentheses() {
        assert_eq!(rewritten("SELECT 1 FROM t WHERE x > ANY (1, (2))"), "SELECT 1 FROM t WHERE x > ANY((1, (2)))");
        assert_eq!(rewritten("SELECT 1 FROM t WHERE x <> ALL (1, 2)"), "SELECT 1 FROM t WHERE x <> ALL((1, 2))");
        // One item, a subquery, UNION ALL and SELECT ALL are left alone.
        for sql in [
            "SELECT 1 FROM t WHERE x = ANY (1)",
            "SELECT 1 FROM t WHERE x = ANY (SELECT a, b FROM u)",
            "SELECT a FROM t UNION ALL (SELECT 1 FROM u)",
            "SELECT ALL (a), b FROM t",
        ] {
            assert_eq!(rewritten(sql), parse_statements(sql).unwrap()[0].to_string(), "{sql}");
        }
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
