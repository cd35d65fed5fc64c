//! The planner: turns a SELECT into a row source and a chain of pipeline stages, and
//! records the plan as Oracle's EXPLAIN PLAN shows it.
//!
//! The stage order follows SQL's logical order, as Oracle's row sources do:
//!
//! ```text
//!  source ─► FILTER (WHERE) ─► COUNT STOPKEY (ROWNUM <= n) ─► COUNT (ROWNUM)
//!         ─► SORT AGGREGATE / HASH GROUP BY (+ HAVING) ─► project ─► HASH UNIQUE (DISTINCT)
//!         ─► SORT ORDER BY ─► FETCH FIRST / OFFSET ─► result
//! ```
//!
//! A WHERE clause over a full scan runs inside the scan's pipeline on rows still in their
//! block, and EXPLAIN shows it as the `filter(...)` of TABLE ACCESS FULL, as Oracle does.

use super::bind::{Binder, Grouping, Scope, canonical, contains_aggregate, ident_name, literal, position_of};
use super::expr::Expr;
use super::views;
use crate::db::Session;
use crate::error::{Error, Result};
use crate::exec::pipeline::ConsumeRow;
use crate::exec::{
    AggregateStage, CollectStage, FilterStage, LimitStage, ProjectStage, RowSink, RownumStage, SortKey, SortStage,
    Source, Stage,
};
use crate::types::Datum;
use sqlparser::ast::{self, BinaryOperator, Spanned};

/// One line of a plan, as EXPLAIN PLAN prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanLine {
    pub operation: String,
    pub name: String,
    /// `access(...)` / `filter(...)` texts for the predicate section.
    pub predicates: Vec<String>,
}

impl PlanLine {
    fn new(operation: &str, name: &str) -> PlanLine {
        PlanLine { operation: operation.into(), name: name.into(), predicates: Vec::new() }
    }
}

/// A planned query, ready to run.
pub struct Planned<'a> {
    pub source: Source,
    pub stages: Vec<Stage<'a>>,
    pub columns: Vec<String>,
    /// Plan lines from the source up (the last is the top of the tree).
    pub lines: Vec<PlanLine>,
    pub notes: Vec<String>,
}

