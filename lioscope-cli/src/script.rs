//! Splitting a script into statements, as SQL*Plus reads one. The shell, `lioscope sql
//! -c/-f`, `@` scripts and the golden tests all split here, so they agree on where a
//! statement ends.
//!
//! - SQL ends at a `;` outside quotes (`'...'`, `"..."`) and comments (`-- ...`,
//!   `/* ... */`), or at a `/` alone on a line (even inside an unclosed quote), or at
//!   the end of the script.
//! - A client command ([`is_client_command`]: SET, PROMPT, @, VARIABLE, ...) is
//!   recognised where a statement starts (at a line's start or after a `;`) and ends at
//!   its first `;` outside quotes or at its line's end; the rest of the line is read as
//!   more statements:
//!
//! ```text
//!  SET TIMING ON; SELECT 1 FROM dual;   ─►  [SET TIMING ON] [SELECT 1 FROM dual]
//!  SELECT 1 FROM dual; PROMPT done      ─►  [SELECT 1 FROM dual] [PROMPT done]
//!  SELECT 'a;                           ─►  [SELECT 'a;\nb' FROM dual]
//!  b' FROM dual;
//! ```
//!
//! Invariant: a statement's `line` is the line (from 1) of its first character that is
//! not blank or inside a `--` comment; the SQL text keeps its line breaks, so positions
//! the parser reports count from that line.

use super::sqlplus::is_client_command;

/// One statement of a script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptStatement {
    /// What runs: SQL without its terminator and `--` comments (their line breaks kept),
    /// trimmed; or a client command without its `;`.
    pub text: String,
    /// The statement as written, comments and terminator included: what SET ECHO ON shows.
    pub source: String,
    /// The script line its first character stands on, from 1.
    pub line: usize,
    /// Whether it is a client command rather than SQL for the session.
    pub client: bool,
}

/// Splits `script` into its statements (SQL and client commands), in order.
pub fn split_script(script: &str) -> Vec<ScriptStatement> {
    let mut splitter = Splitter::default();
    for (index, line) in script.lines().enumerate() {
        splitter.read_line(index + 1, line);
    }
    splitter.finish_sql("");
    splitter.done
}

/// Whether `text` ends inside a SQL statement that has not been ended yet (by `;`, a `/`
/// line, or a client command's line end): the shell reads more lines before running it.
pub fn ends_inside_statement(text: &str) -> bool {
    let mut splitter = Splitter::default();
    for (index, line) in text.lines().enumerate() {
        splitter.read_line(index + 1, line);
    }
    splitter.started()
}

/// The state of reading a script line by line.
#[derive(Default)]
struct Splitter {
    /// The statements ended so far.
    done: Vec<ScriptStatement>,
    /// The SQL statement being read, for the session: empty until its first character.
    text: String,
    /// The same statement as written; empty exactly when `text` is.
    source: String,
    /// The line the statement being read started on.
    start_line: usize,
    /// Inside a quoted string or name: the quote character that closes it.
    quote: Option<char>,
    /// Inside a `/* ... */` comment.
    block_comment: bool,
    /// The comment's last character was a `*`, so a `/` closes it.
    comment_star: bool,
}

impl Splitter {
    /// Whether a SQL statement has started and not ended.
    fn started(&self) -> bool {
        !self.source.is_empty()
    }

    /// Whether the reader stands outside every quote and block comment.
    fn in_code(&self) -> bool {
        self.quote.is_none() && !self.block_comment
    }

    fn read_line(&mut self, number: usize, line: &str) {
        // A `/` line ends even an unclosed quote or comment, as in SQL*Plus: the way out
        // of a statement whose quote never closes.
        if line.trim() == "/" {
            self.finish_sql("\n/");
            return;
        }
        let mut rest = line;
        loop {
            if !self.started() && self.in_code() && is_client_command(rest) {
                rest = self.client_command(number, rest.trim_start());
                continue;
            }
            match self.read_sql(number, rest) {
                Some(after_semicolon) => rest = after_semicolon,
                None => break,
            }
        }
        if self.started() {
            self.text.push('\n');
            self.source.push('\n');
        }
    }

