//! Table constraints as Oracle has them: NOT NULL, CHECK, PRIMARY KEY, UNIQUE and FOREIGN
//! KEY (`REFERENCES`), declared
//! inline or out of line in CREATE TABLE, added, dropped, enabled and disabled by ALTER
//! TABLE, kept with the table in the dictionary (`TableDef::constraints`).
//!
//! Names: a constraint the statement does not name is called `SYS_C` and a data object
//! id (seven digits at least: `SYS_C0001234`), which no other object of the database has.
//! Constraint names are unique in the database (ORA-02264).
//!
//! Enforcement, where each row is checked before it is written:
//! - NOT NULL (and a primary key's columns) through the columns' `nullable` flag, which
//!   every insert path checks (`dml::RowShape`, the row encoder) and UPDATE too
//!   (ORA-01400, ORA-01407). The flag is false while an enabled NOT NULL or primary key
//!   constraint covers the column.
//! - CHECK by `row_checks::RowChecks`: each enabled condition is evaluated on the row as it will be
//!   stored (INSERT, INSERT ... SELECT, APPEND, COPY, UPDATE); FALSE refuses the row
//!   (ORA-02290), TRUE and UNKNOWN pass. A condition must give a row the same answer
//!   whenever it is evaluated, so one holding a subquery, SYSDATE, USER and the like,
//!   ROWNUM or LEVEL, or a sequence is refused when declared (ORA-02251, ORA-02436,
//!   ORA-00976, ORA-02287).
//! - PRIMARY KEY and UNIQUE by a unique index of the constraint's name (made for it, or a
//!   unique index on the same columns that existed before): the index refuses a key a
//!   committed or own row holds and waits for an uncommitted one (ORA-00001, naming the
//!   index, so the constraint). Rows whose key columns are all NULL have no entry, so
//!   UNIQUE allows any number of them.
//! - FOREIGN KEY by `foreign_keys`, once a statement's rows and index entries are
//!   written: child keys looked for in the parent key's index, parent keys that went
//!   among the children (ORA-02291, ORA-02292, ON DELETE CASCADE and SET NULL).
//!
//! This file settles declared constraints (names, columns, one primary key, the parent
//! key a foreign key refers to) and makes a new table's; ALTER TABLE is `constraint_ddl`.

use super::bind::{ident_name, position_of};
use super::row_checks::bind_condition;
use crate::catalog::{ConstraintDef, ConstraintKind, DeleteRule, IndexDef, KeyIndex, TableDef};
use crate::error::{Error, Result};
use crate::instance::Session;
use sqlparser::ast;
use sqlparser::dialect::OracleDialect;
use sqlparser::tokenizer::{Token, Tokenizer};

/// A constraint as a statement declares it, before its name is settled.
pub(super) struct Declared {
    name: Option<String>,
    kind: DeclaredKind,
    /// Column names, upper case unless quoted.
    columns: Vec<String>,
}

enum DeclaredKind {
    NotNull,
    Check(Box<ast::Expr>),
    PrimaryKey,
    Unique,
    /// `REFERENCES parent [(referenced)]`: no columns names the parent's primary key.
    ForeignKey {
        parent: String,
        referenced: Vec<String>,
        on_delete: DeleteRule,
    },
}

/// The system-named NOT NULL constraint of an identity column (Oracle makes one).
pub(super) fn identity_not_null(column: &str) -> Declared {
    Declared { name: None, kind: DeclaredKind::NotNull, columns: vec![column.to_owned()] }
}

/// The constraints declared by a column's options (NOT NULL, CHECK, PRIMARY KEY,
/// UNIQUE, each perhaps named), and whether the column is declared NOT NULL.
pub(super) fn column_constraints(column: &str, options: &[ast::ColumnOptionDef]) -> Result<Vec<Declared>> {
    let mut out = Vec::new();
    for option in options {
        let named = option.name.as_ref().map(ident_name);
        let on = |kind, inner: &Option<ast::Ident>| Declared {
            name: named.clone().or_else(|| inner.as_ref().map(ident_name)),
            kind,
            columns: vec![column.to_owned()],
        };
        match &option.option {
            ast::ColumnOption::Null if named.is_none() => {}
            ast::ColumnOption::NotNull => out.push(on(DeclaredKind::NotNull, &None)),
            ast::ColumnOption::Check(c) => {
                check_enforced(c.enforced, &option.option)?;
                // A CHECK's condition names its columns, wherever it is declared.
                out.push(Declared { columns: Vec::new(), ..on(DeclaredKind::Check(c.expr.clone()), &c.name) });
            }
            ast::ColumnOption::PrimaryKey(c) => {
                key_characteristics(c.characteristics.as_ref(), &option.option)?;
                out.push(on(DeclaredKind::PrimaryKey, &c.name));
            }
            ast::ColumnOption::Unique(c) => {
                key_characteristics(c.characteristics.as_ref(), &option.option)?;
                out.push(on(DeclaredKind::Unique, &c.name));
            }
            ast::ColumnOption::ForeignKey(fk) => {
                if !fk.columns.is_empty() {
                    return Err(Error::unsupported(format!("column list in column option {fk}")));
                }
                out.push(on(foreign_key(fk, &option.option)?, &fk.name));
            }
            other => {
                return Err(Error::Unsupported {
                    construct: format!("column option {other} on {column}"),
                    position: None,
                });
            }
        }
    }
    Ok(out)
}