impl<'a> Planned<'a> {
    /// The same plan with its result rows handed to `consume` instead of collected.
    pub fn into_sink(mut self, consume: Box<dyn ConsumeRow + 'a>) -> Planned<'a> {
        let last = self.stages.last_mut().expect("a plan ends with its collect stage");
        assert!(matches!(last, Stage::Collect(_)), "a plan ends with its collect stage");
        *last = Stage::Sink(RowSink { visible: self.columns.len(), consume });
        self
    }
}

/// Plans a query; its result rows are collected (see [`Planned::into_sink`]).
pub fn plan_query<'a>(query: &ast::Query, session: &Session, now: i64) -> Result<Planned<'a>> {
    reject_unsupported_query_parts(query)?;
    let ast::SetExpr::Select(select) = &*query.body else {
        return Err(unsupported(format!("query form {}", query.body), &*query.body));
    };
    reject_unsupported_select_parts(select)?;
    let mut b = Builder { session, now, stages: Vec::new(), lines: Vec::new(), notes: Vec::new() };
    let (source, mut scope) = b.source(select)?;
    b.where_clause(select, &mut scope)?;
    b.rownum(select, query, &mut scope);
    let order_by: Vec<&ast::Expr> = match query.order_by.as_ref().map(|o| &o.kind) {
        Some(ast::OrderByKind::Expressions(items)) => items.iter().map(|i| &i.expr).collect(),
        _ => Vec::new(),
    };
    let (exprs, columns, grouping) = b.aggregate(select, &scope, &order_by)?;
    b.project_order_and_limit(query, select, &scope, grouping.as_ref(), exprs, &columns)?;
    let mut source = source;
    if let Source::TableScan { table, columns_read } = &mut source {
        *columns_read = columns_read_by(&b.stages, table.columns.len());
    }
    let visible = columns.len();
    b.stages.push(Stage::Collect(CollectStage::new(visible)));
    b.lines.push(PlanLine::new("SELECT STATEMENT", ""));
    for hint in &select.optimizer_hints {
        b.notes.push(format!("hint ignored: {} (lioscope has no alternative access paths yet)", hint.text.trim()));
    }
    Ok(Planned { source, stages: b.stages, columns, lines: b.lines, notes: b.notes })
}

struct Builder<'s, 'a> {
    session: &'s Session,
    now: i64,
    stages: Vec<Stage<'a>>,
    lines: Vec<PlanLine>,
    notes: Vec<String>,
}

/// The source columns after the project stage, and how they are bound.
struct GroupingScope {
    grouping: Grouping,
}

impl<'a> Builder<'_, 'a> {
    fn source(&mut self, select: &ast::Select) -> Result<(Source, Scope)> {
        let relation = match select.from.as_slice() {
            [] => None,
            [one] if one.joins.is_empty() => Some(&one.relation),
            [one] => return Err(unsupported("JOIN".into(), &one.joins[0])),
            [_, second, ..] => return Err(unsupported("more than one table in FROM (joins)".into(), second)),
        };
        let Some(ast::TableFactor::Table { name, alias, args, .. }) = relation else {
            return match relation {
                None => self.dual(select, Vec::new()),
                Some(other) => Err(unsupported(format!("FROM {other}"), other)),
            };
        };
        let table_name = super::bind::function_name(name);
        let mut qualifiers = vec![table_name.clone()];
        if let Some(a) = alias {
            qualifiers.push(ident_name(&a.name));
        }
        if let Some(args) = args {
            return self.table_function(&table_name, args, alias.as_ref(), qualifiers, name);
        }
        if table_name == "DUAL" {
            return self.dual(select, qualifiers);
        }
        if !select.connect_by.is_empty() {
            return Err(unsupported("CONNECT BY other than the DUAL row generator".into(), name));
        }
        if let Some((columns, rows)) = views::fixed_view(&table_name, self.session)? {
            self.lines.push(PlanLine::new("FIXED TABLE FULL", &table_name));
            return Ok((Source::Rows(rows), Scope { names: columns, qualifiers, ..Default::default() }));
        }
        let table = self.session.db.catalog.table(&table_name).ok_or_else(|| Error::UnknownName {
            kind: "table or view",
            name: table_name.clone(),
            position: position_of(name),
        })?;
        let names = table.columns.iter().map(|c| c.name.clone()).collect();
        let char_lengths = table
            .columns
            .iter()
            .map(|c| match c.data_type {
                crate::types::DataType::Char { len } => Some(len),
                _ => None,
            })
            .collect();
        self.lines.push(PlanLine::new("TABLE ACCESS FULL", &table.name));
        let width = table.columns.len();
        Ok((
            Source::TableScan { table, columns_read: vec![true; width] },
            Scope { names, qualifiers, char_lengths, ..Default::default() },
        ))
    }

    /// DUAL, or the `CONNECT BY LEVEL <= n` row generator over it.
    fn dual(&mut self, select: &ast::Select, qualifiers: Vec<String>) -> Result<(Source, Scope)> {
        match select.connect_by.as_slice() {
            [] => {
                self.lines.push(PlanLine::new("FAST DUAL", ""));
                Ok((Source::Dual, Scope { names: vec!["DUMMY".into()], qualifiers, ..Default::default() }))
            }
            [ast::ConnectByKind::ConnectBy { relationships, .. }] if relationships.len() == 1 => {
                let rows = level_limit(&relationships[0])?;
                self.lines.push(PlanLine::new("FAST DUAL", ""));
                self.lines.push(PlanLine::new("CONNECT BY WITHOUT FILTERING", ""));
                let scope = Scope { names: vec!["LEVEL".into()], qualifiers, level: Some(0), ..Default::default() };
                Ok((Source::ConnectBy { rows }, scope))
            }
            _ => Err(Error::unsupported("CONNECT BY other than CONNECT BY LEVEL <= n over DUAL")),
        }
    }

