//! Syntax errors as Oracle words them. The SQL parser (sqlparser) reports what it
//! expected and what it found, ending with "at Line: L, Column: C"; this module moves the
//! position into [`Error::Parse`]'s `position` and, for the common shapes, gives Oracle's
//! error number and text naming the token found there:
//!
//! | parser's message                                  | Oracle's error                                 |
//! |---------------------------------------------------|------------------------------------------------|
//! | end of statement expected, or no infix operator   | ORA-00923 in a select list (FROM keyword not   |
//! |                                                   | found where expected), ORA-00907 inside        |
//! |                                                   | parentheses, ORA-00924 at ORDER or GROUP       |
//! |                                                   | without BY, else ORA-00933                     |
//! | an expression expected                            | ORA-00936 missing expression                   |
//! | `)` or `(` expected                               | ORA-00907 / ORA-00906                          |
//! | a statement expected                              | ORA-00900 invalid SQL statement                |
//! | an identifier expected                            | ORA-00903 after FROM, TABLE, INTO, JOIN,       |
//! |                                                   | UPDATE; else ORA-00931 missing identifier      |
//! | any, where a reserved word stands for a table's   | ORA-00903 invalid table name, at that word     |
//! | name (`INSERT INTO VALUES`, `DELETE FROM WHERE`)  |                                                |
//! | an unterminated quote                             | ORA-01756 / ORA-01740                          |
//!
//! A shape not in the table keeps the parser's own text: nothing it says is lost.

use crate::error::Error;
use sqlparser::dialect::OracleDialect;
use sqlparser::keywords::Keyword;
use sqlparser::parser::ParserError;
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer};

/// The lioscope error for a parser error of `sql`. A statement that ends too early is
/// reported at its end.
pub(super) fn parse_error(e: ParserError, sql: &str) -> Error {
    let text = match e {
        ParserError::ParserError(m) | ParserError::TokenizerError(m) => m,
        ParserError::RecursionLimitExceeded => "statement nested too deeply".into(),
    };
    let (message, at) = match text.rsplit_once(" at Line: ").and_then(|(m, pos)| Some((m, parse_position(pos)?))) {
        Some((message, at)) => (message.to_owned(), Some(at)),
        None => (text, None),
    };
    let (message, at) = oracle_message(&message, sql, at).unwrap_or((message, at));
    let position = match at {
        Some((line, column)) => format!("line {line}, column {column}"),
        None => {
            let line = sql.lines().count().max(1);
            let column = sql.lines().last().map_or(0, |l| l.chars().count()) + 1;
            format!("line {line}, column {column} (end of statement)")
        }
    };
    Error::Parse { message, position: Some(position) }
}

/// "L, Column: C" as (L, C).
fn parse_position(pos: &str) -> Option<(u64, u64)> {
    let (line, column) = pos.split_once(", Column: ")?;
    Some((line.trim().parse().ok()?, column.trim().parse().ok()?))
}

/// Oracle's error number and text for the parser's `message` about the token at `at`
/// (`None`: the end of the statement), naming that token, and the token's position;
/// `None` for a shape that has no Oracle equivalent here.
fn oracle_message(message: &str, sql: &str, at: Option<(u64, u64)>) -> Option<(String, Option<(u64, u64)>)> {
    if let Some((code, text)) = unterminated(message) {
        return Some((format!("ORA-{code:05}: {text}"), at));
    }
    let tokens = Tokenizer::new(&OracleDialect {}, sql).tokenize_with_location().unwrap_or_default();
    let words: Vec<&TokenWithSpan> = tokens.iter().filter(|t| !matches!(t.token, Token::Whitespace(_))).collect();
    let text_of = |i: usize| words.get(i).map(|t| t.token.to_string());
    let mut index = at
        .and_then(|(line, column)| {
            words.iter().position(|t| t.span.start.line == line && t.span.start.column == column)
        })
        .unwrap_or(words.len());
    // The parser may point at the token after the one it names ("Expected an
    // expression, found: FROM" in `SELECT FROM dual` points at `dual`).
    let parser_found = message.rsplit_once(", found: ").map(|(_, f)| f);
    if let Some(f) = parser_found
        && index > 0
        && text_of(index).as_deref() != Some(f)
        && text_of(index - 1).as_deref() == Some(f)
    {
        index -= 1;
    }
    // A reserved word where a table's name belongs (`INSERT INTO VALUES (1)`): the parser
    // may take it for the name and fail after it; Oracle names the word.
    if let Some(i) = reserved_table_name(&words, index) {
        let at = (words[i].span.start.line, words[i].span.start.column);
        return Some((format!("ORA-00903: invalid table name, found {}", words[i].token), Some(at)));
    }
    let found = match (text_of(index), parser_found) {
        (Some(token), _) => token,
        (None, Some(f)) if f != "EOF" => f.to_owned(),
        (None, _) => "the end of the statement".to_owned(),
    };
    let at = words.get(index).map(|t| (t.span.start.line, t.span.start.column)).or(at);
    let (code, text) = classify(message, &words, index)?;
    Some((format!("ORA-{code:05}: {text}, found {found}"), at))
}

