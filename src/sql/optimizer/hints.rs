//! Optimizer hints: the text of a `/*+ ... */` comment, parsed into the hints lioscope
//! knows. A hint's table is its alias or name in FROM; a hint naming a table not in the
//! query, an index the table does not have, or a word lioscope does not know is never
//! dropped silently: it is reported in the plan's notes, as Oracle's hint report does.

/// Which indexes a hint names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexChoice {
    /// Any index of the table (`INDEX(t)`).
    Any,
    /// Indexes by name (`INDEX(t ix1 ix2)`).
    Named(Vec<String>),
    /// The index on these leading columns (`INDEX(t (col1, col2))`).
    Columns(Vec<String>),
}

/// One hint lioscope knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HintKind {
    Full,
    /// INDEX, INDEX_ASC, INDEX_DESC (`descending`).
    Index {
        choice: IndexChoice,
        descending: Option<bool>,
    },
    NoIndex(IndexChoice),
    IndexFfs(IndexChoice),
    GatherPlanStatistics,
    /// INMEMORY(t): a full scan, from the column store.
    InMemory,
    /// NO_INMEMORY(t): never from the column store.
    NoInMemory,
    /// INMEMORY_PRUNING(t) / NO_INMEMORY_PRUNING(t): whether min/max may skip units.
    InMemoryPruning(bool),
    /// APPEND (INSERT): a direct-path load, into compression units for a compressed table.
    Append,
    /// ORDERED: the tables joined in the FROM clause's order.
    Ordered,
    /// LEADING(t1 t2 ...): these tables joined first, in this order.
    Leading(Vec<String>),
    /// USE_NL(t), USE_HASH(t), USE_MERGE(t): the join of table `t` (to the tables joined
    /// before it) by a nested loop, a hash join or a sort-merge join.
    UseNl,
    UseHash,
    UseMerge,
    /// NO_USE_NL(t), NO_USE_HASH(t), NO_USE_MERGE(t): any method but that one.
    NoUseNl,
    NoUseHash,
    NoUseMerge,
    /// SWAP_JOIN_INPUTS(t): the hash join of `t` builds its table from `t`.
    SwapJoinInputs,
    /// NO_SWAP_JOIN_INPUTS(t): the hash join of `t` builds its table from the tables
    /// joined before `t`, whichever input is the smaller.
    NoSwapJoinInputs,
    /// PX_JOIN_FILTER(t) / NO_PX_JOIN_FILTER(t): a join filter on the scan of `t`, the
    /// probe side of a hash join, always / never.
    PxJoinFilter,
    NoPxJoinFilter,
    /// UNNEST / NO_UNNEST, in a subquery: whether it is unnested into a semi or anti
    /// join, whatever the costs say.
    Unnest(bool),
    /// HASH_SJ, NL_SJ, MERGE_SJ (and _AJ), in a subquery: the method of the semi (anti)
    /// join it is unnested into.
    SubqueryJoin(SubqueryJoinMethod),
    /// MATERIALIZE / INLINE, in a WITH query: whether its rows are loaded once into a
    /// temporary table or it is planned anew where each reference reads it.
    Materialize(bool),
}

/// The method a subquery's semi or anti join hint asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubqueryJoinMethod {
    Hash,
    NestedLoops,
    Merge,
}

impl HintKind {
    /// Whether the hint is about joins (their order and methods), not a table's access.
    pub fn is_join_hint(&self) -> bool {
        matches!(
            self,
            HintKind::Ordered
                | HintKind::Leading(_)
                | HintKind::UseNl
                | HintKind::UseHash
                | HintKind::UseMerge
                | HintKind::NoUseNl
                | HintKind::NoUseHash
                | HintKind::NoUseMerge
                | HintKind::SwapJoinInputs
                | HintKind::NoSwapJoinInputs
                | HintKind::PxJoinFilter
                | HintKind::NoPxJoinFilter
        )
    }
}

/// A parsed hint, with its text for the notes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hint {
    pub kind: HintKind,
    /// The table alias or name the hint names (upper case); `None` for statement hints.
    pub table: Option<String>,
    pub text: String,
}

/// The hints of one comment, and the words that were not hints lioscope knows.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Hints {
    pub hints: Vec<Hint>,
    /// Notes on what was not understood.
    pub ignored: Vec<String>,
}

impl Hints {
    pub fn gather_plan_statistics(&self) -> bool {
        self.hints.iter().any(|h| h.kind == HintKind::GatherPlanStatistics)
    }

    pub fn append(&self) -> bool {
        self.hints.iter().any(|h| h.kind == HintKind::Append)
    }
}