    fn table_function(
        &mut self,
        name: &str,
        args: &ast::TableFunctionArgs,
        alias: Option<&ast::TableAlias>,
        qualifiers: Vec<String>,
        at: &ast::ObjectName,
    ) -> Result<(Source, Scope)> {
        if name != "GENERATE_SERIES" {
            return Err(Error::UnknownName { kind: "table function", name: name.into(), position: position_of(at) });
        }
        let bounds = args
            .args
            .iter()
            .map(|a| match a {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => {
                    constant_int(e, self.now, "GENERATE_SERIES")
                }
                other => Err(unsupported(format!("argument {other}"), at)),
            })
            .collect::<Result<Vec<_>>>()?;
        let [start, stop] = bounds[..] else {
            return Err(Error::value(
                "GENERATE_SERIES",
                format!("expects (start, stop), got {} arguments", bounds.len()),
            ));
        };
        let column = alias
            .and_then(|a| a.columns.first())
            .map(|c| ident_name(&c.name))
            .unwrap_or_else(|| "GENERATE_SERIES".into());
        self.lines.push(PlanLine::new("COLLECTION ITERATOR", "GENERATE_SERIES"));
        Ok((Source::Series { start, stop }, Scope { names: vec![column], qualifiers, ..Default::default() }))
    }

    fn where_clause(&mut self, select: &ast::Select, scope: &mut Scope) -> Result<()> {
        let Some(selection) = &select.selection else { return Ok(()) };
        let mut conjuncts = Vec::new();
        split_and(selection, &mut conjuncts);
        let mut stopkey: Option<u64> = None;
        let mut rest = Vec::new();
        for c in conjuncts {
            match rownum_limit(c)? {
                Some(n) => stopkey = Some(stopkey.map_or(n, |s| s.min(n))),
                None => rest.push(c),
            }
        }
        let binder = Binder { scope, now: self.now, grouping: None };
        let mut predicate: Option<Expr> = None;
        for c in rest {
            let e = binder.bind(c)?;
            predicate = Some(match predicate {
                None => e,
                Some(p) => Expr::And(Box::new(p), Box::new(e)),
            });
        }
        if let Some(p) = predicate {
            if !p.is_condition() {
                return Err(Error::InvalidValue {
                    context: "WHERE".into(),
                    message: format!(
                        "{} is a value, not a condition",
                        p.display(&scope.names).to_string().replace('"', "")
                    ),
                });
            }
            let text = format!("filter({})", p.display(&scope.names));
            match self.lines.last_mut() {
                Some(line) if line.operation == "TABLE ACCESS FULL" || line.operation == "FIXED TABLE FULL" => {
                    line.predicates.push(text)
                }
                _ => self.lines.push(PlanLine {
                    operation: "FILTER".into(),
                    name: String::new(),
                    predicates: vec![text],
                }),
            }
            self.stages.push(Stage::Filter(FilterStage::new(p)));
        }
        if let Some(n) = stopkey {
            let mut line = PlanLine::new("COUNT STOPKEY", "");
            line.predicates.push(format!("filter(ROWNUM<={n})"));
            self.lines.push(line);
            self.stages.push(Stage::Limit(LimitStage::new(0, Some(n))));
        }
        Ok(())
    }

    /// Adds the ROWNUM column when the select list or ORDER BY reads it.
    fn rownum(&mut self, select: &ast::Select, query: &ast::Query, scope: &mut Scope) {
        let mut texts: Vec<String> = select.projection.iter().map(|p| p.to_string()).collect();
        if let Some(o) = &query.order_by {
            texts.push(o.to_string());
        }
        if !texts.iter().any(|t| mentions_rownum(t)) {
            return;
        }
        let width = scope.names.len();
        self.stages.push(Stage::Rownum(RownumStage { width, next: 0 }));
        self.lines.push(PlanLine::new("COUNT", ""));
        scope.names.push("ROWNUM".into());
        scope.rownum = Some(width);
    }