/// Oracle's error number and text for a parser message about `words[index]`.
fn classify(message: &str, words: &[&TokenWithSpan], index: usize) -> Option<(u32, &'static str)> {
    let expected = message.strip_prefix("Expected: ").or_else(|| message.strip_prefix("Expected "));
    let expected = expected.map(|e| e.split_once(", found").map_or(e, |(what, _)| what));
    if message.starts_with("No infix parser for token") || expected == Some("end of statement") {
        return Some(unexpected_token(words, index));
    }
    match expected? {
        "an expression" => Some((936, "missing expression")),
        ")" => Some((907, "missing right parenthesis")),
        "(" => Some((906, "missing left parenthesis")),
        "an SQL statement" => Some((900, "invalid SQL statement")),
        "identifier" => {
            let after_table_word = index.checked_sub(1).and_then(|i| words.get(i)).is_some_and(|t| {
                matches!(&t.token, Token::Word(w) if matches!(w.keyword,
                    Keyword::FROM | Keyword::TABLE | Keyword::INTO | Keyword::JOIN | Keyword::UPDATE))
            });
            Some(if after_table_word { (903, "invalid table name") } else { (931, "missing identifier") })
        }
        _ => None,
    }
}

/// The first word up to `words[index]` that stands where a table's name belongs (after
/// FROM, TABLE, INTO, JOIN or UPDATE) and is a reserved word no table can be named.
fn reserved_table_name(words: &[&TokenWithSpan], index: usize) -> Option<usize> {
    let keyword = |i: usize| match words.get(i).map(|t| &t.token) {
        Some(Token::Word(w)) if w.quote_style.is_none() => Some(w.keyword),
        _ => None,
    };
    (1..=index.min(words.len().saturating_sub(1))).find(|&i| {
        matches!(keyword(i - 1), Some(Keyword::FROM | Keyword::TABLE | Keyword::INTO | Keyword::JOIN | Keyword::UPDATE))
            && matches!(
                keyword(i),
                Some(
                    Keyword::VALUES
                        | Keyword::SELECT
                        | Keyword::WHERE
                        | Keyword::SET
                        | Keyword::FROM
                        | Keyword::GROUP
                        | Keyword::ORDER
                        | Keyword::HAVING
                        | Keyword::UNION
                        | Keyword::INTERSECT
                        | Keyword::ON
                        | Keyword::AND
                        | Keyword::OR
                        | Keyword::NULL
                )
            )
    })
}

/// An unterminated quote, which the tokenizer reports.
fn unterminated(message: &str) -> Option<(u32, &'static str)> {
    if message.starts_with("Unterminated string literal") {
        Some((1756, "quoted string not properly terminated"))
    } else if message.starts_with("Expected close delimiter '\"'") {
        Some((1740, "missing double quote in identifier"))
    } else {
        None
    }
}

/// A token where the statement, or the part of it the parser was in, should have ended.
fn unexpected_token(words: &[&TokenWithSpan], index: usize) -> (u32, &'static str) {
    let is = |i: usize, k: Keyword| matches!(words.get(i).map(|t| &t.token), Some(Token::Word(w)) if w.keyword == k);
    if (is(index, Keyword::ORDER) || is(index, Keyword::GROUP)) && !is(index + 1, Keyword::BY) {
        return (924, "missing BY keyword");
    }
    match clause_at(words, index) {
        Clause::SelectList => (923, "FROM keyword not found where expected"),
        Clause::Parenthesized => (907, "missing right parenthesis"),
        Clause::Other => (933, "SQL command not properly ended"),
    }
}

/// Where a token stands in its statement, as far as choosing an error goes.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Clause {
    /// Between SELECT and FROM, at the SELECT's level of parentheses.
    SelectList,
    /// Inside parentheses that are not a subquery's select list.
    Parenthesized,
    /// The statement's own clauses after its select list.
    Other,
}

/// The clause `words[index]` stands in: each level of parentheses has its own.
fn clause_at(words: &[&TokenWithSpan], index: usize) -> Clause {
    let mut levels = vec![Clause::Other];
    for t in &words[..index.min(words.len())] {
        match &t.token {
            Token::LParen => levels.push(Clause::Parenthesized),
            Token::RParen if levels.len() > 1 => {
                levels.pop();
            }
            Token::Word(w) if w.keyword == Keyword::SELECT => {
                *levels.last_mut().expect("one level") = Clause::SelectList
            }
            Token::Word(w) if w.keyword == Keyword::FROM => {
                // A subquery's FROM clause is still inside its parentheses.
                let after = if levels.len() > 1 { Clause::Parenthesized } else { Clause::Other };
                let level = levels.last_mut().expect("one level");
                if *level == Clause::SelectList {
                    *level = after;
                }
            }
            _ => {}
        }
    }
    *levels.last().expect("one level")
}