    /// Takes the client command at the start of `rest`, up to its first `;` outside
    /// quotes or the line's end; returns what follows that `;`.
    fn client_command<'l>(&mut self, number: usize, rest: &'l str) -> &'l str {
        let mut quote = None;
        let end = rest.char_indices().find_map(|(i, c)| {
            match (quote, c) {
                (None, '\'' | '"') => quote = Some(c),
                (Some(q), c) if c == q => quote = None,
                (None, ';') => return Some(i),
                _ => {}
            }
            None
        });
        let (command, source, after) = match end {
            Some(i) => (&rest[..i], &rest[..=i], &rest[i + 1..]),
            None => (rest, rest, ""),
        };
        self.done.push(ScriptStatement {
            text: command.trim().to_owned(),
            source: source.trim().to_owned(),
            line: number,
            client: true,
        });
        after
    }

    /// Reads SQL from `rest` up to a `;` outside quotes and comments (ending the
    /// statement, and returning what follows it) or to the line's end (`None`).
    fn read_sql<'l>(&mut self, number: usize, rest: &'l str) -> Option<&'l str> {
        let mut chars = rest.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            let next = chars.peek().map(|&(_, n)| n);
            if let Some(q) = self.quote {
                self.push(c);
                if c == q {
                    self.quote = None;
                }
            } else if self.block_comment {
                self.push(c);
                self.block_comment = !(self.comment_star && c == '/');
                self.comment_star = c == '*';
            } else if c == '-' && next == Some('-') {
                if self.started() {
                    self.source.push_str(&rest[i..]);
                }
                return None;
            } else if c == ';' {
                self.finish_sql(";");
                return Some(&rest[i + 1..]);
            } else if c.is_whitespace() && !self.started() {
                continue;
            } else {
                if !self.started() {
                    self.start_line = number;
                }
                self.push(c);
                match (c, next) {
                    ('\'' | '"', _) => self.quote = Some(c),
                    ('/', Some('*')) => {
                        self.push('*');
                        chars.next();
                        self.block_comment = true;
                        self.comment_star = false;
                    }
                    _ => {}
                }
            }
        }
        None
    }

    fn push(&mut self, c: char) {
        self.text.push(c);
        self.source.push(c);
    }

    /// Ends the SQL statement being read, if one has started; `terminator` is how it
    /// ended as written (`;`, a `/` line, or nothing at the script's end).
    fn finish_sql(&mut self, terminator: &str) {
        if !self.started() {
            return;
        }
        let mut source = std::mem::take(&mut self.source).trim_end().to_owned();
        source.push_str(terminator);
        self.done.push(ScriptStatement {
            text: std::mem::take(&mut self.text).trim().to_owned(),
            source,
            line: self.start_line,
            client: false,
        });
        self.quote = None;
        self.block_comment = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(script: &str) -> Vec<String> {
        split_script(script).into_iter().map(|s| s.text).collect()
    }

    #[test]
    fn sql_ends_at_a_semicolon_outside_quotes_and_comments() {
        assert_eq!(texts("SELECT 1 FROM dual;\n"), ["SELECT 1 FROM dual"]);
        assert_eq!(texts("SELECT 'a;\nb' FROM dual;  \n"), ["SELECT 'a;\nb' FROM dual"]);
        assert_eq!(texts("SELECT \"a;b\" FROM dual;"), ["SELECT \"a;b\" FROM dual"]);
        assert_eq!(texts("SELECT /* ; */ 1\nFROM dual;\n"), ["SELECT /* ; */ 1\nFROM dual"]);
        assert_eq!(texts("SELECT 1 -- a; b\nFROM dual;"), ["SELECT 1 \nFROM dual"]);
        assert_eq!(texts("SELECT 'it''s; fine' FROM dual;"), ["SELECT 'it''s; fine' FROM dual"]);
        assert_eq!(texts("SELECT 1 FROM dual; SELECT 2 FROM dual;"), ["SELECT 1 FROM dual", "SELECT 2 FROM dual"]);
    }

    #[test]
    fn comments_and_quotes_hide_semicolons_and_leave_a_statement_open() {
        assert_eq!(
            texts("select 'a;b' from dual; -- c;\nselect 2 from dual;\n/* ; */ select 3 from dual"),
            ["select 'a;b' from dual", "select 2 from dual", "/* ; */ select 3 from dual"]
        );
        assert!(ends_inside_statement("select 'a;"));
        assert!(ends_inside_statement("select 1 /*/ ;"));
    }

    #[test]
    fn a_block_comment_ends_only_at_its_own_close() {
        assert_eq!(texts("/*/ ; */ SELECT 1 FROM dual;"), ["/*/ ; */ SELECT 1 FROM dual"]);
        assert_eq!(
            texts("SELECT 1 /**/ FROM dual; SELECT 2 FROM dual;"),
            ["SELECT 1 /**/ FROM dual", "SELECT 2 FROM dual"]
        );
    }

    #[test]
    fn a_slash_alone_on_a_line_ends_sql_even_inside_a_quote() {
        assert_eq!(texts("SELECT 1\nFROM dual\n/\nSELECT 2 FROM dual;"), ["SELECT 1\nFROM dual", "SELECT 2 FROM dual"]);
        assert_eq!(texts("SELECT 'a;\n/\nSELECT 2 FROM dual;"), ["SELECT 'a;", "SELECT 2 FROM dual"]);
        assert_eq!(texts("SELECT 1 /* a;\n/\nSELECT 2 FROM dual;"), ["SELECT 1 /* a;", "SELECT 2 FROM dual"]);
        assert_eq!(split_script("SELECT 1 FROM dual\n  /  \n")[0].source, "SELECT 1 FROM dual\n/");
        assert!(texts("/\n").is_empty());
    }

    #[test]
    fn empty_statements_and_comment_lines_are_dropped() {
        assert_eq!(texts(";\n;;\n-- only a comment\n\nSELECT 1 FROM dual;;"), ["SELECT 1 FROM dual"]);
    }

    #[test]
    fn the_last_statement_needs_no_terminator() {
        let s = split_script("SELECT 1 FROM dual;\nSELECT 2\nFROM dual -- no semicolon\n");
        assert_eq!(s[1].text, "SELECT 2\nFROM dual");
        assert_eq!(s[1].source, "SELECT 2\nFROM dual -- no semicolon");
    }

    #[test]
    fn client_commands_end_at_a_semicolon_or_their_line() {
        let s = split_script("SET AUTOTRACE ON\nSELECT 1\nFROM dual;\nset timing on\nselect 'a;\nb' from dual;\n");
        let t: Vec<_> = s.iter().map(|s| (s.text.as_str(), s.client)).collect();
        assert_eq!(
            t,
            [
                ("SET AUTOTRACE ON", true),
                ("SELECT 1\nFROM dual", false),
                ("set timing on", true),
                ("select 'a;\nb' from dual", false)
            ]
        );
        assert_eq!(texts("SET TIMING ON; SELECT 1 FROM dual;"), ["SET TIMING ON", "SELECT 1 FROM dual"]);
        assert_eq!(texts("SET ECHO ON; SET FEEDBACK OFF;PROMPT hi"), ["SET ECHO ON", "SET FEEDBACK OFF", "PROMPT hi"]);
        assert_eq!(
            texts("SELECT 1 FROM dual; SET AUTOTRACE ON\nSELECT 2 FROM dual;"),
            ["SELECT 1 FROM dual", "SET AUTOTRACE ON", "SELECT 2 FROM dual"]
        );
        assert_eq!(texts("PROMPT it's; SELECT 1 FROM dual;"), ["PROMPT it's; SELECT 1 FROM dual;"]);
        assert_eq!(texts("PROMPT 'a;b'; SELECT 1 FROM dual"), ["PROMPT 'a;b'", "SELECT 1 FROM dual"]);
        assert_eq!(texts("-- set up\n@setup.sql\n@@ next.sql;"), ["@setup.sql", "@@ next.sql"]);
    }

    #[test]
    fn a_client_command_word_inside_sql_is_sql() {
        assert_eq!(texts("SELECT 1\nSET ECHO ON\nFROM dual;"), ["SELECT 1\nSET ECHO ON\nFROM dual"]);
        assert_eq!(
            texts("SET TRANSACTION READ ONLY;\nUPDATE t SET a = 1;"),
            ["SET TRANSACTION READ ONLY", "UPDATE t SET a = 1"]
        );
        assert!(!split_script("SET TRANSACTION READ ONLY;")[0].client);
    }

    #[test]
    fn statements_know_their_first_line_and_source() {
        let s = split_script(
            "-- header\n\nSELECT 1\n  FROM dual;  PROMPT x\n/* c */ SELECT\n2 FROM dual\n/\n\nSELECT 3 FROM dual",
        );
        let lines: Vec<_> = s.iter().map(|s| (s.line, s.source.as_str())).collect();
        assert_eq!(
            lines,
            [
                (3, "SELECT 1\n  FROM dual;"),
                (4, "PROMPT x"),
                (5, "/* c */ SELECT\n2 FROM dual\n/"),
                (9, "SELECT 3 FROM dual")
            ]
        );
    }

    #[test]
    fn the_shell_reads_on_inside_a_statement() {
        assert!(ends_inside_statement("SELECT 1\n"));
        assert!(ends_inside_statement("SELECT 'a;\n"));
        assert!(ends_inside_statement("SELECT \"a;\n"));
        assert!(ends_inside_statement("SELECT 1 /* a;\n"));
        assert!(ends_inside_statement("SET TIMING ON; SELECT 1\n"));
        assert!(!ends_inside_statement("SELECT 1 FROM dual;\n"));
        assert!(!ends_inside_statement("SELECT 'a;\nb' FROM dual;  \n"));
        assert!(!ends_inside_statement("SELECT 1\n/\n"));
        assert!(!ends_inside_statement("SET TIMING ON\n"));
        assert!(!ends_inside_statement("-- a comment\n"));
        assert!(!ends_inside_statement(""));
    }
}