/// Parses the text of hint comments.
pub fn parse(texts: &[&str]) -> Hints {
    let mut out = Hints::default();
    for text in texts {
        let tokens = tokenize(text);
        let mut i = 0;
        while i < tokens.len() {
            let word = &tokens[i];
            // The argument list, if any: tokens between the matching parentheses.
            let (args, next) = if tokens.get(i + 1).map(String::as_str) == Some("(") {
                match matching(&tokens, i + 1) {
                    Some(end) => (tokens[i + 2..end].to_vec(), end + 1),
                    None => {
                        out.ignored.push(format!(
                            "hint ignored: {}{} (unbalanced parentheses)",
                            tokens[i],
                            display_args(&tokens[i + 1..])
                        ));
                        break;
                    }
                }
            } else {
                (Vec::new(), i + 1)
            };
            let text = if args.is_empty() && next == i + 1 {
                word.clone()
            } else {
                format!("{word}({})", display_args(&args))
            };
            match join_hint(word, &args).or_else(|| hint(word, &args).map(|h| h.map(|one| vec![one])).transpose()) {
                Some(Ok(list)) => {
                    out.hints.extend(list.into_iter().map(|(kind, table)| Hint { kind, table, text: text.clone() }))
                }
                None => out.ignored.push(format!("hint ignored: {text} (not a hint lioscope knows)")),
                Some(Err(why)) => out.ignored.push(format!("hint ignored: {text} ({why})")),
            }
            i = next;
        }
    }
    out
}

/// A hint about joins: one per table it names (`USE_NL(a b)` is two).
type Parsed = Result<Vec<(HintKind, Option<String>)>, String>;

fn join_hint(word: &str, args: &[String]) -> Option<Parsed> {
    let tables: Vec<String> = args.iter().filter(|a| *a != ",").cloned().collect();
    let per_table = |kind: HintKind| -> Parsed {
        if tables.is_empty() || tables.iter().any(|t| t == "(" || t == ")") {
            return Err("expects one or more tables".into());
        }
        Ok(tables.iter().map(|t| (kind.clone(), Some(t.clone()))).collect())
    };
    Some(match word {
        "ORDERED" if args.is_empty() => Ok(vec![(HintKind::Ordered, None)]),
        "LEADING" => match per_table(HintKind::Ordered) {
            Ok(_) => Ok(vec![(HintKind::Leading(tables.clone()), None)]),
            Err(e) => Err(e),
        },
        "USE_NL" => per_table(HintKind::UseNl),
        "USE_HASH" => per_table(HintKind::UseHash),
        "USE_MERGE" => per_table(HintKind::UseMerge),
        "NO_USE_NL" => per_table(HintKind::NoUseNl),
        "NO_USE_HASH" => per_table(HintKind::NoUseHash),
        "NO_USE_MERGE" => per_table(HintKind::NoUseMerge),
        "SWAP_JOIN_INPUTS" => per_table(HintKind::SwapJoinInputs),
        "NO_SWAP_JOIN_INPUTS" => per_table(HintKind::NoSwapJoinInputs),
        "PX_JOIN_FILTER" => per_table(HintKind::PxJoinFilter),
        "NO_PX_JOIN_FILTER" => per_table(HintKind::NoPxJoinFilter),
        _ => return None,
    })
}

fn hint(word: &str, args: &[String]) -> Result<Option<(HintKind, Option<String>)>, String> {
    let table_and_choice = |args: &[String]| -> Result<(String, IndexChoice), String> {
        let Some((table, rest)) = args.split_first() else { return Err("names no table".into()) };
        if table == "(" || table == ")" {
            return Err("names no table".into());
        }
        let choice = match rest {
            [] => IndexChoice::Any,
            [open, cols @ .., close] if open == "(" && close == ")" => {
                let cols: Vec<String> = cols.iter().filter(|c| *c != ",").cloned().collect();
                if cols.is_empty() {
                    return Err("empty column list".into());
                }
                IndexChoice::Columns(cols)
            }
            names if names.iter().all(|n| n != "(" && n != ")") => {
                IndexChoice::Named(names.iter().filter(|n| *n != ",").cloned().collect())
            }
            _ => return Err("expects (table index ...) or (table (column, ...))".into()),
        };
        Ok((table.clone(), choice))
    };
    Ok(Some(match word {
        "FULL" => match args {
            [table] => (HintKind::Full, Some(table.clone())),
            _ => return Err("expects one table".into()),
        },
        "INDEX" | "INDEX_ASC" | "INDEX_DESC" | "INDEX_RS_ASC" | "INDEX_RS_DESC" => {
            let (table, choice) = table_and_choice(args)?;
            let descending = match word {
                "INDEX" => None,
                w => Some(w.ends_with("DESC")),
            };
            (HintKind::Index { choice, descending }, Some(table))
        }
        "NO_INDEX" => {
            let (table, choice) = table_and_choice(args)?;
            (HintKind::NoIndex(choice), Some(table))
        }
        "INDEX_FFS" => {
            let (table, choice) = table_and_choice(args)?;
            (HintKind::IndexFfs(choice), Some(table))
        }
        "GATHER_PLAN_STATISTICS" if args.is_empty() => (HintKind::GatherPlanStatistics, None),
        "UNNEST" | "NO_UNNEST" if args.is_empty() => (HintKind::Unnest(word == "UNNEST"), None),
        "MATERIALIZE" | "INLINE" if args.is_empty() => (HintKind::Materialize(word == "MATERIALIZE"), None),
        "HASH_SJ" | "HASH_AJ" if args.is_empty() => (HintKind::SubqueryJoin(SubqueryJoinMethod::Hash), None),
        "NL_SJ" | "NL_AJ" if args.is_empty() => (HintKind::SubqueryJoin(SubqueryJoinMethod::NestedLoops), None),
        "MERGE_SJ" | "MERGE_AJ" if args.is_empty() => (HintKind::SubqueryJoin(SubqueryJoinMethod::Merge), None),
        "APPEND" if args.is_empty() => (HintKind::Append, None),
        "INMEMORY" | "NO_INMEMORY" | "INMEMORY_PRUNING" | "NO_INMEMORY_PRUNING" => {
            let [table] = args else { return Err("expects one table".into()) };
            let kind = match word {
                "INMEMORY" => HintKind::InMemory,
                "NO_INMEMORY" => HintKind::NoInMemory,
                w => HintKind::InMemoryPruning(!w.starts_with("NO_")),
            };
            (kind, Some(table.clone()))
        }
        _ => return Ok(None),
    }))
}