    /// Adds aggregation, if the query aggregates; returns the select-list expressions (over
    /// the aggregate's output when it does), the output column names and the grouping.
    fn aggregate(
        &mut self,
        select: &ast::Select,
        scope: &Scope,
        order_by: &[&ast::Expr],
    ) -> Result<(Vec<Expr>, Vec<String>, Option<GroupingScope>)> {
        let group_by: &[ast::Expr] = match &select.group_by {
            ast::GroupByExpr::Expressions(exprs, mods) if mods.is_empty() => exprs,
            other => return Err(Error::unsupported(format!("GROUP BY form {other}"))),
        };
        let aggregate = !group_by.is_empty()
            || select.having.is_some()
            || select.projection.iter().any(|p| matches!(p, ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } if contains_aggregate(e)));
        let source_binder = Binder { scope, now: self.now, grouping: None };
        let (exprs, names, grouping) = if aggregate {
            let grouping = Grouping { keys: group_by.iter().map(canonical).collect(), ..Default::default() };
            let keys = group_by.iter().map(|g| source_binder.bind(g)).collect::<Result<Vec<_>>>()?;
            let post = Binder { scope, now: self.now, grouping: Some(&grouping) };
            let (exprs, names) = self.select_list(select, &post, scope)?;
            let having = select.having.as_ref().map(|h| post.bind(h)).transpose()?;
            // ORDER BY may name aggregates the select list does not: register them now,
            // while the aggregate stage is still being built.
            for e in order_by.iter().filter(|e| contains_aggregate(e)) {
                post.bind(e)?;
            }
            let calls = grouping.aggregates.borrow().clone();
            self.lines.push(PlanLine::new(if keys.is_empty() { "SORT AGGREGATE" } else { "HASH GROUP BY" }, ""));
            if let Some(h) = &having {
                let mut names: Vec<String> = group_by.iter().map(canonical).collect();
                names.extend(calls.iter().map(|c| c.text.replace(' ', "")));
                self.lines
                    .last_mut()
                    .expect("just pushed")
                    .predicates
                    .push(format!("filter({})", h.display(&names).to_string().replace('"', "")));
            }
            self.stages.push(Stage::Aggregate(AggregateStage::new(keys, calls, having)));
            (exprs, names, Some(GroupingScope { grouping }))
        } else {
            let (exprs, names) = self.select_list(select, &source_binder, scope)?;
            (exprs, names, None)
        };
        Ok((exprs, names, grouping))
    }
    fn select_list(
        &self,
        select: &ast::Select,
        binder: &Binder<'_>,
        scope: &Scope,
    ) -> Result<(Vec<Expr>, Vec<String>)> {
        let mut exprs = Vec::new();
        let mut names = Vec::new();
        for item in &select.projection {
            match item {
                ast::SelectItem::UnnamedExpr(e) => {
                    exprs.push(binder.bind(e)?);
                    names.push(output_name(e));
                }
                ast::SelectItem::ExprWithAlias { expr, alias } => {
                    exprs.push(binder.bind(expr)?);
                    names.push(ident_name(alias));
                }
                ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..) => {
                    if binder.grouping.is_some() {
                        return Err(Error::InvalidValue {
                            context: "*".into(),
                            message: "not a GROUP BY expression".into(),
                        });
                    }
                    for (i, n) in scope.names.iter().enumerate() {
                        if Some(i) != scope.rownum {
                            exprs.push(Expr::Column(i));
                            names.push(n.clone());
                        }
                    }
                }
                other => return Err(Error::unsupported(format!("select item {other}"))),
            }
        }
        Ok((exprs, names))
    }

    /// Adds the projection (select list plus hidden ORDER BY keys), DISTINCT, the sort
    /// and FETCH FIRST / OFFSET / LIMIT.
    fn project_order_and_limit(
        &mut self,
        query: &ast::Query,
        select: &ast::Select,
        scope: &Scope,
        grouping: Option<&GroupingScope>,
        mut exprs: Vec<Expr>,
        columns: &[String],
    ) -> Result<()> {
        let visible = exprs.len();
        let mut keys = Vec::new();
        if let Some(order_by) = &query.order_by {
            let ast::OrderByKind::Expressions(items) = &order_by.kind else {
                return Err(Error::unsupported(format!("{order_by}")));
            };
            for item in items {
                let descending = matches!(item.options.sort, Some(ast::OrderBySort::Desc));
                let nulls_first = item.options.nulls_first.unwrap_or(descending);
                let column = self.order_key(&item.expr, scope, grouping, &mut exprs, columns, visible)?;
                keys.push(SortKey { column, descending, nulls_first });
            }
        }
        let distinct = match &select.distinct {
            None | Some(ast::Distinct::All) => false,
            Some(ast::Distinct::Distinct) => true,
            Some(other) => return Err(Error::unsupported(format!("{other}"))),
        };
        if distinct && exprs.len() > visible {
            return Err(Error::InvalidValue {
                context: "ORDER BY".into(),
                message: "ORDER BY items must appear in the select list if SELECT DISTINCT is specified".into(),
            });
        }
        let width = exprs.len();
        self.stages.push(Stage::Project(ProjectStage::new(exprs)));
        if distinct {
            let keys = (0..visible).map(Expr::Column).collect();
            self.stages.push(Stage::Aggregate(AggregateStage::new(keys, Vec::new(), None)));
            self.lines.push(PlanLine::new("HASH UNIQUE", ""));
        }
        if !keys.is_empty() {
            self.stages.push(Stage::Sort(SortStage { keys, width, rows: Vec::new(), sorted: 0 }));
            self.lines.push(PlanLine::new("SORT ORDER BY", ""));
        }
        self.limit(query)
    }

    /// The output column an ORDER BY item sorts on: a select-list position, an output
    /// name, a select-list expression, or a hidden column added for it.
    fn order_key(
        &self,
        e: &ast::Expr,
        scope: &Scope,
        grouping: Option<&GroupingScope>,
        exprs: &mut Vec<Expr>,
        columns: &[String],
        visible: usize,
    ) -> Result<usize> {
        if let ast::Expr::Value(v) = e
            && let Datum::Int(k) = literal(&v.value, e)?
        {
            return usize::try_from(k).ok().filter(|k| (1..=visible).contains(k)).map(|k| k - 1).ok_or_else(|| {
                Error::InvalidValue {
                    context: "ORDER BY".into(),
                    message: format!("position {k} is not in the select list"),
                }
            });
        }
        if let ast::Expr::Identifier(ident) = e {
            let name = ident_name(ident);
            if let Some(i) = columns.iter().position(|c| *c == name) {
                return Ok(i);
            }
        }
        let binder = Binder { scope, now: self.now, grouping: grouping.map(|g| &g.grouping) };
        let bound = binder.bind(e)?;
        if let Some(i) = exprs[..visible].iter().position(|x| *x == bound) {
            return Ok(i);
        }
        exprs.push(bound);
        Ok(exprs.len() - 1)
    }

    fn limit(&mut self, query: &ast::Query) -> Result<()> {
        let (mut limit, mut offset) = (None, 0u64);
        match &query.limit_clause {
            None => {}
            Some(ast::LimitClause::LimitOffset { limit: l, offset: o, limit_by }) if limit_by.is_empty() => {
                limit = l.as_ref().map(|e| constant_count(e, self.now, "LIMIT")).transpose()?;
                offset = o.as_ref().map(|o| constant_count(&o.value, self.now, "OFFSET")).transpose()?.unwrap_or(0);
            }
            Some(other) => return Err(Error::unsupported(format!("{other}"))),
        }
        if let Some(fetch) = &query.fetch {
            if fetch.percent || fetch.with_ties {
                return Err(Error::unsupported("FETCH FIRST ... PERCENT / WITH TIES"));
            }
            let n =
                fetch.quantity.as_ref().map(|e| constant_count(e, self.now, "FETCH FIRST")).transpose()?.unwrap_or(1);
            limit = Some(limit.map_or(n, |l| l.min(n)));
        }
        if limit.is_some() || offset > 0 {
            let mut line = PlanLine::new("LIMIT", "");
            line.predicates.push(format!(
                "filter(row number between {} and {})",
                offset + 1,
                limit.map_or("end".into(), |l| (offset + l).to_string())
            ));
            self.lines.push(line);
            self.stages.push(Stage::Limit(LimitStage::new(offset, limit)));
        }
        Ok(())
    }
}

