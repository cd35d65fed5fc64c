//! Running statements in a session: the entry points of the public API that hand a
//! statement's text to `sql` (the session itself, its state and accounting, is the
//! instance's: `instance::session`).

use crate::error::Result;
use crate::instance::Session;
use crate::sql::QueryResult;
use crate::sql::cursor::{Cursor, PreparedStatement};
use crate::types::Value;

impl Session {
    /// Runs one SQL statement (a trailing `;` is allowed). A query run again from the same
    /// text runs the plan the session kept from its last execution, unless what the plan
    /// was made from changed (the session cursor cache: `session_cached_cursors`, counted
    /// in `session cursor cache hits`); any other statement is parsed and planned anew each
    /// time. A statement whose values change from one execution to the next is better
    /// prepared once ([`Session::prepare`]), with bind variables for what changes.
    pub fn execute(&self, sql: &str) -> Result<QueryResult> {
        crate::sql::user_call(self, sql, || crate::sql::execute_cached(self, sql))
    }

    /// Runs `COPY table [(columns)] FROM STDIN [(options)]`, its rows read from `rows`
    /// (CSV as lioscope's COPY reads a file: the options `DELIMITER`, `QUOTE`, `NULL`,
    /// `HEADER`): how a server loads the rows a client sends. Needs only the INSERT
    /// privilege on the table, where `COPY ... FROM 'file'` reads the server's files and
    /// needs `CREATE ANY DIRECTORY`.
    pub fn copy_from_reader(&self, sql: &str, rows: impl std::io::Read + Send + 'static) -> Result<QueryResult> {
        *self.copy_input.borrow_mut() = Some(Box::new(rows));
        let result = self.execute(sql);
        self.copy_input.borrow_mut().take();
        result
    }

    /// Parses a statement once for running many times ([`Cursor::execute`]), with bind
    /// variables (`:name` or `:1`) where its values change from one execution to the next:
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = lioscope::Database::create(dir.path(), Default::default()).unwrap();
    /// let session = db.session();
    /// session.execute("CREATE TABLE t (id NUMBER)").unwrap();
    /// session.execute("INSERT INTO t SELECT LEVEL FROM dual CONNECT BY LEVEL <= 100").unwrap();
    /// let mut cursor = session.prepare("SELECT COUNT(*) FROM t WHERE id > :lo AND id <= :hi").unwrap();
    /// let result = cursor.execute(&[10.into(), 20.into()]).unwrap();
    /// assert_eq!(result.rows[0][0].to_string(), "10");
    /// ```
    pub fn prepare(&self, sql: &str) -> Result<Cursor<'_>> {
        Cursor::open(self, sql)
    }

    /// [`Session::prepare`] for a caller that keeps the statement beside its session
    /// rather than borrowing it: run it with [`PreparedStatement::execute`], in this
    /// session.
    pub fn prepare_statement(&self, sql: &str) -> Result<PreparedStatement> {
        PreparedStatement::parse(self, sql)
    }

    /// Runs one statement with values for its bind variables, in slot order (each name's
    /// first appearance): [`Session::prepare`] and one execution.
    pub fn execute_with(&self, sql: &str, binds: &[Value]) -> Result<QueryResult> {
        self.prepare(sql)?.execute(binds)
    }

    /// Runs a query; the same as [`Session::execute`], named for readability.
    pub fn query(&self, sql: &str) -> Result<QueryResult> {
        self.execute(sql)
    }
}