/// An out-of-line constraint (`[CONSTRAINT name] PRIMARY KEY (a, b)`, ...).
pub(super) fn table_constraint(c: &ast::TableConstraint) -> Result<Declared> {
    let names = |cols: &[ast::IndexColumn]| -> Result<Vec<String>> {
        cols.iter()
            .map(|c| match &c.column.expr {
                ast::Expr::Identifier(i)
                    if c.column.options.sort.is_none() && c.column.options.nulls_first.is_none() =>
                {
                    Ok(ident_name(i))
                }
                other => Err(Error::Unsupported {
                    construct: format!("key column {other} in constraint {c}"),
                    position: position_of(other),
                }),
            })
            .collect()
    };
    let unsupported = || Error::Unsupported { construct: format!("constraint {c}"), position: None };
    Ok(match c {
        ast::TableConstraint::PrimaryKey(k) => {
            if k.index_name.is_some() || k.index_type.is_some() || !k.include.is_empty() || !k.index_options.is_empty()
            {
                return Err(unsupported());
            }
            key_characteristics(k.characteristics.as_ref(), c)?;
            Declared {
                name: k.name.as_ref().map(ident_name),
                kind: DeclaredKind::PrimaryKey,
                columns: names(&k.columns)?,
            }
        }
        ast::TableConstraint::Unique(k) => {
            if k.index_name.is_some() || k.index_type.is_some() || !k.include.is_empty() || !k.index_options.is_empty()
            {
                return Err(unsupported());
            }
            key_characteristics(k.characteristics.as_ref(), c)?;
            Declared { name: k.name.as_ref().map(ident_name), kind: DeclaredKind::Unique, columns: names(&k.columns)? }
        }
        ast::TableConstraint::Check(k) => {
            check_enforced(k.enforced, c)?;
            Declared {
                name: k.name.as_ref().map(ident_name),
                kind: DeclaredKind::Check(k.expr.clone()),
                columns: Vec::new(),
            }
        }
        ast::TableConstraint::ForeignKey(k) => Declared {
            name: k.name.as_ref().map(ident_name),
            kind: foreign_key(k, c)?,
            columns: k.columns.iter().map(ident_name).collect(),
        },
        _ => return Err(unsupported()),
    })
}

/// The parent and delete rule of a foreign key; ON UPDATE, MATCH, DEFERRABLE, ON DELETE
/// SET DEFAULT and RESTRICT are not Oracle's and are refused.
fn foreign_key(fk: &ast::ForeignKeyConstraint, what: &dyn std::fmt::Display) -> Result<DeclaredKind> {
    if fk.index_name.is_some() || fk.on_update.is_some() || fk.match_kind.is_some() {
        return Err(Error::unsupported(format!("ON UPDATE, MATCH or an index name in {what}")));
    }
    key_characteristics(fk.characteristics.as_ref(), what)?;
    let on_delete = match fk.on_delete {
        None | Some(ast::ReferentialAction::NoAction) => DeleteRule::NoAction,
        Some(ast::ReferentialAction::Cascade) => DeleteRule::Cascade,
        Some(ast::ReferentialAction::SetNull) => DeleteRule::SetNull,
        Some(other) => return Err(Error::unsupported(format!("ON DELETE {other} in {what}"))),
    };
    let parent = match fk.foreign_table.0.as_slice() {
        [ast::ObjectNamePart::Identifier(i)] => ident_name(i),
        _ => {
            return Err(Error::Unsupported {
                construct: format!("qualified name {} (lioscope has one schema)", fk.foreign_table),
                position: position_of(&fk.foreign_table),
            });
        }
    };
    Ok(DeclaredKind::ForeignKey { parent, referenced: fk.referred_columns.iter().map(ident_name).collect(), on_delete })
}

fn check_enforced(enforced: Option<bool>, what: &dyn std::fmt::Display) -> Result<()> {
    match enforced {
        Some(false) => Err(Error::unsupported(format!("NOT ENFORCED in {what}"))),
        _ => Ok(()),
    }
}