/// Words (upper case unless quoted), parentheses and commas.
fn tokenize(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        match c {
            '(' | ')' | ',' => {
                out.push(c.to_string());
                chars.next();
            }
            '"' => {
                chars.next();
                let mut word = String::new();
                for c in chars.by_ref() {
                    if c == '"' {
                        break;
                    }
                    word.push(c);
                }
                out.push(word);
            }
            c if c.is_whitespace() => {
                chars.next();
            }
            _ => {
                let mut word = String::new();
                while let Some(&c) = chars.peek() {
                    if c.is_whitespace() || "(),\"".contains(c) {
                        break;
                    }
                    word.push(c.to_ascii_uppercase());
                    chars.next();
                }
                out.push(word);
            }
        }
    }
    out
}

/// The index of the parenthesis closing the one at `open`.
fn matching(tokens: &[String], open: usize) -> Option<usize> {
    let mut depth = 0;
    for (i, t) in tokens.iter().enumerate().skip(open) {
        match t.as_str() {
            "(" => depth += 1,
            ")" => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

fn display_args(args: &[String]) -> String {
    let mut out = String::new();
    for (i, a) in args.iter().enumerate() {
        let prev = i.checked_sub(1).map(|p| args[p].as_str());
        if i > 0 && a != ")" && a != "," && prev != Some("(") {
            out.push(' ');
        }
        out.push_str(a);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_hints_lioscope_knows() {
        let h = parse(&[" INDEX(c cust_postal_ix) full(t2) no_index(c) INDEX_FFS(c ix) gather_plan_statistics "]);
        assert_eq!(h.ignored, Vec::<String>::new());
        assert_eq!(h.hints.len(), 5);
        assert_eq!(
            h.hints[0].kind,
            HintKind::Index { choice: IndexChoice::Named(vec!["CUST_POSTAL_IX".into()]), descending: None }
        );
        assert_eq!(h.hints[0].table.as_deref(), Some("C"));
        assert_eq!(h.hints[0].text, "INDEX(C CUST_POSTAL_IX)");
        assert_eq!(h.hints[1].kind, HintKind::Full);
        assert_eq!(h.hints[2].kind, HintKind::NoIndex(IndexChoice::Any));
        assert!(h.gather_plan_statistics());
    }

    #[test]
    fn index_by_columns_and_descending() {
        let h = parse(&["INDEX_DESC(c (cust_id, cust_city))"]);
        assert_eq!(
            h.hints[0].kind,
            HintKind::Index {
                choice: IndexChoice::Columns(vec!["CUST_ID".into(), "CUST_CITY".into()]),
                descending: Some(true)
            }
        );
        assert_eq!(h.hints[0].text, "INDEX_DESC(C (CUST_ID, CUST_CITY))");
    }

    #[test]
    fn unknown_and_malformed_hints_are_reported() {
        let h = parse(&["PARALLEL(c 4) FULL INDEX(c"]);
        assert!(h.hints.is_empty());
        assert_eq!(h.ignored.len(), 3, "{:?}", h.ignored);
        assert!(h.ignored[0].contains("PARALLEL(C 4)") && h.ignored[0].contains("not a hint lioscope knows"));
        assert!(h.ignored[1].contains("FULL") && h.ignored[1].contains("expects one table"));
        assert!(h.ignored[2].contains("unbalanced"));
    }
}