/// Which source columns the plan reads: those any stage reads before the first stage
/// that builds new rows (the scan locates only these). A stage not known here counts as
/// reading every column.
fn columns_read_by(stages: &[Stage<'_>], width: usize) -> Vec<bool> {
    let mut read = vec![false; width];
    let mut see = |i: usize| {
        if let Some(r) = read.get_mut(i) {
            *r = true;
        }
    };
    for stage in stages {
        match stage {
            Stage::Filter(f) => f.predicate.visit_columns(&mut see),
            Stage::Limit(_) => {}
            Stage::Aggregate(a) => {
                a.group_by.iter().for_each(|e| e.visit_columns(&mut see));
                a.calls.iter().filter_map(|c| c.arg.as_ref()).for_each(|e| e.visit_columns(&mut see));
                return read;
            }
            Stage::Project(p) => {
                p.exprs.iter().for_each(|e| e.visit_columns(&mut see));
                return read;
            }
            _ => return vec![true; width],
        }
    }
    read
}

fn reject_unsupported_select_parts(select: &ast::Select) -> Result<()> {
    let unsupported_part = |name: &str| Err(Error::unsupported(name.to_owned()));
    if select.top.is_some() {
        return unsupported_part("TOP");
    }
    if select.into.is_some() {
        return unsupported_part("SELECT ... INTO");
    }
    if !select.lateral_views.is_empty()
        || select.prewhere.is_some()
        || !select.cluster_by.is_empty()
        || !select.distribute_by.is_empty()
    {
        return unsupported_part("LATERAL VIEW / PREWHERE / CLUSTER BY / DISTRIBUTE BY");
    }
    if !select.sort_by.is_empty()
        || !select.named_window.is_empty()
        || select.qualify.is_some()
        || select.value_table_mode.is_some()
    {
        return unsupported_part("SORT BY / WINDOW / QUALIFY / AS VALUE");
    }
    if select.exclude.is_some() || select.select_modifiers.is_some() {
        return unsupported_part("select modifiers");
    }
    for from in &select.from {
        if let ast::TableFactor::Table {
            sample,
            with_hints,
            version,
            partitions,
            json_path,
            index_hints,
            with_ordinality,
            ..
        } = &from.relation
        {
            if sample.is_some() {
                return unsupported_part("SAMPLE");
            }
            if !with_hints.is_empty()
                || version.is_some()
                || !partitions.is_empty()
                || json_path.is_some()
                || !index_hints.is_empty()
                || *with_ordinality
            {
                return Err(Error::unsupported(format!("table clause in FROM {}", from.relation)));
            }
        }
    }
    Ok(())
}

fn reject_unsupported_query_parts(query: &ast::Query) -> Result<()> {
    if let Some(with) = &query.with {
        return Err(unsupported("WITH".into(), with));
    }
    if !query.locks.is_empty() {
        return Err(Error::unsupported("FOR UPDATE"));
    }
    if query.for_clause.is_some()
        || query.settings.is_some()
        || query.format_clause.is_some()
        || !query.pipe_operators.is_empty()
    {
        return Err(Error::unsupported(format!("clause of {query}")));
    }
    Ok(())
}

fn unsupported(construct: String, at: &impl Spanned) -> Error {
    Error::Unsupported { construct, position: position_of(at) }
}

/// Flattens a tree of ANDs.
pub(crate) fn split_and<'e>(e: &'e ast::Expr, out: &mut Vec<&'e ast::Expr>) {
    match e {
        ast::Expr::BinaryOp { left, op: BinaryOperator::And, right } => {
            split_and(left, out);
            split_and(right, out);
        }
        ast::Expr::Nested(inner) => split_and(inner, out),
        other => out.push(other),
    }
}