/// Refuses DEFERRABLE and the other characteristics lioscope does not keep.
fn key_characteristics(c: Option<&ast::ConstraintCharacteristics>, what: &dyn std::fmt::Display) -> Result<()> {
    match c {
        Some(c) if c.deferrable == Some(true) || c.initially.is_some() || c.enforced == Some(false) => {
            Err(Error::unsupported(format!("DEFERRABLE, INITIALLY or NOT ENFORCED in {what}")))
        }
        _ => Ok(()),
    }
}

/// A system name for a new constraint: `SYS_C` and a new data object id.
fn system_name(session: &Session) -> String {
    format!("SYS_C{:07}", session.db.catalog.next_object_id())
}

/// Settles the constraints `declared` for `table` (which may already have some): names,
/// column positions, conditions bound once to find unknown columns, one primary key.
/// Returns them in order, enabled; the table's NOT NULL flags are not yet changed.
pub(super) fn settle(session: &Session, table: &TableDef, declared: Vec<Declared>) -> Result<Vec<ConstraintDef>> {
    let mut settled: Vec<ConstraintDef> = Vec::new();
    // Foreign keys are resolved once every other constraint is settled: a
    // self-referencing one may refer to a key declared after it.
    let mut references: Vec<(usize, Vec<String>)> = Vec::new();
    let has_primary = |list: &[ConstraintDef]| list.iter().any(|c| matches!(c.kind, ConstraintKind::PrimaryKey(_)));
    for d in declared {
        let mut columns = Vec::new();
        for name in &d.columns {
            let i = table.column_index(name).ok_or_else(|| Error::UnknownName {
                kind: "column",
                name: format!("{}.{name}", table.name),
                position: None,
            })?;
            if columns.contains(&i) {
                return Err(Error::value(format!("{}.{name}", table.name), "column listed twice in a constraint"));
            }
            columns.push(i);
        }
        let kind = match d.kind {
            DeclaredKind::NotNull => ConstraintKind::NotNull,
            DeclaredKind::Check(e) => {
                let condition = e.to_string();
                refuse_unstable(&condition, d.name.as_deref(), &table.name)?;
                bind_condition(session, table, &condition)?;
                ConstraintKind::Check { condition }
            }
            DeclaredKind::PrimaryKey => {
                if has_primary(&table.constraints) || has_primary(&settled) {
                    return Err(Error::SecondPrimaryKey { table: table.name.clone() });
                }
                ConstraintKind::PrimaryKey(KeyIndex { index: None, own: true })
            }
            DeclaredKind::Unique => ConstraintKind::Unique(KeyIndex { index: None, own: true }),
            DeclaredKind::ForeignKey { parent, referenced, on_delete } => {
                references.push((settled.len(), referenced));
                ConstraintKind::ForeignKey { parent, parent_constraint: String::new(), on_delete }
            }
        };
        if columns.len() > 32 {
            return Err(Error::value(&table.name, "a key has at most 32 columns"));
        }
        let generated = d.name.is_none();
        let name = match d.name {
            Some(n) if n.is_empty() => {
                return Err(Error::Parse {
                    message: "a constraint name cannot be empty (\"\")".into(),
                    position: None,
                });
            }
            Some(n) => n,
            None => system_name(session),
        };
        let taken = table.constraint(&name).is_some() || settled.iter().any(|c| c.name == name);
        if taken || session.db.catalog.constraint_table(&name).is_some() {
            return Err(Error::ConstraintNameUsed { name });
        }
        settled.push(ConstraintDef { name, kind, columns, enabled: true, generated });
    }
    for (i, referenced) in references {
        let ConstraintKind::ForeignKey { parent, .. } = &settled[i].kind else {
            unreachable!("pushed as a foreign key")
        };
        let (key, columns) =
            super::foreign_keys::resolve(session, table, &settled, parent, &settled[i].columns, &referenced)?;
        if let ConstraintKind::ForeignKey { parent_constraint, .. } = &mut settled[i].kind {
            *parent_constraint = key;
        }
        settled[i].columns = columns;
    }
    Ok(settled)
}

/// Refuses a CHECK condition that holds what Oracle refuses there, whose truth could
/// change without the row changing or depends on other rows: a subquery (ORA-02251), a
/// function of the date, time or session (ORA-02436), ROWNUM or LEVEL (ORA-00976), a
/// sequence's NEXTVAL or CURRVAL (ORA-02287), a package's function (ORA-00904). The first
/// one in the text is named, with the constraint (`name`, or the table's when unnamed).
fn refuse_unstable(condition: &str, name: Option<&str>, table: &str) -> Result<()> {
    let tokens = Tokenizer::new(&OracleDialect {}, condition)
        .tokenize()
        .map_err(|e| Error::Parse { message: format!("CHECK condition {condition}: {e}"), position: None })?;
    let words: Vec<&Token> = tokens.iter().filter(|t| !matches!(t, Token::Whitespace(_))).collect();
    let word = |i: usize| match words.get(i) {
        Some(Token::Word(w)) if w.quote_style.is_none() => Some(w.value.to_ascii_uppercase()),
        _ => None,
    };
    for i in 0..words.len() {
        let Some(w) = word(i) else { continue };
        let after_period = i > 0 && words[i - 1] == &Token::Period;
        let (code, text, what) = match w.as_str() {
            "SELECT" => (2251, "subquery not allowed here", "a subquery".to_owned()),
            "SYSDATE" | "SYSTIMESTAMP" | "CURRENT_DATE" | "CURRENT_TIMESTAMP" | "LOCALTIMESTAMP" | "DBTIMEZONE"
            | "SESSIONTIMEZONE" | "UID" | "USER" | "USERENV"
                if !after_period =>
            {
                (2436, "date or system variable wrongly specified in CHECK constraint", w)
            }
            "ROWNUM" | "LEVEL" if !after_period => (976, "specified pseudocolumn or operator not allowed here", w),
            "NEXTVAL" | "CURRVAL" if after_period => {
                let sequence = i.checked_sub(2).and_then(word).unwrap_or_default();
                (2287, "sequence number not allowed here", format!("{sequence}.{w}"))
            }
            "DBMS_RANDOM" if !after_period => {
                let function = word(i + 2).unwrap_or_default();
                (904, "invalid identifier", format!("{w}.{function}"))
            }
            _ => continue,
        };
        let constraint = match name {
            Some(n) => format!("CHECK constraint {n}"),
            None => format!("a CHECK constraint of {table}"),
        };
        return Err(Error::CheckNotAllowed { code, text, what, constraint });
    }
    Ok(())
}

/// CREATE TABLE's constraints: settled on the new `table` (its segment made, not yet in
/// the dictionary), their NOT NULL columns marked, and the indexes of its keys made
/// (empty: the table has no rows). Returns the indexes, to be added with the table.
pub(super) fn for_new_table(session: &Session, table: &mut TableDef, declared: Vec<Declared>) -> Result<Vec<IndexDef>> {
    let constraints = settle(session, table, declared)?;
    table.constraints = constraints;
    mark_not_null(table);
    let mut indexes = Vec::new();
    let keys: Vec<usize> =
        (0..table.constraints.len()).filter(|&i| table.constraints[i].kind.key_index().is_some()).collect();
    for i in keys {
        match new_key_index(session, table, i) {
            Ok(index) => indexes.push(index),
            Err(e) => {
                drop_index_segments(session, &indexes);
                return Err(e);
            }
        }
    }
    Ok(indexes)
}

/// Frees the segments of indexes made for constraints that were not added after all.
pub(super) fn drop_index_segments(session: &Session, indexes: &[IndexDef]) {
    let ctx = session.access_context();
    for ix in indexes {
        let _ = crate::access::segments::drop_object_segment(&ctx, ix.object_id, ix.segment_header, &ix.name);
    }
}

/// Marks NOT NULL each column an enabled NOT NULL or primary key constraint covers.
pub(super) fn mark_not_null(table: &mut TableDef) {
    for c in table.constraints.iter().filter(|c| c.enabled) {
        if matches!(c.kind, ConstraintKind::NotNull | ConstraintKind::PrimaryKey(_)) {
            for &i in &c.columns {
                table.columns[i].nullable = false;
            }
        }
    }
}

/// Makes the index of key constraint `i` of `table`: a unique index of the constraint's
/// name, in a new empty segment (its entries are the caller's to build), recorded in the
/// constraint. Returned to be added to the dictionary with the table's change.
pub(super) fn new_key_index(session: &Session, table: &mut TableDef, i: usize) -> Result<IndexDef> {
    let c = &table.constraints[i];
    let ctx = session.access_context();
    let object_id = session.db.catalog.next_object_id();
    let segment_header = crate::index::create_segment(&ctx, object_id)?;
    let def = IndexDef {
        name: c.name.clone(),
        table: table.name.clone(),
        table_object_id: table.object_id,
        object_id,
        segment_header,
        columns: c.columns.clone(),
        unique: true,
        pctfree: 10,
        created: crate::types::local_now(),
        stats: None,
    };
    set_key_index(&mut table.constraints[i], KeyIndex { index: Some(def.name.clone()), own: true });
    Ok(def)
}

/// Records the index of a key constraint.
pub(super) fn set_key_index(c: &mut ConstraintDef, key: KeyIndex) {
    match &mut c.kind {
        ConstraintKind::PrimaryKey(k) | ConstraintKind::Unique(k) => *k = key,
        _ => unreachable!("only a key has an index"),
    }
}