fn is_ident(e: &ast::Expr, name: &str) -> bool {
    matches!(e, ast::Expr::Identifier(i) if i.quote_style.is_none() && i.value.eq_ignore_ascii_case(name))
}

/// `ROWNUM <= n`, `ROWNUM < n`, `n >= ROWNUM`, `n > ROWNUM`: the row limit n.
pub(crate) fn rownum_limit(e: &ast::Expr) -> Result<Option<u64>> {
    let ast::Expr::BinaryOp { left, op, right } = e else { return Ok(None) };
    let (op, bound) = if is_ident(left, "ROWNUM") {
        (op.clone(), right)
    } else if is_ident(right, "ROWNUM") {
        let flipped = match op {
            BinaryOperator::GtEq => BinaryOperator::LtEq,
            BinaryOperator::Gt => BinaryOperator::Lt,
            other => other.clone(),
        };
        (flipped, left)
    } else {
        return Ok(None);
    };
    let n = constant_int(bound, 0, "ROWNUM")?;
    match op {
        BinaryOperator::LtEq => Ok(Some(n.max(0) as u64)),
        BinaryOperator::Lt => Ok(Some(n.saturating_sub(1).max(0) as u64)),
        _ => Err(unsupported("a ROWNUM condition other than ROWNUM < n or ROWNUM <= n".into(), e)),
    }
}

/// `LEVEL <= n` or `LEVEL < n` of the CONNECT BY row generator.
fn level_limit(e: &ast::Expr) -> Result<i64> {
    if let ast::Expr::BinaryOp { left, op, right } = e
        && is_ident(left, "LEVEL")
    {
        {
            let n = constant_int(right, 0, "CONNECT BY")?;
            match op {
                // Oracle's generator always returns its root row.
                BinaryOperator::LtEq => return Ok(n.max(1)),
                BinaryOperator::Lt => return Ok(n.saturating_sub(1).max(1)),
                _ => {}
            }
        }
    }
    Err(unsupported("CONNECT BY other than LEVEL <= n".into(), e))
}

/// A constant whole-number expression.
fn constant_int(e: &ast::Expr, now: i64, context: &str) -> Result<i64> {
    let scope = Scope::default();
    let bound = Binder { scope: &scope, now, grouping: None }.bind(e)?;
    match bound {
        Expr::Literal(v) => v.to_i64(context)?.ok_or_else(|| Error::value(context, "expects a number, got NULL")),
        _ => Err(Error::value(context, format!("expects a constant, got {e}"))),
    }
}

fn constant_count(e: &ast::Expr, now: i64, context: &str) -> Result<u64> {
    let n = constant_int(e, now, context)?;
    u64::try_from(n).map_err(|_| Error::value(context, format!("{n} is negative")))
}

fn mentions_rownum(text: &str) -> bool {
    text.to_ascii_uppercase()
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '#'))
        .any(|w| w == "ROWNUM")
}

/// The heading of an unaliased select item, as Oracle shows it.
fn output_name(e: &ast::Expr) -> String {
    match e {
        ast::Expr::Identifier(i) => ident_name(i),
        ast::Expr::CompoundIdentifier(parts) => parts.last().map(ident_name).unwrap_or_default(),
        other => heading_text(&other.to_string()),
    }
}

/// An expression as a column heading: upper case and without blanks, except inside
/// quoted strings.
fn heading_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut quoted = false;
    for c in text.chars() {
        if c == '\'' {
            quoted = !quoted;
        }
        match c {
            ' ' if !quoted => {}
            c if quoted => out.push(c),
            c => out.push(c.to_ascii_uppercase()),
        }
    }
    out
}

/// Formats plan lines (source first) as DBMS_XPLAN shows them.
pub fn format_plan(lines: &[PlanLine], notes: &[String]) -> Vec<String> {
    let top_down: Vec<&PlanLine> = lines.iter().rev().collect();
    let ops: Vec<String> =
        top_down.iter().enumerate().map(|(depth, l)| format!("{}{}", " ".repeat(depth), l.operation)).collect();
    let op_w = ops.iter().map(String::len).max().unwrap_or(9).max(9);
    let name_w = top_down.iter().map(|l| l.name.len()).max().unwrap_or(4).max(4);
    let rule = "-".repeat(op_w + name_w + 13);
    let mut out = vec![rule.clone(), format!("| Id  | {:<op_w$} | {:<name_w$} |", "Operation", "Name"), rule.clone()];
    for (id, (l, op)) in top_down.iter().zip(&ops).enumerate() {
        let star = if l.predicates.is_empty() { ' ' } else { '*' };
        out.push(format!("|{star}{id:>3} | {op:<op_w$} | {:<name_w$} |", l.name));
    }
    out.push(rule);
    let predicates: Vec<String> = top_down
        .iter()
        .enumerate()
        .flat_map(|(id, l)| l.predicates.iter().map(move |p| format!("{id:>4} - {p}")))
        .collect();
    if !predicates.is_empty() {
        out.push(String::new());
        out.push("Predicate Information (identified by operation id):".into());
        out.push("---------------------------------------------------".into());
        out.extend(predicates);
    }
    if !notes.is_empty() {
        out.push(String::new());
        out.push("Note".into());
        out.push("-----".into());
        out.extend(notes.iter().map(|n| format!("   - {n}")));
    }
    out
}
